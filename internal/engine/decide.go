package engine

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// factsOf is what the stack's row for res (had: there is one) tells plan.Decide; gone says
// a replacement upstream destroyed it earlier in this run. The diff, Unchanged and Triggered
// are for the caller to add.
func factsOf(pol template.DialectPolicy, res *template.Resource, row state.Resource, had, gone bool) plan.Facts {
	f := plan.Facts{Name: res.Name, Data: res.Mode == template.Data, PlansReplacements: pol.PlansReplacements,
		CreateBeforeDestroy: res.CreateBeforeDestroy, ProviderOrdersReplace: res.ProviderOrdersReplace, PreventDestroy: protects(pol, res, row)} // protect.go
	switch {
	case !had || gone:
	case pol.PlansReplacements && (row.ID == "" || row.Status == "DELETE_COMPLETE"):
		// Nothing to act on: its create made nothing, or a replacement destroyed it before a restart.
	case row.Status == "CREATE_FAILED" && pol.UpdatesFailedCreates:
		// Pulumi keeps it with its init errors and updates it until it is healthy.
		f.Exists, f.Failed = true, true
	case row.Status == "CREATE_FAILED":
		// A failed create that left an object behind is tainted: terraform replaces it. A
		// custom resource's failed create is simply made again.
		f.Exists, f.Tainted = pol.PlansReplacements, pol.PlansReplacements
	default:
		f.Exists, f.Failed = true, row.Status == "UPDATE_FAILED"
	}
	return f
}

// ignoring is the configuration props of res with what its ignore_changes names kept as in
// old, the stored one, as terraform plans it.
func ignoring(res *template.Resource, props, old cty.Value) cty.Value {
	switch {
	case res.IgnoreAllChanges:
		return old
	case len(res.IgnoreChanges) > 0:
		return value.WithPaths(props, old, res.IgnoreChanges)
	}
	return props
}

// answerOf is the part of a provider's diff that decides a step.
func answerOf(d provider.DiffResponse) *plan.Answer {
	return &plan.Answer{Changed: d.Changed, Replace: d.Replace, MayReplace: d.MayReplace, DeleteBeforeReplace: d.DeleteBeforeReplace}
}

// decideFailure turns plan.Decide's refusal (prevent_destroy) into a diagnostic at res.
func decideFailure(st *template.Stack, res *template.Resource, err error) diag.Diagnostics {
	return diag.Diagnostics{diag.Errorf(res.Range, resourcePath(st, res), "%s", refusal(st.Policy, res.Name, err))}
}

// apiChange is how a preview shows step s.
func apiChange(s plan.Step, details []api.PropertyChange) api.Change {
	ch := api.Change{LogicalID: s.Resource, PhysicalID: s.PhysicalID, Type: s.Type, Importing: s.Importing, MovedFrom: s.MovedFrom, Details: details}
	switch s.Action {
	case plan.Create:
		ch.Action = api.ActionAdd
	case plan.Update:
		ch.Action, ch.Replacement = api.ActionModify, api.ReplaceFalse
		if s.Replacement != "" {
			ch.Replacement = s.Replacement
		}
	case plan.Replace:
		ch.Action, ch.Replacement = api.ActionModify, api.ReplaceTrue
	case plan.Read:
		ch.Action = api.ActionRead
	case plan.Delete:
		ch.Action = api.ActionRemove
	case plan.Forget:
		ch.Action = api.ActionForget
	default:
		ch.Action = api.ActionNoop
	}
	return ch
}
