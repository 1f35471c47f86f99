package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// stepFailed is a resource step that failed; the walk stops and the stack rolls back.
type stepFailed struct {
	name, reason string
}

func (e *stepFailed) Error() string { return e.name + ": " + e.reason }

// deploy runs a deploy operation from whatever phase its journal says it reached.
func (r *run) deploy(ctx context.Context) error {
	prefix := "UPDATE"
	if r.req.Creating {
		prefix = "CREATE"
	}
	phase, reason := r.phase()
	switch phase {
	case phaseForward:
		failure, err := r.forward(ctx)
		if err != nil {
			return err
		}
		if failure != "" {
			if r.req.Deploy.DisableRollback {
				return r.finish(ctx, prefix+"_FAILED", failure, false)
			}
			if err := r.enter(ctx, phaseRollback, failure); err != nil {
				return err
			}
			return r.rollback(ctx, phaseRollback, failure)
		}
		// Outputs are written now so that a run resumed during cleanup still has them.
		if err := r.e.store.PutStack(context.WithoutCancel(ctx), r.stack); err != nil {
			return fmt.Errorf("cannot write stack %s: %w", r.stack.Name, err)
		}
		if err := r.enter(ctx, phaseCleanup, ""); err != nil {
			return err
		}
		return r.cleanup(ctx)
	case phaseCleanup:
		return r.cleanup(ctx)
	default:
		return r.rollback(ctx, phase, reason)
	}
}

// forward applies every resource in dependency order. It returns the reason the stack failed
// ("" when it did not) or an error when the run cannot go on.
func (r *run) forward(ctx context.Context) (string, error) {
	sc := newScope(r.tmpl)
	g := dag.New()
	for _, res := range r.tmpl.Resources {
		g.Add(res.Name, res.DependsOn...)
		if row, ok := r.prior[res.Name]; ok && row.Status != "CREATE_FAILED" {
			if err := sc.setRow(row); err != nil {
				return "", err
			}
		}
	}
	fctx := ctx
	if !r.req.Deadline.IsZero() {
		var cancel context.CancelFunc
		fctx, cancel = context.WithDeadline(ctx, r.req.Deadline)
		defer cancel()
	}
	_, errs := dag.Walk(fctx, g, dag.WalkOptions{Parallelism: r.e.o.Parallelism, StopOnFailure: true},
		func(ctx context.Context, name string) error { return r.apply(ctx, sc, name) })
	if ctx.Err() != nil {
		return "", errShutdown
	}
	var failed []string
	for _, name := range sortedKeys(errs) {
		var sf *stepFailed
		if !errors.As(errs[name], &sf) {
			return "", errs[name] // the store failed
		}
		failed = append(failed, name)
	}
	verb := "update"
	if r.req.Creating {
		verb = "create"
	}
	switch {
	case fctx.Err() != nil:
		return "Stack timed out after its --timeout.", nil
	case len(failed) > 0:
		return fmt.Sprintf("The following resource(s) failed to %s: [%s].", verb, strings.Join(failed, ", ")), nil
	}
	outs, diags := r.outputs(sc)
	if diags.HasErrors() {
		return "Outputs could not be evaluated: " + reasonOf(diags.Err()), nil
	}
	r.stack.Outputs = outs
	return "", nil
}

// outputs evaluates the stack's outputs, masked for storage and display.
func (r *run) outputs(sc *scope) ([]byte, diag.Diagnostics) {
	var diags diag.Diagnostics
	outs := []api.Output{}
	for _, o := range r.tmpl.Outputs {
		v, ds := o.Value.Eval(sc)
		if ds.HasErrors() {
			diags = diags.Append(ds)
			continue
		}
		outs = append(outs, api.Output{Name: o.Name, Description: o.Description, Value: value.Masked(v, api.UnknownMarker)})
	}
	b, err := json.Marshal(outs)
	return b, diags.Append(err)
}

// apply brings one resource to its template state: create, update or nothing.
func (r *run) apply(ctx context.Context, sc *scope, name string) error {
	res := r.tmpl.Resource(name)
	for _, key := range []string{"create/" + name, "update/" + name} {
		if je, ok := r.ended(key); ok { // finished before a restart
			if je.Failed {
				return &stepFailed{name, "failed before the restart"}
			}
			row, err := r.e.store.GetResource(ctx, r.stack.Name, name)
			if err != nil {
				return fmt.Errorf("cannot read resource %s: %w", name, err)
			}
			return sc.setRow(row)
		}
	}
	p, props, fail := r.inputs(ctx, sc, res)
	if fail != "" {
		status := "CREATE_FAILED"
		if _, ok := r.prior[name]; ok {
			status = "UPDATE_FAILED"
		}
		if err := r.event(ctx, name, r.prior[name].ID, res.Type, status, fail); err != nil {
			return err
		}
		return &stepFailed{name, fail}
	}
	prior, had := r.prior[name]
	if !had || prior.Status == "CREATE_FAILED" {
		return r.create(ctx, sc, p, res, props)
	}
	oldProps, err := value.Unmarshal(prior.Props)
	if err != nil {
		return fmt.Errorf("cannot decode properties of %s: %w", name, err)
	}
	diff, err := p.Diff(ctx, provider.DiffRequest{Resource: r.resource(res), ID: prior.ID, OldProps: oldProps, NewProps: props})
	if err == nil && !diff.Changed && prior.Status != "UPDATE_FAILED" {
		return sc.setRow(prior)
	}
	return r.update(ctx, sc, p, res, prior, oldProps, props)
}

// inputs evaluates and checks a resource's properties; fail is the reason they are unusable.
func (r *run) inputs(ctx context.Context, sc *scope, res *template.Resource) (provider.Provider, cty.Value, string) {
	p, err := r.e.reg.Lookup(res.Type)
	if err != nil {
		return nil, cty.NilVal, err.Error()
	}
	props, diags := res.Properties.Eval(sc)
	if diags.HasErrors() {
		return nil, cty.NilVal, reasonOf(diags.Err())
	}
	if !known(props) {
		return nil, cty.NilVal, "properties are not known after their dependencies were applied"
	}
	resp, err := p.Check(ctx, provider.CheckRequest{Resource: r.resource(res), Props: props})
	if err != nil {
		return nil, cty.NilVal, err.Error()
	}
	if len(resp.Failures) > 0 {
		var parts []string
		for _, f := range resp.Failures {
			parts = append(parts, strings.TrimPrefix(f.Property+": ", ": ")+f.Reason)
		}
		sort.Strings(parts)
		return nil, cty.NilVal, strings.Join(parts, "; ")
	}
	if resp.Props != cty.NilVal && !resp.Props.IsNull() {
		props = resp.Props
	}
	return p, props, ""
}

func (r *run) resource(res *template.Resource) provider.Resource {
	return r.e.providerResource(template.Dialect(r.req.Dialect), r.stack.Name, r.req.StackID, res)
}

// callFailure turns a provider call's outcome into the reason it failed ("" if it did not),
// or errShutdown when the engine is stopping and the call must be retried after a restart.
func (r *run) callFailure(ctx context.Context, err error, diags diag.Diagnostics) (string, error) {
	if r.e.runCtx.Err() != nil {
		return "", errShutdown
	}
	if ctx.Err() != nil { // the stack's deadline passed, or another engine took the lease
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "Resource operation cancelled: the stack timed out", nil
		}
		return "", errShutdown
	}
	switch {
	case err != nil:
		return err.Error(), nil
	case diags.HasErrors():
		return reasonOf(diags.Err()), nil
	}
	return "", nil
}

func (r *run) create(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, props cty.Value) error {
	key := "create/" + res.Name
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	if !resumed {
		if err := r.event(ctx, res.Name, "", res.Type, "CREATE_IN_PROGRESS", ""); err != nil {
			return err
		}
	}
	resp, err := p.Create(ctx, provider.CreateRequest{Resource: r.resource(res), Token: token, Props: props})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	row, err := r.row(res, resp.ID, props, resp.Outputs)
	if err != nil {
		return err
	}
	if fail != "" {
		row.Status, row.StatusReason = "CREATE_FAILED", fail
		if err := r.end(ctx, key, token, true, detail{Kind: "create", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
			return err
		}
		if err := r.event(ctx, res.Name, row.ID, res.Type, "CREATE_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{res.Name, fail}
	}
	row.Status = "CREATE_COMPLETE"
	if err := r.end(ctx, key, token, false, detail{Kind: "create", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	if err := sc.setRow(row); err != nil {
		return err
	}
	return r.event(ctx, res.Name, row.ID, res.Type, "CREATE_COMPLETE", "")
}

func (r *run) update(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, prior state.Resource, oldProps, props cty.Value) error {
	key := "update/" + res.Name
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	if !resumed {
		if err := r.event(ctx, res.Name, prior.ID, res.Type, "UPDATE_IN_PROGRESS", ""); err != nil {
			return err
		}
	}
	oldOuts, err := value.Unmarshal(prior.Outputs)
	if err != nil {
		return fmt.Errorf("cannot decode outputs of %s: %w", res.Name, err)
	}
	resp, err := p.Update(ctx, provider.UpdateRequest{Resource: r.resource(res), Token: token, ID: prior.ID,
		OldProps: oldProps, NewProps: props, OldOutputs: oldOuts})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	if fail != "" {
		attempted, err := r.row(res, prior.ID, props, cty.NilVal)
		if err != nil {
			return err
		}
		row := prior
		row.Status, row.StatusReason = "UPDATE_FAILED", fail
		d := detail{Kind: "update", Before: imageOf(prior), After: imageOf(attempted)}
		if err := r.end(ctx, key, token, true, d, state.Write{Put: &row}); err != nil {
			return err
		}
		if err := r.event(ctx, res.Name, prior.ID, res.Type, "UPDATE_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{res.Name, fail}
	}
	row, err := r.row(res, resp.ID, props, resp.Outputs)
	if err != nil {
		return err
	}
	row.Status = "UPDATE_COMPLETE"
	if err := r.end(ctx, key, token, false, detail{Kind: "update", Before: imageOf(prior), After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	if err := sc.setRow(row); err != nil {
		return err
	}
	if row.ID != prior.ID {
		if err := r.event(ctx, res.Name, row.ID, res.Type, "UPDATE_IN_PROGRESS",
			"Requested update required the provider to create a new physical resource"); err != nil {
			return err
		}
	}
	return r.event(ctx, res.Name, row.ID, res.Type, "UPDATE_COMPLETE", "")
}

// row builds a resource row for res.
func (r *run) row(res *template.Resource, id string, props, outputs cty.Value) (state.Resource, error) {
	pb, err := value.Marshal(props)
	if err != nil {
		return state.Resource{}, fmt.Errorf("cannot encode properties of %s: %w", res.Name, err)
	}
	var ob []byte
	if outputs != cty.NilVal && !outputs.IsNull() && known(outputs) {
		if ob, err = value.Marshal(outputs); err != nil {
			return state.Resource{}, fmt.Errorf("cannot encode outputs of %s: %w", res.Name, err)
		}
	}
	return state.Resource{Stack: r.stack.Name, Name: res.Name, Type: res.Type, ID: id, Props: pb, Outputs: ob,
		Deps: res.DependsOn, DeletionPolicy: string(res.DeletionPolicy), UpdatedAt: r.e.now()}, nil
}
