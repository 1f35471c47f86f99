package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// baseOf is what a plan of req for the stack row prior (and its resources list) is made
// from; a fresh stack (none, or a deleted one) has an empty state.
func baseOf(req api.DeployRequest, st *template.Stack, prior state.Stack, list []state.Resource, fresh bool) plan.Base {
	req, _ = storedRequest(req, st) // ephemeral values are not saved with a plan, and may differ
	// What the template is made of; options that do not change the steps (timeout,
	// parallelism, rollback) stay free to differ between the preview and the deploy.
	tmpl, _ := json.Marshal(api.DeployRequest{TemplateName: req.TemplateName, Template: req.Template, Files: req.Files,
		VarFiles: req.VarFiles, Env: req.Env, Parameters: req.Parameters, Upgrade: req.Upgrade, Refresh: req.Refresh})
	// Parameters kept from the last deploy are not digested (a NoEcho one would be open to
	// guessing from a plan file): another deploy that changed them changed the stack's row.
	b := plan.Base{Template: plan.Digest(tmpl)}
	if fresh {
		return b
	}
	b.Stack = plan.Digest([]byte(prior.Status), []byte(prior.Operation), prior.Outputs, prior.Parameters, prior.Template)
	b.Resources = resourceDigests(list)
	return b
}

// resourceDigests digests each stored resource, for plan.Base: 48 bits each, enough to tell
// that one changed, and small enough for the plan of a stack of 100,000 resources to travel.
func resourceDigests(list []state.Resource) map[string]string {
	out := make(map[string]string, len(list))
	for _, r := range list {
		out[r.Name] = plan.Digest([]byte(r.Type), []byte(r.ID), []byte(r.Status), []byte(r.Provider), r.Props, r.Outputs, r.Private)[:12]
	}
	return out
}

// planMoved is why the saved plan a deploy applies no longer holds for the resources the run
// found when it took the stack's lease ("" when it holds, or there is none): the check of
// the request was made before the lease, and another operation may have run in between.
func (r *run) planMoved() string {
	if r.req.Plan == nil || r.req.Creating && len(r.prior) == 0 {
		return ""
	}
	if err := r.req.Plan.MovedResources(resourceDigests(slices.Collect(maps.Values(r.prior)))); err != nil {
		return err.Error()
	}
	return ""
}

// checkPlan takes the saved plan out of req (nil when it has none) and checks that it still
// applies: a plan made now from the same request must agree with it, or the deploy is
// refused with a *plan.StaleError naming what moved.
func (e *Engine) checkPlan(ctx context.Context, stack string, req *api.DeployRequest) (*plan.Plan, error) {
	if len(req.Plan) == 0 {
		return nil, nil
	}
	saved, err := plan.Decode(req.Plan)
	if err != nil {
		return nil, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "%s", err)}}
	}
	req.Plan = nil
	resp, err := e.Preview(ctx, stack, *req)
	if err != nil {
		return nil, err
	}
	now, err := plan.Decode(resp.Plan)
	if err != nil {
		return nil, err
	}
	if err := saved.Stale(now); err != nil {
		return nil, err
	}
	return saved, nil
}

// dependenciesOf is what resource (or provider configuration) name depends on directly.
func dependenciesOf(st *template.Stack, name string) []string {
	if res := st.Resource(name); res != nil {
		return res.DependsOn
	}
	return nil
}

// outputChanges is what the deploy would do to the stack's outputs, stored as prior holds
// them: evaluated in the preview's scope, unknown where they depend on what the deploy changes.
func (pv *previewer) outputChanges(prior []byte, fresh bool) ([]plan.OutputChange, error) {
	var old []storedOutput
	if !fresh && len(prior) > 0 {
		if err := decodeOutputs(prior, &old); err != nil {
			return nil, fmt.Errorf("cannot decode the stack's outputs: %w", err)
		}
	}
	was := make(map[string]storedOutput, len(old))
	for _, o := range old {
		was[o.Name] = o
	}
	var out []plan.OutputChange
	seen := map[string]bool{}
	for _, o := range pv.st.Outputs {
		v, ds := o.Value.Eval(pv.sc)
		if ds.HasErrors() {
			continue // the preview reported it, or the deploy will
		}
		if uv, _ := v.Unmark(); uv.IsKnown() && uv.IsNull() {
			continue // a null output is not listed (run.outputs)
		}
		so, err := newStoredOutput(o.Name, o.Description, v)
		if err != nil {
			return nil, err
		}
		seen[o.Name] = true
		prev, had := was[o.Name]
		switch {
		case !had:
			out = append(out, plan.OutputChange{Name: o.Name, Action: plan.Create, After: so.Value})
		case !sameOutput(prev, so, v.IsWhollyKnown()):
			out = append(out, plan.OutputChange{Name: o.Name, Action: plan.Update, Before: prev.Value, After: so.Value})
		}
	}
	for _, o := range old {
		if !seen[o.Name] {
			out = append(out, plan.OutputChange{Name: o.Name, Action: plan.Delete, Before: o.Value})
		}
	}
	return out, nil
}

// sameOutput reports whether a stored output holds what a known new one would store.
func sameOutput(prev, next storedOutput, known bool) bool {
	if !known {
		return false
	}
	a, err1 := json.Marshal(prev.Value)
	b, err2 := json.Marshal(next.Value)
	return err1 == nil && err2 == nil && bytes.Equal(a, b) && bytes.Equal(prev.Secret, next.Secret)
}

// apiOutputChanges is how a preview shows output changes.
func apiOutputChanges(cs []plan.OutputChange) []api.OutputChange {
	var out []api.OutputChange
	for _, c := range cs {
		a := api.OutputChange{Name: c.Name, Before: c.Before, After: c.After}
		switch c.Action {
		case plan.Create:
			a.Action = api.ActionAdd
		case plan.Update:
			a.Action = api.ActionModify
		case plan.Delete:
			a.Action = api.ActionRemove
		default:
			continue
		}
		out = append(out, a)
	}
	return out
}
