package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// Preview returns the change set a Deploy of req would apply to stack. It calls providers'
// Check and Diff only. Template problems come back as a *ValidationError.
func (e *Engine) Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	if err := validStackName(stack); err != nil {
		return api.PreviewResponse{}, err
	}
	key := stackKey(ctx, stack)
	prior, err := e.store.GetStack(ctx, key)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return api.PreviewResponse{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	fresh := err != nil || prior.Status == "DELETE_COMPLETE" || prior.Status == "ROLLBACK_COMPLETE"
	stackID := prior.ID
	if fresh {
		stackID = ""
	}
	var list []state.Resource
	if !fresh {
		if list, err = e.store.ListResources(ctx, key); err != nil {
			return api.PreviewResponse{}, fmt.Errorf("cannot read resources of stack %s: %w", stack, err)
		}
	}
	src := sourceOf(req)
	if !fresh && !req.Upgrade {
		src.applied, src.appliedWith = appliedOf(prior, list), fingerprints(prior.Providers)
	}
	if !fresh {
		src.previous = rememberedParameters(prior) // the values the deploy would keep
	}
	st, ps, diags := e.load(ctx, stack, stackID, src, loadCheck)
	if st == nil {
		return api.PreviewResponse{}, &ValidationError{Diagnostics: diags}
	}
	defer ps.close()
	rows := make(map[string]state.Resource, len(list))
	for _, row := range list {
		rows[row.Name] = row
	}
	rf := refactor(st, rows) // moved.go
	diags = diags.Append(blockedWarning(rf.blocked))
	sc := newScope(ctx, st)
	sc.planning = true
	attachEphemerals(ctx, sc, st, ps) // ephemeral.go
	defer sc.eph.close()
	pv := previewer{e: e, st: st, ps: ps, sc: sc, rows: rows, appliedWith: src.appliedWith, stackName: stack, stackID: stackID,
		changed: map[string]bool{}}
	resp := api.PreviewResponse{Stack: stack, Dialect: string(st.Dialect), Changes: []api.Change{}, LockFile: string(ps.lock)}
	pl := &plan.Plan{Format: plan.Format, Stack: stack, Base: baseOf(req, st, prior, list, fresh)}
	if st.Policy.RemembersParameters {
		resp.Parameters = apiParameters(st.Parameters) // what the deploy would bind, kept ones included
	}
	for _, name := range topoOrder(st) {
		if st.Provider(name) != nil {
			if _, err := ps.configured(ctx, pv.sc, "", name); err != nil {
				return api.PreviewResponse{}, &ValidationError{Diagnostics: diags.Append(diag.Errorf(st.Provider(name).Range, name, "%s", err))}
			}
			continue
		}
		importing, err := pv.planImport(ctx, st.Resource(name)) // importblocks.go
		if err != nil {
			return api.PreviewResponse{}, err
		}
		if req.Refresh {
			if err := pv.refresh(ctx, st.Resource(name)); err != nil {
				return api.PreviewResponse{}, err
			}
		}
		step, details, ds, err := pv.change(ctx, st.Resource(name))
		if err != nil {
			return api.PreviewResponse{}, err
		}
		diags = diags.Append(ds)
		if ds.HasErrors() {
			return api.PreviewResponse{}, &ValidationError{Diagnostics: diags}
		}
		step.Resource, step.Type, step.MovedFrom = name, st.Resource(name).Type, rf.moved[name]
		if row, ok := rows[name]; ok && step.Action != plan.Create {
			step.PhysicalID = row.ID
		}
		details = pv.showImport(&step, details, importing)
		if step.Action != plan.Same || step.MovedFrom != "" {
			pl.Steps = append(pl.Steps, step) // a resource the plan leaves out must stay as it is (Plan.Holds)
		}
		if ch := apiChange(step, details); ch.Action != api.ActionNoop || ch.MovedFrom != "" || ch.Importing != "" {
			resp.Changes = append(resp.Changes, ch)
		}
	}
	if err := sc.eph.openAll(); err != nil { // as terraform plan opens every ephemeral resource
		return api.PreviewResponse{}, &ValidationError{Diagnostics: diags.Append(diag.Errorf(diag.Range{}, "", "%s", err))}
	}
	if st.Policy.ChecksOutputs {
		diags = diags.Append(outputPreconditions(st, pv.sc))
		if diags.HasErrors() {
			return api.PreviewResponse{}, &ValidationError{Diagnostics: diags}
		}
		diags = diags.Append(checkBlocks(st, pv.sc))
	}
	if req.Refresh {
		if len(pv.notChecked) > 0 {
			diags = diags.Append(diag.Diagnostic{Severity: diag.Warning, Summary: "Not checked for drift: " + strings.Join(pv.notChecked, ", "),
				Detail: "The " + noReadNote + "."})
		}
		if err := pv.refreshOrphans(ctx); err != nil {
			return api.PreviewResponse{}, err
		}
	}
	for _, name := range sortedKeys(rows) {
		if row := rows[name]; st.Resource(name) == nil && row.Protect && st.Policy.Protection != nil {
			diags = diags.Append(diag.Errorf(diag.Range{}, "", "%s", deleteRefusal(st.Policy, name))) // protect.go
		}
	}
	if diags.HasErrors() {
		return api.PreviewResponse{}, &ValidationError{Diagnostics: diags}
	}
	resp.Diagnostics = APIDiagnostics(diags)
	for _, name := range sortedKeys(rows) {
		if st.Resource(name) == nil {
			row := rows[name]
			pl.Steps = append(pl.Steps, plan.Step{Resource: name, PhysicalID: row.ID, Type: row.Type, Action: plan.Delete})
		}
	}
	for _, row := range rf.forgotten {
		pl.Steps = append(pl.Steps, plan.Step{Resource: row.Name, PhysicalID: row.ID, Type: row.Type, Action: plan.Forget})
	}
	for _, s := range pl.Steps {
		if s.Action == plan.Delete || s.Action == plan.Forget {
			resp.Changes = append(resp.Changes, apiChange(s, nil))
		}
	}
	pl.Order(topoOrder(st), func(name string) []string { return dependenciesOf(st, name) })
	if pl.Outputs, err = pv.outputChanges(prior.Outputs, fresh); err != nil {
		return api.PreviewResponse{}, err
	}
	if resp.Plan, err = json.Marshal(pl); err != nil {
		return api.PreviewResponse{}, fmt.Errorf("cannot encode the plan: %w", err)
	}
	if req.SavePlan {
		saved, ephemeral := storedRequest(req, st)
		saved.SavePlan, saved.Refresh = false, req.Refresh
		resp.Saved, resp.EphemeralVars = &saved, ephemeral
	}
	resp.Outputs = apiOutputChanges(pl.Outputs)
	resp.Drift = pv.relevantDrift(ctx, resp.Changes)
	return resp, nil
}

// topoOrder lists the template's resources (and provider configurations) so that each comes
// after its dependencies.
func topoOrder(st *template.Stack) []string {
	g := graphOf(st)
	var order []string
	dag.Walk(context.Background(), g, dag.WalkOptions{Parallelism: 1}, func(_ context.Context, id string) error {
		order = append(order, id)
		return nil
	})
	return order
}

type previewer struct {
	e                  *Engine
	st                 *template.Stack
	ps                 *providerSet
	sc                 *scope
	rows               map[string]state.Resource
	appliedWith        map[string]providerFP // provider fingerprints of the last successful deploy
	stackName, stackID string
	changed            map[string]bool // resources the deploy would create, update or replace
	replaced           map[string]bool // resources the deploy would replace (replacewith.go)
	drift              []api.Change    // what a refresh found changed outside cairn (refresh.go)
	notChecked         []string        // resources a refresh could not read: their provider cannot
}

// change works out what a deploy would do to res (plan.Decide); resources it would change
// become unknown to their dependents. Diagnostics are the provider's (warnings, or errors
// that stop the preview). details are the properties that change, for display.
func (pv *previewer) change(ctx context.Context, res *template.Resource) (plan.Step, []api.PropertyChange, diag.Diagnostics, error) {
	if ds := checkConditions(res, pv.sc, resourcePath(pv.st, res)); ds.HasErrors() {
		return plan.Step{}, nil, ds, nil
	}
	p, err := pv.ps.configured(ctx, pv.sc, res.Type, res.Provider)
	if err != nil {
		return plan.Step{}, nil, nil, err
	}
	props, diags := evalBody(ctx, p, schemaKind(res), res.Properties, pv.sc)
	if diags.HasErrors() {
		return plan.Step{}, nil, nil, &ValidationError{Diagnostics: locate(diags, res, resourcePath(pv.st, res))}
	}
	if pv.st.Policy.PlansReplacements {
		return pv.tfChecked(ctx, p, res, props) // preview_tf.go
	}
	row, had := pv.rows[res.Name]
	f := factsOf(pv.st.Policy, res, row, had, false)
	var old cty.Value
	var diff provider.DiffResponse
	if f.Exists {
		if old, err = value.Unmarshal(row.Props); err != nil {
			return plan.Step{}, nil, nil, fmt.Errorf("cannot decode properties of %s: %w", res.Name, err)
		}
		pr := pv.e.providerResource(pv.st.Policy, pv.stackName, pv.stackID, res)
		if diff, err = p.Diff(ctx, provider.DiffRequest{Resource: pr, ID: row.ID, OldProps: old, NewProps: props}); err != nil {
			return plan.Step{}, nil, nil, fmt.Errorf("cannot diff %s: %w", res.Name, err)
		}
		f.Diff = answerOf(diff)
	}
	step, err := plan.Decide(f)
	if err != nil {
		return step, nil, decideFailure(pv.st, res, err), nil
	}
	var details []api.PropertyChange
	switch step.Action {
	case plan.Create:
		for _, k := range value.Keys(props) {
			v, _ := value.Get(props, k)
			details = append(details, api.PropertyChange{Name: k, After: value.Masked(v, api.UnknownMarker)})
		}
		return step, details, nil, nil
	case plan.Same:
		return step, nil, nil, pv.sc.setRow(row)
	}
	next := template.ResourceValue{ID: cty.StringVal(row.ID), Outputs: cty.DynamicVal}
	if step.Replacement != "" {
		next.ID = cty.UnknownVal(cty.String)
	}
	pv.sc.set(res.Name, next)
	for _, k := range diff.ChangedKeys {
		pc := api.PropertyChange{Name: k}
		if v, ok := value.Get(old, k); ok {
			pc.Before = value.Masked(v, api.UnknownMarker)
		}
		if v, ok := value.Get(props, k); ok {
			pc.After = value.Masked(v, api.UnknownMarker)
		}
		details = append(details, pc)
	}
	return step, details, nil, nil
}
