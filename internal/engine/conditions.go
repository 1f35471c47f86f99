package engine

import (
	"context"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
)

// Custom conditions of the Terraform language (template.Condition). As terraform does, a
// resource's preconditions are checked before anything is asked of its provider and its
// postconditions after it is applied or read (and again by every later operation, even when
// nothing changed); an output's preconditions before its value; a check block's assertions
// after everything else, as warnings. A condition not yet known is checked later: at load
// time every resource is unknown, so only what the configuration alone decides fails there.

// step applies one resource between its preconditions and its postconditions.
func (r *run) step(ctx context.Context, sc *scope, name string) error {
	res := r.tmpl.Resource(name)
	if res == nil || (len(res.Preconditions) == 0 && len(res.Postconditions) == 0) {
		return r.apply(ctx, sc, name)
	}
	if ds := template.CheckAll(res.Preconditions, sc, cty.NilVal); ds.HasErrors() {
		return r.conditionFailed(ctx, res, ds)
	}
	if err := r.apply(ctx, sc, name); err != nil {
		return err
	}
	if len(res.Postconditions) == 0 {
		return nil
	}
	v, _ := sc.Resource(name)
	if ds := template.CheckAll(res.Postconditions, sc, v.Outputs); ds.HasErrors() {
		return r.conditionFailed(ctx, res, ds)
	}
	return nil
}

// conditionFailed fails res's step with the failed conditions.
func (r *run) conditionFailed(ctx context.Context, res *template.Resource, ds diag.Diagnostics) error {
	status, id := "CREATE_FAILED", ""
	if prior, had := r.prior[res.Name]; had && prior.Status != "CREATE_FAILED" {
		status, id = "UPDATE_FAILED", prior.ID
	}
	if res.Mode == template.Data {
		status = "READ_FAILED"
	}
	fail := reasonOf(ds.Err())
	if err := r.event(ctx, res.Name, id, res.Type, status, fail); err != nil {
		return err
	}
	return &stepFailed{res.Name, fail}
}

// checkConditions reports the failures of res's preconditions that the configuration alone
// decides (everything else is unknown in sc): terraform finds them before applying anything.
func checkConditions(res *template.Resource, sc template.Scope, path string) diag.Diagnostics {
	return locate(template.CheckAll(res.Preconditions, sc, cty.NilVal), res, path)
}

// outputPreconditions checks the preconditions of every output.
func outputPreconditions(st *template.Stack, sc template.Scope) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, o := range st.Outputs {
		for _, d := range template.CheckAll(o.Preconditions, sc, cty.NilVal) {
			if d.Path == "" {
				d.Path = "output." + o.Name
			}
			diags = append(diags, d)
		}
	}
	return diags
}

// checkBlocks evaluates the assertions of every check block: warnings, whatever fails.
func checkBlocks(st *template.Stack, sc template.Scope) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, c := range st.Checks {
		for _, d := range template.CheckAll(c.Asserts, sc, cty.NilVal) {
			d.Severity = diag.Warning
			if d.Path == "" {
				d.Path = c.Name
			}
			diags = append(diags, d)
		}
	}
	return diags
}

// reportChecks evaluates the check blocks after a deploy and records each failed assertion
// as a warning event of its check block.
func (r *run) reportChecks(ctx context.Context, sc *scope) error {
	for _, d := range checkBlocks(r.tmpl, sc) {
		reason := d.Summary
		if d.Range.Filename != "" {
			reason = d.Range.String() + ": " + reason
		}
		if d.Detail != "" {
			reason += ": " + d.Detail
		}
		if err := r.event(ctx, d.Path, "", "check", "WARNING", "Warning: "+reason); err != nil {
			return err
		}
	}
	return nil
}

// scopedReadFailed records that the data source of a check block could not be read: a
// warning, as terraform reports it; its assertions are then not known and not checked.
func (r *run) scopedReadFailed(ctx context.Context, sc *scope, res *template.Resource, fail string) error {
	sc.set(res.Name, template.UnknownResource)
	return r.event(ctx, res.Name, "", res.Type, "WARNING", "Warning: "+fail)
}

// asWarnings turns diagnostics into warnings (a check block's data source).
func asWarnings(ds diag.Diagnostics) diag.Diagnostics {
	out := make(diag.Diagnostics, len(ds))
	for i, d := range ds {
		d.Severity = diag.Warning
		out[i] = d
	}
	return out
}

// tfChecked previews res (tfChange) and checks its postconditions against what the plan
// knows of it; the data source of a check block warns instead of failing.
func (pv *previewer) tfChecked(ctx context.Context, p provider.Provider, res *template.Resource, props cty.Value) (plan.Step, []api.PropertyChange, diag.Diagnostics, error) {
	step, details, ds, err := pv.tfChange(ctx, p, res, props)
	if err != nil || ds.HasErrors() {
		if res.Check != "" && err == nil {
			pv.sc.set(res.Name, template.UnknownResource)
			return plan.Step{Action: plan.Read}, nil, asWarnings(ds), nil
		}
		return step, details, ds, err
	}
	if len(res.Postconditions) > 0 {
		v, _ := pv.sc.Resource(res.Name)
		ds = ds.Append(locate(template.CheckAll(res.Postconditions, pv.sc, v.Outputs), res, resourcePath(pv.st, res)))
	}
	return step, details, ds, nil
}
