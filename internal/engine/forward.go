package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
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
	if msg := r.ephemeralGone(); msg != "" {
		return r.finish(ctx, prefix+"_FAILED", msg, false)
	}
	phase, reason := r.phase()
	switch phase {
	case phaseForward:
		var failure string
		if len(r.journal) == 0 { // nothing done yet: the saved plan must still match the stack
			failure = r.planMoved()
		}
		if failure == "" {
			if err := r.applyRefactoring(ctx); err != nil { // moved.go
				return err
			}
			var err error
			if failure, err = r.refreshThenForward(ctx); err != nil { // refresh.go
				return err
			}
		}
		if failure != "" {
			if r.req.Deploy.DisableRollback || !r.pol.RollsBack {
				if !r.pol.RollsBack {
					// Outputs of what was applied: terraform keeps its partial state too.
					if outs, diags := r.outputs(r.sc); !diags.HasErrors() {
						r.stack.Outputs = outs
					}
				}
				return r.finish(ctx, prefix+"_FAILED", failure, false)
			}
			if err := r.enter(ctx, phaseRollback, failure); err != nil {
				return err
			}
			return r.rollback(ctx, phaseRollback, failure)
		}
		// Outputs are written now so that a run resumed during cleanup still has them.
		if r.pol.ProviderPlugins {
			r.stack.Providers = r.ps.fingerprintsJSON()
		}
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
	sc := r.sc
	for _, res := range r.tmpl.Resources {
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
	_, errs := dag.Walk(fctx, graphOf(r.tmpl), dag.WalkOptions{Parallelism: r.parallelism(), StopOnFailure: true},
		func(ctx context.Context, name string) error {
			if cfg := r.tmpl.Provider(name); cfg != nil {
				return r.configure(ctx, cfg)
			}
			return r.step(ctx, sc, name)
		})
	if err := r.stopped(ctx); err != nil {
		return "", err
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
	case cancelled(ctx):
		return "Operation cancelled by the user.", nil
	case fctx.Err() != nil:
		return "Stack timed out after its --timeout.", nil
	case len(failed) > 0:
		return fmt.Sprintf("The following resource(s) failed to %s: [%s].", verb, strings.Join(failed, ", ")), nil
	}
	if err := sc.eph.openAll(); err != nil { // ephemeral.go
		return "Ephemeral resources could not be opened: " + err.Error(), nil
	}
	outs, diags := r.outputs(sc)
	if diags.HasErrors() {
		return "Outputs could not be evaluated: " + reasonOf(diags.Err()), nil
	}
	r.stack.Outputs = outs
	if err := r.reportChecks(ctx, sc); err != nil { // conditions.go
		return "", err
	}
	return "", nil
}

// configure configures a provider configuration's instance (the Terraform language).
func (r *run) configure(ctx context.Context, cfg *template.ProviderConfig) error {
	if _, err := r.ps.configured(ctx, r.sc, "", cfg.Addr); err != nil {
		if err := r.event(ctx, cfg.Addr, "", "provider", "CREATE_FAILED", err.Error()); err != nil {
			return err
		}
		return &stepFailed{cfg.Addr, err.Error()}
	}
	return nil
}

// outputs evaluates the stack's outputs, masked for storage and display.
func (r *run) outputs(sc *scope) ([]byte, diag.Diagnostics) {
	var diags diag.Diagnostics
	if r.pol.ChecksOutputs {
		if diags = checkOutputs(r.tmpl, sc).Append(outputPreconditions(r.tmpl, sc)); diags.HasErrors() {
			return nil, diags
		}
	}
	outs := []storedOutput{}
	for _, o := range r.tmpl.Outputs {
		v, ds := o.Value.Eval(sc)
		if ds.HasErrors() {
			diags = diags.Append(ds)
			continue
		}
		if uv, _ := v.Unmark(); uv.IsKnown() && uv.IsNull() {
			continue // terraform does not list a null output either
		}
		so, err := newStoredOutput(o.Name, o.Description, v)
		diags = diags.Append(err)
		outs = append(outs, so)
	}
	b, err := json.Marshal(outs)
	return b, diags.Append(err)
}

// apply brings one resource to its template state: create, update, replace or nothing.
func (r *run) apply(ctx context.Context, sc *scope, name string) error {
	res := r.tmpl.Resource(name)
	if done, err := r.resumeProvision(ctx, sc, res); done { // provision.go
		return err
	}
	for _, key := range []string{"create/" + name, "update/" + name} {
		if je, ok := r.ended(key); ok { // finished before a restart
			if je.Failed {
				return &stepFailed{name, "failed before the restart"}
			}
			row, err := r.e.store.GetResource(ctx, r.op.Stack, name)
			if err != nil {
				return fmt.Errorf("cannot read resource %s: %w", name, err)
			}
			r.markChanged(name)
			return sc.setRow(row)
		}
	}
	p, props, fail := r.inputs(ctx, sc, res)
	if fail == "" && res.Mode == template.Data {
		return r.read(ctx, sc, p, res, props)
	}
	prior, had := r.prior[name]
	if im := importPending(r.tmpl, r.prior, res); im != nil && fail == "" { // importblocks.go
		row, failure, err := r.importOne(ctx, sc, p, res, im)
		if err != nil {
			return err
		}
		if failure != "" {
			return &stepFailed{name, failure}
		}
		prior, had = row, true
	}
	if fail != "" {
		status := "CREATE_FAILED"
		if had {
			status = "UPDATE_FAILED"
		}
		if err := r.event(ctx, name, prior.ID, res.Type, status, fail); err != nil {
			return err
		}
		return &stepFailed{name, fail}
	}
	// Destroyed first by a replacement upstream (replace.go), in this run or before a restart.
	gone := r.isGone(name) || (had && r.pol.PlansReplacements && prior.Status == "DELETE_COMPLETE")
	f := factsOf(r.pol, res, prior, had, gone)
	f.Triggered = r.triggered(res)
	if f.Exists && !f.Tainted && r.pol.SkipsUnchanged && !res.IgnoreAllChanges && len(res.IgnoreChanges) == 0 &&
		r.unchanged(res, props) && r.sameProvider(res.Provider, true) {
		// The configuration, provider and schema its state was applied with: nothing to plan.
		sv, ok := p.(provider.StateVersioner)
		f.Unchanged = ok && sv.StateCurrent(ctx, res.Type, prior.Private)
	}
	var oldProps cty.Value
	if f.Exists && !f.Tainted && f.NeedsDiff() {
		var err1 error
		oldProps, err1 = value.Unmarshal(prior.Props)
		oldOuts, err2 := value.Unmarshal(prior.Outputs)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("cannot decode state of %s: %w", name, err)
		}
		props = ignoring(res, props, oldProps)
		diff, err := p.Diff(ctx, provider.DiffRequest{Resource: r.resource(res), ID: prior.ID, OldProps: oldProps, NewProps: props,
			OldOutputs: oldOuts, Private: prior.Private})
		if err == nil && diff.Diagnostics.HasErrors() {
			err = diff.Diagnostics.Err()
		}
		switch fail, ferr := r.callFailure(ctx, err, nil); {
		case ferr != nil:
			return ferr
		case fail == "":
			f.Diff = answerOf(diff)
		case r.pol.PlansReplacements:
			return r.failStep(ctx, res, prior.ID, "UPDATE_FAILED", fail)
		default:
			f.Diff = &plan.Answer{Changed: true} // a provider that cannot tell is asked to update
		}
	}
	step, err := plan.Decide(f)
	if err != nil {
		return r.failStep(ctx, res, prior.ID, "UPDATE_FAILED", refusal(r.pol, name, err)) // protect.go
	}
	if fail := r.holdsTo(name, step, gone); fail != "" {
		status := "UPDATE_FAILED"
		if !had {
			status = "CREATE_FAILED"
		}
		return r.failStep(ctx, res, prior.ID, status, fail)
	}
	switch step.Action {
	case plan.Same:
		return r.same(ctx, sc, res, prior) // protect.go
	case plan.Create:
		return r.create(ctx, sc, p, res, props)
	case plan.Replace:
		if props, fail = r.recheck(ctx, sc, p, res, props); fail != "" { // recheck.go
			return r.failStep(ctx, res, prior.ID, "UPDATE_FAILED", fail)
		}
		return r.replace(ctx, sc, p, res, prior, props, step.Order)
	}
	return r.update(ctx, sc, p, res, prior, oldProps, props, false)
}

// holdsTo returns why step breaks the saved plan the deploy applies ("" when it does not, or
// when the deploy applies none).
func (r *run) holdsTo(name string, step plan.Step, gone bool) string {
	if r.req.Plan == nil {
		return ""
	}
	if err := r.req.Plan.Holds(name, step, gone); err != nil {
		return err.Error()
	}
	return ""
}

// failStep records that res's step failed for reason and stops it.
func (r *run) failStep(ctx context.Context, res *template.Resource, id, status, reason string) error {
	if err := r.event(ctx, res.Name, id, res.Type, status, reason); err != nil {
		return err
	}
	return &stepFailed{res.Name, reason}
}

func preventDestroy(name string) string { return (&plan.PreventDestroyError{Name: name}).Error() }

// markChanged records that a resource was created, updated or replaced in this run, for
// replace_triggered_by.
func (r *run) markChanged(name string) {
	r.mu.Lock()
	if r.changed == nil {
		r.changed = map[string]bool{}
	}
	r.changed[name] = true
	r.mu.Unlock()
}

// triggered reports whether a resource that res names in replace_triggered_by changed.
func (r *run) triggered(res *template.Resource) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range res.ReplaceTriggeredBy {
		if r.changed[a] {
			return true
		}
	}
	return replacedWith(res, r.replaced)
}

// inputs evaluates and checks a resource's properties; fail is the reason they are unusable.
func (r *run) inputs(ctx context.Context, sc *scope, res *template.Resource) (provider.Provider, cty.Value, string) {
	p, err := r.ps.configured(ctx, sc, res.Type, res.Provider)
	if err != nil {
		return nil, cty.NilVal, err.Error()
	}
	if cp, ok := r.checkedFor(res); ok && r.unchanged(res, cp.v) && r.sameProvider(res.Provider, false) {
		return p, cp.v, "" // checkedprops.go
	}
	props, diags := evalBody(ctx, p, schemaKind(res), res.Properties, sc)
	if diags.HasErrors() {
		return nil, cty.NilVal, reasonOf(diags.Err())
	}
	if !known(props) {
		return nil, cty.NilVal, "properties are not known after their dependencies were applied"
	}
	if res.Mode == template.Data || (r.unchanged(res, props) && r.sameProvider(res.Provider, false)) {
		return p, props, ""
	}
	props, fail := r.check(ctx, p, res, props, r.oldInputs(res)) // recheck.go
	if fail != "" {
		return nil, cty.NilVal, fail
	}
	return p, props, ""
}

// check asks p to check res's evaluated props, olds its stored inputs (cty.NilVal for none);
// fail is why they are refused.
func (r *run) check(ctx context.Context, p provider.Provider, res *template.Resource, props, olds cty.Value) (cty.Value, string) {
	resp, err := p.Check(ctx, provider.CheckRequest{Resource: r.resource(res), Props: props, OldProps: olds})
	if err != nil {
		return cty.NilVal, err.Error()
	}
	for _, w := range resp.Warnings {
		r.warn(res.Name, strings.TrimPrefix(w.Property+": ", ": ")+w.Reason)
	}
	if len(resp.Failures) > 0 { // where the template says it: file:line:col and path, as the load's check
		var parts []string
		for _, f := range resp.Failures {
			if r.tmpl == nil {
				parts = append(parts, strings.TrimPrefix(f.Property+": ", ": ")+f.Reason)
				continue
			}
			parts = append(parts, checkDiag(r.tmpl, res, f, diag.Error).Error())
		}
		sort.Strings(parts)
		return cty.NilVal, strings.Join(parts, "; ")
	}
	if resp.Props != cty.NilVal && !resp.Props.IsNull() {
		props = resp.Props
	}
	return props, ""
}

// sameProvider reports whether provider configuration addr is what the stack's last
// successful deploy applied with (see sameProviderAs).
func (r *run) sameProvider(addr string, config bool) bool {
	return sameProviderAs(r.appliedWith, r.ps, addr, config)
}

// sameProviderAs reports whether provider configuration addr is the one appliedWith records:
// the same plugin version and, with config, the same evaluated configuration (addr must be
// configured by then).
func sameProviderAs(appliedWith map[string]providerFP, ps *providerSet, addr string, config bool) bool {
	prior, ok := appliedWith[addr]
	if !ok {
		return false
	}
	if !config {
		return prior.Version == ps.version(addr)
	}
	cur, ok := ps.fingerprint(addr)
	return ok && cur.Config != "" && cur == prior
}

// warn keeps a provider warning about a resource for the event that ends its step.
func (r *run) warn(name, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warned == nil {
		r.warned = map[string][]string{}
	}
	r.warned[name] = append(r.warned[name], msg)
}

// warnings is the reason of a step that succeeded with warnings, as terraform prints them
// after apply ("Warning: summary: detail"); "" when there were none.
func (r *run) warnings(name string, ds diag.Diagnostics) string {
	r.mu.Lock()
	msgs := r.warned[name]
	r.mu.Unlock()
	for _, d := range ds {
		if d.Severity == diag.Warning {
			msgs = append(msgs, strings.TrimSuffix(d.Summary+": "+d.Detail, ": "))
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return "Warning: " + strings.Join(msgs, "; Warning: ")
}

// unchanged reports whether a Terraform-language resource's configuration is the one its
// last successful apply stored, so it needs no check (see source.applied).
func (r *run) unchanged(res *template.Resource, props cty.Value) bool {
	prior, ok := r.prior[res.Name]
	if !ok || !r.pol.SkipsUnchanged || r.req.Deploy == nil || r.req.Deploy.Upgrade {
		return false
	}
	if _, ok := r.checkedFor(res); ok && r.sameProvider(res.Provider, false) {
		return true // inputs took the checked props, which encode to prior's (checkedprops.go)
	}
	return appliedFrom(prior, res, props)
}

// applied reports whether a row holds an object its last step created, updated or imported
// successfully.
func applied(row state.Resource) bool {
	return strings.HasSuffix(row.Status, "_COMPLETE") && !strings.HasPrefix(row.Status, "DELETE")
}

// appliedFrom reports whether row is a successful apply of res's configuration props, by the
// same provider configuration.
func appliedFrom(row state.Resource, res *template.Resource, props cty.Value) bool {
	if row.Provider != res.Provider || !applied(row) {
		return false
	}
	b, err := value.Marshal(props)
	return err == nil && bytes.Equal(b, row.Props)
}

// read reads a data source; its value lives in the run's scope only (data sources are read
// again by every operation, and are not stored).
func (r *run) read(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, config cty.Value) error {
	resp, err := p.ReadData(ctx, provider.ReadDataRequest{Resource: r.resource(res), Config: config})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	if fail != "" && res.Check != "" {
		return r.scopedReadFailed(ctx, sc, res, fail)
	}
	if fail != "" {
		if err := r.event(ctx, res.Name, "", res.Type, "READ_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{res.Name, fail}
	}
	sc.set(res.Name, template.ResourceValue{ID: idOf(resp.State, res.Name), Outputs: resp.State})
	return nil
}

// idOf is a Terraform state's id attribute, or fallback when it has none.
func idOf(state cty.Value, fallback string) cty.Value {
	if state.Type().IsObjectType() && state.Type().HasAttribute("id") && !state.IsNull() {
		if id := state.GetAttr("id"); id.IsKnown() && !id.IsNull() && id.Type() == cty.String {
			return id
		}
	}
	return cty.StringVal(fallback)
}

func (r *run) resource(res *template.Resource) provider.Resource {
	pr := r.e.providerResource(r.pol, r.stack.Name, r.req.StackID, res)
	pr.StackKey = r.op.Stack
	return pr
}

// callFailure turns a provider call's outcome into the reason it failed ("" if it did not),
// or errShutdown when the engine is stopping and the call must be retried after a restart.
func (r *run) callFailure(ctx context.Context, err error, diags diag.Diagnostics) (string, error) {
	if r.e.runCtx.Err() != nil {
		return "", errShutdown
	}
	if cancelled(ctx) {
		return "Resource operation cancelled by the user", nil
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

// resumedCreate is the reason given when a plugin's create (Terraform, Pulumi) is made again after
// cairn stopped in the middle of it (the journal holds its start but not its end).
const resumedCreate = "Resuming after a restart: the create started before cairn stopped is made again. " +
	"If the provider had already created an object then, cairn never learned its id: find it and delete it or import it."

func (r *run) create(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, props cty.Value) error {
	key := "create/" + res.Name
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	reason := ""
	if resumed && r.pol.BlindResumedCreates {
		// A custom resource's handler sees the same RequestId again; a plugin cannot tell a
		// repeated create from a new one, so say what may exist beside the state.
		reason = resumedCreate
	}
	if !resumed || reason != "" {
		if err := r.event(ctx, res.Name, "", res.Type, "CREATE_IN_PROGRESS", reason); err != nil {
			return err
		}
	}
	pctx := r.progress(ctx, res.Name, "", res.Type, "CREATE_IN_PROGRESS")
	resp, err := p.Create(pctx, provider.CreateRequest{Resource: r.resource(res), Token: token, Props: props, Timeout: res.Timeouts.Create})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	id := resp.ID
	if id == "" && r.pol.OptionalIDs && fail == "" { // e.g. a Terraform resource without an id attribute
		id = newID()
	}
	row, err := r.row(res, id, props, resp.Outputs)
	if err != nil {
		return err
	}
	row.Private = resp.Private
	if fail != "" {
		row.Status, row.StatusReason = "CREATE_FAILED", fail
		d := detail{Kind: "create", After: imageOf(row), NotCreated: resp.NotCreated}
		if err := r.end(ctx, key, token, true, d, state.Write{Put: &row}); err != nil {
			return err
		}
		if err := r.event(ctx, res.Name, row.ID, res.Type, "CREATE_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{res.Name, fail}
	}
	row.Status = "CREATE_COMPLETE"
	pending := r.taintUntilProvisioned(&row, res) // provision.go
	if err := r.end(ctx, key, token, false, detail{Kind: "create", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	r.markChanged(res.Name)
	if pending {
		return r.provision(ctx, sc, res, row, "CREATE_COMPLETE", r.warnings(res.Name, resp.Diagnostics))
	}
	if err := sc.setRow(row); err != nil {
		return err
	}
	return r.event(ctx, res.Name, row.ID, res.Type, "CREATE_COMPLETE", r.warnings(res.Name, resp.Diagnostics))
}

// update updates a resource in place, or with viaCreate replaces it by creating a new copy
// first (create_before_destroy); the old copy is deleted in the cleanup phase.
func (r *run) update(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, prior state.Resource, oldProps, props cty.Value, viaCreate bool) error {
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
	var resp provider.UpdateResponse
	var made provider.CreateResponse // the new copy's create, when viaCreate
	pctx := r.progress(ctx, res.Name, prior.ID, res.Type, "UPDATE_IN_PROGRESS")
	if viaCreate {
		made, err = p.Create(pctx, provider.CreateRequest{Resource: r.resource(res), Token: token, Props: props, Timeout: res.Timeouts.Create})
		resp = provider.UpdateResponse{ID: made.ID, Outputs: made.Outputs, Private: made.Private, Diagnostics: made.Diagnostics}
		if resp.ID == "" || resp.ID == prior.ID {
			resp.ID = newID()
		}
	} else {
		resp, err = p.Update(pctx, provider.UpdateRequest{Resource: r.resource(res), Token: token, ID: prior.ID,
			OldProps: oldProps, NewProps: props, OldOutputs: oldOuts, Private: prior.Private, Timeout: res.Timeouts.Update})
		if resp.ID == "" && r.pol.OptionalIDs {
			resp.ID = prior.ID
		}
	}
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	if fail != "" && viaCreate && made.ID != "" && r.pol.UpdatesFailedCreates {
		return r.failedNewCopy(ctx, key, token, res, prior, props, made, fail) // deposed.go
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
	row.Status, row.Private = "UPDATE_COMPLETE", resp.Private
	pending := viaCreate && r.taintUntilProvisioned(&row, res) // provision.go
	d := detail{Kind: "update", Before: imageOf(prior), After: imageOf(row), Replaced: viaCreate}
	if err := r.end(ctx, key, token, false, d, state.Write{Put: &row}); err != nil {
		return err
	}
	r.markChanged(res.Name)
	if pending {
		return r.provision(ctx, sc, res, row, "UPDATE_COMPLETE", r.warnings(res.Name, resp.Diagnostics))
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
	return r.event(ctx, res.Name, row.ID, res.Type, "UPDATE_COMPLETE", r.warnings(res.Name, resp.Diagnostics))
}

// row builds a resource row for res.
func (r *run) row(res *template.Resource, id string, props, outputs cty.Value) (state.Resource, error) {
	pb, err := value.Marshal(props)
	if err != nil {
		return state.Resource{}, fmt.Errorf("cannot encode properties of %s: %w", res.Name, err)
	}
	var ob []byte
	if outputs != cty.NilVal && !outputs.IsNull() && known(outputs) {
		outputs = secretOutputs(res, outputs) // options.go
		if ob, err = value.Marshal(outputs); err != nil {
			return state.Resource{}, fmt.Errorf("cannot encode outputs of %s: %w", res.Name, err)
		}
	}
	return state.Resource{Stack: r.op.Stack, Name: res.Name, Type: res.Type, ID: id, Props: pb, Outputs: ob,
		Deps: r.managedDeps(res), DeletionPolicy: string(res.DeletionPolicy), Protect: res.PreventDestroy, Provider: res.Provider,
		UpdatedAt: r.e.now()}, nil
}

// managedDeps are the resources res depends on that have rows (not data sources, ephemeral
// resources or provider configurations): the order in which they are deleted.
func (r *run) managedDeps(res *template.Resource) []string {
	rowless := func(d string) bool {
		dr := r.tmpl.Resource(d)
		return dr == nil || dr.Mode != template.Managed
	}
	if !slices.ContainsFunc(res.DependsOn, rowless) {
		return res.DependsOn
	}
	return slices.DeleteFunc(slices.Clone(res.DependsOn), rowless)
}
