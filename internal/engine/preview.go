package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// Preview returns the change set a Deploy of req would apply to stack. It calls providers'
// Check and Diff only. Template problems come back as a *ValidationError.
func (e *Engine) Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
	if err := validStackName(stack); err != nil {
		return api.PreviewResponse{}, err
	}
	prior, err := e.store.GetStack(ctx, stack)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return api.PreviewResponse{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	fresh := err != nil || prior.Status == "DELETE_COMPLETE" || prior.Status == "ROLLBACK_COMPLETE"
	stackID := prior.ID
	if fresh {
		stackID = ""
	}
	st, diags := e.load(ctx, stack, stackID, req.TemplateName, []byte(req.Template), req.Parameters, false)
	if st == nil {
		return api.PreviewResponse{}, &ValidationError{Diagnostics: diags}
	}
	rows := map[string]state.Resource{}
	if !fresh {
		list, err := e.store.ListResources(ctx, stack)
		if err != nil {
			return api.PreviewResponse{}, fmt.Errorf("cannot read resources of stack %s: %w", stack, err)
		}
		for _, row := range list {
			rows[row.Name] = row
		}
	}
	pv := previewer{e: e, st: st, sc: newScope(st), rows: rows, stackName: stack, stackID: stackID}
	resp := api.PreviewResponse{Stack: stack, Changes: []api.Change{}, Diagnostics: APIDiagnostics(diags)}
	for _, name := range topoOrder(st) {
		ch, err := pv.change(ctx, st.Resource(name))
		if err != nil {
			return api.PreviewResponse{}, err
		}
		if ch.Action != api.ActionNoop {
			resp.Changes = append(resp.Changes, ch)
		}
	}
	for _, name := range sortedKeys(rows) {
		if st.Resource(name) == nil {
			row := rows[name]
			resp.Changes = append(resp.Changes, api.Change{LogicalID: name, PhysicalID: row.ID, Type: row.Type, Action: api.ActionRemove})
		}
	}
	return resp, nil
}

// topoOrder lists the template's resources so that each comes after its dependencies.
func topoOrder(st *template.Stack) []string {
	g := dag.New()
	for _, r := range st.Resources {
		g.Add(r.Name, r.DependsOn...)
	}
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
	sc                 *scope
	rows               map[string]state.Resource
	stackName, stackID string
}

// change works out what a deploy would do to res; resources it would change become unknown
// to their dependents.
func (pv *previewer) change(ctx context.Context, res *template.Resource) (api.Change, error) {
	ch := api.Change{LogicalID: res.Name, Type: res.Type}
	p, err := pv.e.reg.Lookup(res.Type)
	if err != nil {
		return ch, err
	}
	props, diags := res.Properties.Eval(pv.sc)
	if diags.HasErrors() {
		return ch, &ValidationError{Diagnostics: diags}
	}
	pr := pv.e.providerResource(pv.st.Dialect, pv.stackName, pv.stackID, res)
	row, had := pv.rows[res.Name]
	if !had || row.Status == "CREATE_FAILED" {
		ch.Action = api.ActionAdd
		for _, k := range value.Keys(props) {
			v, _ := value.Get(props, k)
			ch.Details = append(ch.Details, api.PropertyChange{Name: k, After: value.Masked(v, api.UnknownMarker)})
		}
		return ch, nil
	}
	ch.PhysicalID = row.ID
	old, err := value.Unmarshal(row.Props)
	if err != nil {
		return ch, fmt.Errorf("cannot decode properties of %s: %w", res.Name, err)
	}
	diff, err := p.Diff(ctx, provider.DiffRequest{Resource: pr, ID: row.ID, OldProps: old, NewProps: props})
	if err != nil {
		return ch, fmt.Errorf("cannot diff %s: %w", res.Name, err)
	}
	if !diff.Changed && row.Status != "UPDATE_FAILED" {
		ch.Action = api.ActionNoop
		return ch, pv.sc.setRow(row)
	}
	ch.Action, ch.Replacement = api.ActionModify, api.ReplaceFalse
	next := template.ResourceValue{ID: cty.StringVal(row.ID), Outputs: cty.DynamicVal}
	switch {
	case diff.Replace:
		ch.Replacement, next.ID = api.ReplaceTrue, cty.UnknownVal(cty.String)
	case diff.MayReplace:
		ch.Replacement, next.ID = api.ReplaceMaybe, cty.UnknownVal(cty.String)
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
		ch.Details = append(ch.Details, pc)
	}
	return ch, nil
}
