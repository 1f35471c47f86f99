package engine

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// tfChange previews a Terraform-language resource as terraform plan does: the provider plans
// every create and update, unknowns show as "(known after apply)", secrets as
// "(sensitive value)", and data sources whose configuration is known are read now.
func (pv *previewer) tfChange(ctx context.Context, p provider.Provider, res *template.Resource, props cty.Value) (plan.Step, []api.PropertyChange, diag.Diagnostics, error) {
	pr := pv.e.providerResource(pv.st.Policy, pv.stackName, pv.stackID, res)
	path := resourcePath(pv.st, res)
	if res.Mode == template.Data {
		resp, err := p.ReadData(ctx, provider.ReadDataRequest{Resource: pr, Config: props})
		if err != nil {
			return plan.Step{}, nil, nil, fmt.Errorf("cannot read %s: %w", res.Name, err)
		}
		ds := locate(resp.Diagnostics, res, path)
		pv.sc.set(res.Name, template.ResourceValue{ID: idOf(resp.State, res.Name), Outputs: resp.State})
		if !resp.State.IsWhollyKnown() {
			return plan.Step{Action: plan.Read}, nil, ds, nil
		}
		return plan.Step{Action: plan.Same}, nil, ds, nil // read now: nothing left for the deploy to show
	}
	row, had := pv.rows[res.Name]
	f := factsOf(pv.st.Policy, res, row, had, false)
	for _, a := range res.ReplaceTriggeredBy {
		f.Triggered = f.Triggered || pv.changed[a]
	}
	f.Triggered = f.Triggered || replacedWith(res, pv.replaced)
	if f.Exists && !f.Tainted && pv.unchanged(ctx, p, res, row, props) {
		return plan.Step{Action: plan.Same}, nil, nil, pv.sc.setRow(row)
	}
	req := provider.DiffRequest{Resource: pr, NewProps: props}
	prior := cty.NullVal(cty.DynamicPseudoType)
	if f.Exists {
		old, err1 := value.Unmarshal(row.Props)
		outs, err2 := value.Unmarshal(row.Outputs)
		if err1 != nil || err2 != nil {
			return plan.Step{}, nil, nil, fmt.Errorf("cannot decode state of %s", res.Name)
		}
		props = ignoring(res, props, old)
		req.ID, req.OldProps, req.NewProps, req.OldOutputs, req.Private = row.ID, old, props, outs, row.Private
		prior = outs
	}
	diff, err := p.Diff(ctx, req)
	if err != nil {
		return plan.Step{}, nil, nil, fmt.Errorf("cannot plan %s: %w", res.Name, err)
	}
	ds := locate(diff.Diagnostics, res, path)
	if ds.HasErrors() {
		return plan.Step{}, nil, ds, nil
	}
	f.Diff = answerOf(diff)
	step, err := plan.Decide(f)
	if err != nil {
		return step, nil, ds.Append(decideFailure(pv.st, res, err)), nil
	}
	if step.Action == plan.Same {
		return step, nil, ds, pv.sc.setRow(row)
	}
	pv.changed[res.Name] = true
	pv.markReplaced(res.Name, step)
	planned := diff.Planned
	if planned == cty.NilVal {
		planned = cty.DynamicVal
	}
	next := template.ResourceValue{ID: idOf(planned, ""), Outputs: planned}
	if step.Action != plan.Update {
		if id := next.ID; id.IsKnown() && id.AsString() == "" {
			next.ID = cty.UnknownVal(cty.String)
		}
	}
	pv.sc.set(res.Name, next)
	return step, attrChanges(prior, planned, diff.ReplacePaths), ds, nil
}

// unchanged reports, as the deploy's walk decides, that res's state was applied from props
// under the same provider configuration and schema, so it needs no plan.
func (pv *previewer) unchanged(ctx context.Context, p provider.Provider, res *template.Resource, row state.Resource, props cty.Value) bool {
	if res.IgnoreAllChanges || len(res.IgnoreChanges) > 0 || row.Status == "UPDATE_FAILED" {
		return false
	}
	for _, a := range res.ReplaceTriggeredBy {
		if pv.changed[a] {
			return false
		}
	}
	if replacedWith(res, pv.replaced) {
		return false
	}
	if !appliedFrom(row, res, props) || !sameProviderAs(pv.appliedWith, pv.ps, res.Provider, true) {
		return false
	}
	sv, ok := p.(provider.StateVersioner)
	return ok && sv.StateCurrent(ctx, res.Type, row.Private)
}

// attrChanges lists the top-level attributes that differ between before and after, masked for
// display.
func attrChanges(before, after cty.Value, replacePaths []string) []api.PropertyChange {
	forces := map[string]bool{}
	for _, p := range replacePaths {
		top, _, _ := strings.Cut(p, ".")
		top, _, _ = strings.Cut(top, "[")
		forces[top] = true
	}
	attrs := map[string]bool{}
	for _, v := range []cty.Value{before, after} {
		if v != cty.NilVal && v.Type().IsObjectType() {
			for k := range v.Type().AttributeTypes() {
				attrs[k] = true
			}
		}
	}
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []api.PropertyChange
	for _, k := range names {
		b, a := attrOf(before, k), attrOf(after, k)
		if b.IsNull() && a.IsNull() {
			continue
		}
		if !forces[k] && sameValue(b, a) {
			continue
		}
		out = append(out, api.PropertyChange{Name: k, Before: display(b), After: display(a), ForcesReplacement: forces[k]})
	}
	return out
}

// sameValue compares two known values by content, ignoring sensitivity and the types that
// stored state loses (a map read back as an object, a list as a tuple, a typed null).
func sameValue(a, b cty.Value) bool {
	a, _ = a.UnmarkDeep()
	b, _ = b.UnmarkDeep()
	if !a.IsWhollyKnown() || !b.IsWhollyKnown() {
		return false
	}
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	ja, err1 := value.Marshal(a)
	jb, err2 := value.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func attrOf(v cty.Value, name string) cty.Value {
	if v == cty.NilVal || !v.Type().IsObjectType() || !v.Type().HasAttribute(name) {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	if !v.IsKnown() {
		return cty.DynamicVal
	}
	if v.IsNull() {
		return cty.NullVal(cty.DynamicPseudoType)
	}
	return v.GetAttr(name)
}

func display(v cty.Value) any {
	if v.IsNull() && !v.IsMarked() {
		return nil
	}
	return value.MaskedAs(v, api.UnknownMarker, api.SensitiveMarker)
}
