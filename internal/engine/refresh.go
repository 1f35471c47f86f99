package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// Refresh reads resources back through their providers (ReadResource), as terraform plan
// does before planning. It is opt-in (DeployRequest.Refresh, `cairn refresh`): cairn's state
// is the source of truth, and a refresh costs one provider call per resource.
//
// A refreshed object that differs from its state is drift. Its row is stored (deploy,
// refresh) as read, with the read attributes as the configuration it was "applied from", so
// the next plan compares the configuration with the object and never takes the fast path of
// an unchanged configuration. An object the provider no longer finds leaves the state.

const kindRefresh = "refresh"

// refreshedKey is the journal step that marks a deploy's refresh as done: a deploy resumed
// after it does not read everything again.
const refreshedKey = "refresh"

// noReadNote says why resources whose provider cannot read (custom resources) are not
// checked, as CloudFormation's drift detection reports them NOT_CHECKED.
const noReadNote = "custom resources cannot be read back: the custom-resource protocol has no Read request, " +
	"so cairn plans them against its stored state"

// readBack reads one stored resource through p. It returns the row as read (ok false when the
// provider no longer finds the object) and the drift, nil when the object is as stored.
// Diagnostics are the provider's; errors mean the call failed.
func readBack(ctx context.Context, p provider.Provider, pr provider.Resource, row state.Resource) (state.Resource, bool, *api.Change, diag.Diagnostics, error) {
	if row.ID == "" {
		return row, true, nil, nil, nil
	}
	props, err1 := value.Unmarshal(row.Props)
	outs, err2 := value.Unmarshal(row.Outputs)
	if err := errors.Join(err1, err2); err != nil {
		return row, true, nil, nil, fmt.Errorf("cannot decode state of %s: %w", row.Name, err)
	}
	resp, err := p.Read(ctx, provider.ReadRequest{Resource: pr, ID: row.ID, Props: props, Outputs: outs, Private: row.Private})
	if err != nil {
		return row, true, nil, nil, fmt.Errorf("cannot read %s: %w", row.Name, err)
	}
	if resp.Diagnostics.HasErrors() {
		return row, true, nil, resp.Diagnostics, nil
	}
	if resp.ID == "" {
		ch := &api.Change{LogicalID: row.Name, PhysicalID: row.ID, Type: row.Type, Action: api.DriftDeleted}
		for _, pc := range attrChanges(outs, cty.NullVal(cty.DynamicPseudoType), nil) {
			if v, _ := attrOf(outs, pc.Name).UnmarkDeep(); v.CanIterateElements() && v.IsKnown() && !v.IsNull() && v.LengthInt() == 0 {
				continue // an empty block list: terraform shows no line for it
			}
			ch.Details = append(ch.Details, pc)
		}
		return row, false, ch, resp.Diagnostics, nil
	}
	next := row
	next.ID, next.Private = resp.ID, resp.Private
	read := resp.Outputs
	if read != cty.NilVal && !read.IsNull() {
		// The provider marks what its schema says is sensitive; what the configuration made
		// sensitive (a sensitive variable) is marked in the prior state only. terraform marks
		// the object read with the prior state's paths, where they still exist.
		_, priorMarks := outs.UnmarkDeepWithPaths()
		read = value.MarkPaths(read, priorMarks)
		b, err := value.Marshal(read)
		if err != nil {
			return row, true, nil, nil, fmt.Errorf("cannot encode the state of %s: %w", row.Name, err)
		}
		next.Outputs = b
	}
	details := attrChanges(outs, read, nil)
	if resp.PropsRead && resp.Props != cty.NilVal && !resp.Props.IsNull() {
		// The provider reads the inputs: stored as read, drift or not, and what the next
		// deploy diffs against (Pulumi's refresh).
		b, err := value.Marshal(resp.Props)
		if err != nil {
			return row, true, nil, nil, fmt.Errorf("cannot encode the inputs of %s: %w", row.Name, err)
		}
		next.Props = b
		if len(details) == 0 && next.ID == row.ID && bytes.Equal(b, row.Props) {
			return next, true, nil, resp.Diagnostics, nil
		}
		if len(details) == 0 {
			details = attrChanges(props, resp.Props, nil)
		}
		return next, true, &api.Change{LogicalID: row.Name, PhysicalID: next.ID, Type: row.Type, Action: api.DriftChanged, Details: details},
			resp.Diagnostics, nil
	}
	if len(details) == 0 && next.ID == row.ID {
		return next, true, nil, resp.Diagnostics, nil
	}
	// No configuration was applied to what was read: plan it next time. A provider that reads
	// the properties back (other than the stored ones, which a terraform plugin echoes) says
	// what they are now, for a Diff of properties to see; otherwise they are the attributes read.
	next.Props = next.Outputs
	if resp.Props != cty.NilVal && !resp.Props.IsNull() {
		if b, err := value.Marshal(resp.Props); err == nil && !bytes.Equal(b, row.Props) {
			next.Props = b
		}
	}
	ch := &api.Change{LogicalID: row.Name, PhysicalID: next.ID, Type: row.Type, Action: api.DriftChanged, Details: details}
	return next, true, ch, resp.Diagnostics, nil
}

// rowChanged reports whether a read changed what the stack stores of a resource.
func rowChanged(before, after state.Resource) bool {
	return before.ID != after.ID || !bytes.Equal(before.Outputs, after.Outputs) || !bytes.Equal(before.Private, after.Private) ||
		!bytes.Equal(before.Props, after.Props)
}

// driftReason is the reason of the event that reports drift.
func driftReason(ch *api.Change) string {
	if ch.Action == api.DriftDeleted {
		return "Object has been deleted outside of cairn: removed from the stack's state"
	}
	names := make([]string, len(ch.Details))
	for i, d := range ch.Details {
		names[i] = d.Name
	}
	return "Object has changed outside of cairn: " + strings.Join(names, ", ")
}

// refresh reads res back before the preview plans it, when the request asks for it: the plan
// is made against what the provider reads, which the preview does not store.
func (pv *previewer) refresh(ctx context.Context, res *template.Resource) error {
	if res == nil || res.Mode != template.Managed {
		return nil
	}
	row, had := pv.rows[res.Name]
	if !had || row.ID == "" {
		return nil
	}
	p, err := pv.ps.configured(ctx, pv.sc, res.Type, res.Provider)
	if err != nil {
		return err
	}
	if !p.Capabilities().Read {
		pv.notChecked = append(pv.notChecked, res.Name)
		return nil
	}
	return pv.readRow(ctx, p, pv.e.providerResource(pv.st.Policy, pv.stackName, pv.stackID, res), row, res)
}

// refreshOrphans reads back the stored resources the configuration no longer declares, whose
// provider configuration it still has: one deleted outside cairn is not planned for deletion.
func (pv *previewer) refreshOrphans(ctx context.Context) error {
	for _, name := range sortedKeys(pv.rows) {
		row := pv.rows[name]
		if pv.st.Resource(name) != nil || row.ID == "" || row.Provider == "" || pv.st.Provider(row.Provider) == nil {
			continue
		}
		p, err := pv.ps.configured(ctx, pv.sc, row.Type, row.Provider)
		if err != nil || !p.Capabilities().Read {
			continue // it would be deleted with a provider that cannot be configured: the deploy says so
		}
		pr := pv.e.providerResource(pv.st.Policy, pv.stackName, pv.stackID, &template.Resource{Name: name, Type: row.Type})
		if err := pv.readRow(ctx, p, pr, row, nil); err != nil {
			return err
		}
	}
	return nil
}

func (pv *previewer) readRow(ctx context.Context, p provider.Provider, pr provider.Resource, row state.Resource, res *template.Resource) error {
	next, ok, ch, ds, err := readBack(ctx, p, pr, row)
	if err != nil {
		return err
	}
	if ds.HasErrors() {
		if res != nil {
			ds = locate(ds, res, resourcePath(pv.st, res))
		}
		return &ValidationError{Diagnostics: ds}
	}
	if !ok {
		delete(pv.rows, row.Name)
	} else {
		pv.rows[row.Name] = next
	}
	if ch != nil {
		pv.drift = append(pv.drift, *ch)
	}
	return nil
}

// refMark marks the value of one attribute of a resource while relevantDrift evaluates the
// configuration: the marks that reach a result are the attributes it references.
type refMark struct{ res, attr string }

// markingScope is a scope whose resource values carry a refMark on every attribute.
type markingScope struct{ *scope }

func (m markingScope) Resource(name string) (template.ResourceValue, bool) {
	v, ok := m.scope.Resource(name)
	if !ok {
		return v, ok
	}
	v.ID = v.ID.Mark(refMark{name, "id"})
	outs, marks := v.Outputs.Unmark()
	if !outs.Type().IsObjectType() || !outs.IsKnown() || outs.IsNull() {
		v.Outputs = v.Outputs.Mark(refMark{name, ""})
		return v, ok
	}
	attrs := map[string]cty.Value{}
	for k, a := range outs.AsValueMap() {
		attrs[k] = a.Mark(refMark{name, k})
	}
	v.Outputs = cty.ObjectVal(attrs).WithMarks(marks)
	return v, ok
}

// relevantDrift keeps the drift that terraform plan shows: the attributes of drifted
// resources that the planned changes reference, directly or through the configuration of
// the resources they reference. Drift that only the plan itself repairs is not shown; a
// refresh-only run shows it all.
func (pv *previewer) relevantDrift(ctx context.Context, changes []api.Change) []api.Change {
	if len(pv.drift) == 0 {
		return nil
	}
	relevant := map[string]map[string]bool{} // resource -> attributes ("" for all)
	seen := map[string]bool{}
	var queue []string
	for _, c := range changes {
		if c.Action != api.ActionNoop && pv.st.Resource(c.LogicalID) != nil && !seen[c.LogicalID] {
			seen[c.LogicalID] = true
			queue = append(queue, c.LogicalID)
		}
	}
	for len(queue) > 0 {
		res := pv.st.Resource(queue[0])
		queue = queue[1:]
		for _, m := range pv.references(ctx, res) {
			if relevant[m.res] == nil {
				relevant[m.res] = map[string]bool{}
			}
			relevant[m.res][m.attr] = true
			if !seen[m.res] && pv.st.Resource(m.res) != nil {
				seen[m.res] = true
				queue = append(queue, m.res)
			}
		}
	}
	var out []api.Change
	for _, d := range pv.drift {
		attrs := relevant[d.LogicalID]
		if attrs == nil {
			continue
		}
		if d.Action == api.DriftDeleted || attrs[""] {
			out = append(out, d)
			continue
		}
		kept := d
		kept.Details = nil
		for _, pc := range d.Details {
			if attrs[pc.Name] {
				kept.Details = append(kept.Details, pc)
			}
		}
		if len(kept.Details) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

// references lists the resource attributes res's configuration reads, by evaluating it with
// every attribute marked. A configuration that cannot be evaluated so references all of the
// resources it depends on.
func (pv *previewer) references(ctx context.Context, res *template.Resource) []refMark {
	fallback := func() []refMark {
		out := make([]refMark, len(res.DependsOn))
		for i, d := range res.DependsOn {
			out[i] = refMark{d, ""}
		}
		return out
	}
	p, err := pv.ps.configured(ctx, pv.sc, res.Type, res.Provider)
	if err != nil {
		return fallback()
	}
	v, diags := evalBody(ctx, p, schemaKind(res), res.Properties, markingScope{pv.sc})
	if diags.HasErrors() || v == cty.NilVal {
		return fallback()
	}
	_, pvms := v.UnmarkDeepWithPaths()
	var out []refMark
	for _, pvm := range pvms {
		for m := range pvm.Marks {
			if rm, ok := m.(refMark); ok {
				out = append(out, rm)
			}
		}
	}
	return out
}

// refreshThenForward is a deploy's forward phase: the refresh the request asks for, then the
// walk that applies the configuration.
func (r *run) refreshThenForward(ctx context.Context) (string, error) {
	if r.req.Deploy != nil && r.req.Deploy.Refresh {
		if _, done := r.ended(refreshedKey); !done {
			failure, _, err := r.refreshAll(ctx)
			if err != nil || failure != "" {
				return failure, err
			}
			if err := r.end(ctx, refreshedKey, "", false, detail{Kind: kindRefresh}); err != nil {
				return "", err
			}
		}
	}
	return r.forward(ctx)
}

// refreshAll reads back every stored resource of the stack in dependency order (and reads the
// data sources, which provider configurations may need), journalling and storing each object
// whose state the read changed: one atomic write per resource, so a run killed in the middle
// keeps what it read and reads the rest again when resumed. It updates r.prior. It returns
// the reason the refresh failed ("" when it did not) and the drift it found.
func (r *run) refreshAll(ctx context.Context) (string, []api.Change, error) {
	sc := r.sc
	for _, res := range r.tmpl.Resources {
		if row, ok := r.prior[res.Name]; ok && row.Status != "CREATE_FAILED" {
			if err := sc.setRow(row); err != nil {
				return "", nil, err
			}
		}
	}
	var mu sync.Mutex
	var drift []api.Change
	r.notChecked = nil
	read := map[string]*state.Resource{} // nil: gone
	refreshOne := func(ctx context.Context, p provider.Provider, pr provider.Resource, row state.Resource) error {
		if !p.Capabilities().Read {
			mu.Lock()
			r.notChecked = append(r.notChecked, row.Name)
			mu.Unlock()
			return sc.setRow(row)
		}
		next, ok, ch, ds, err := readBack(ctx, p, pr, row)
		fail, err := r.callFailure(ctx, err, ds)
		if err != nil {
			return err
		}
		if fail != "" {
			if err := r.event(ctx, row.Name, row.ID, row.Type, "REFRESH_FAILED", fail); err != nil {
				return err
			}
			return &stepFailed{row.Name, fail}
		}
		if !ok || rowChanged(row, next) {
			w := state.Write{Put: &next}
			d := detail{Kind: kindRefresh, Before: imageOf(row), After: imageOf(next)}
			if !ok {
				w, d.After = state.Write{Delete: row.Name}, nil
			}
			if err := r.end(ctx, "refresh/"+row.Name, "", false, d, w); err != nil {
				return err
			}
		}
		mu.Lock()
		if ok {
			read[row.Name] = &next
		} else {
			read[row.Name] = nil
		}
		if ch != nil {
			drift = append(drift, *ch)
		}
		mu.Unlock()
		if ch != nil {
			if err := r.event(ctx, row.Name, next.ID, row.Type, "REFRESH_COMPLETE", driftReason(ch)); err != nil {
				return err
			}
		}
		if r.tmpl.Resource(row.Name) == nil {
			return nil
		}
		if !ok {
			sc.set(row.Name, template.UnknownResource)
			return nil
		}
		return sc.setRow(next)
	}
	_, errs := dag.Walk(ctx, graphOf(r.tmpl), dag.WalkOptions{Parallelism: r.parallelism(), StopOnFailure: true},
		func(ctx context.Context, name string) error {
			if cfg := r.tmpl.Provider(name); cfg != nil {
				return r.configure(ctx, cfg)
			}
			res := r.tmpl.Resource(name)
			if res.Mode == template.Data {
				p, props, fail := r.inputs(ctx, sc, res)
				if fail != "" {
					if err := r.event(ctx, name, "", res.Type, "READ_FAILED", fail); err != nil {
						return err
					}
					return &stepFailed{name, fail}
				}
				return r.read(ctx, sc, p, res, props)
			}
			row, had := r.prior[name]
			if !had || row.ID == "" {
				return nil
			}
			p, err := r.ps.configured(ctx, sc, res.Type, res.Provider)
			if err != nil {
				return &stepFailed{name, err.Error()}
			}
			return refreshOne(ctx, p, r.resource(res), row)
		})
	if err := r.stopped(ctx); err != nil {
		return "", nil, err
	}
	var failed []string
	for _, name := range sortedKeys(errs) {
		var sf *stepFailed
		if !errors.As(errs[name], &sf) {
			return "", nil, errs[name]
		}
		failed = append(failed, name)
	}
	if cancelled(ctx) {
		return "Operation cancelled by the user.", nil, nil
	}
	// Resources the configuration no longer declares, whose provider it still configures.
	for _, name := range sortedKeys(r.prior) {
		row := r.prior[name]
		if len(failed) > 0 || r.tmpl.Resource(name) != nil || row.ID == "" || r.tmpl.Provider(row.Provider) == nil {
			continue
		}
		p, err := r.ps.configured(ctx, sc, row.Type, row.Provider)
		if err != nil {
			continue
		}
		pr := r.e.providerResource(r.pol, r.stack.Name, r.req.StackID, &template.Resource{Name: name, Type: row.Type})
		pr.StackKey = r.op.Stack
		if err := refreshOne(ctx, p, pr, row); err != nil {
			var sf *stepFailed
			if !errors.As(err, &sf) {
				return "", nil, err
			}
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return fmt.Sprintf("The following resource(s) failed to refresh: [%s].", strings.Join(failed, ", ")), drift, nil
	}
	for name, row := range read {
		if row == nil {
			delete(r.prior, name)
		} else {
			r.prior[name] = *row
		}
	}
	slices.SortStableFunc(drift, func(a, b api.Change) int { return strings.Compare(a.LogicalID, b.LogicalID) })
	slices.Sort(r.notChecked)
	return "", drift, nil
}

// Refresh reads every resource of a Terraform-language stack back through its provider and
// stores what it reads, changing no real object, as terraform apply -refresh-only does. Data
// sources are read again and the outputs evaluated anew. It holds the stack's lease while it
// runs; killed in the middle, the resources read so far keep their refreshed state and the
// operation is finished when the engine resumes it (reading everything again).
func (e *Engine) Refresh(ctx context.Context, stack string, req api.RefreshRequest) (api.RefreshResponse, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	if err := validStackName(stack); err != nil {
		return api.RefreshResponse{}, err
	}
	key := stackKey(ctx, stack)
	prior, err := e.store.GetStack(ctx, key)
	if err == nil && prior.Status == "DELETE_COMPLETE" {
		err = state.ErrNotFound
	}
	if err != nil {
		return api.RefreshResponse{}, fmt.Errorf("cannot find stack %s: %w", stack, err)
	}
	pol := policyOf(prior.Dialect)
	src := req.Source
	if src == nil {
		src = &api.DeployRequest{}
		if err := json.Unmarshal(prior.Template, src); err != nil {
			return api.RefreshResponse{}, fmt.Errorf("cannot decode the configuration of stack %s: %w", stack, err)
		}
	}
	if pol.FromFiles != (src.Files != nil) {
		return api.RefreshResponse{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"stack %s is a %s stack: refresh it with its own kind of template", stack, pol.Name)}}
	}
	loaded := sourceOf(*src)
	loaded.previous = rememberedParameters(prior) // a template given without parameters keeps the stack's
	st, ps, diags := e.load(ctx, stack, prior.ID, loaded, 0)
	if st == nil {
		return api.RefreshResponse{}, &ValidationError{Diagnostics: diags}
	}
	ho := &handoff{tmpl: st, ps: ps, refreshed: make(chan refreshed, 1)}
	oreq := opRequest{Kind: kindRefresh, StackID: prior.ID, Dialect: prior.Dialect, Deploy: src, Code: e.codeRight(ctx)}
	body, err := json.Marshal(oreq)
	if err != nil {
		ho.close()
		return api.RefreshResponse{}, fmt.Errorf("cannot encode operation: %w", err)
	}
	now := e.now()
	op := state.Operation{ID: newID(), Stack: key, Kind: kindRefresh, Status: state.Running, Request: body, Owner: e.o.Owner,
		LeaseExpires: now.Add(e.o.LeaseTTL), StartedAt: now}
	if err := e.store.StartOperation(ctx, op); err != nil {
		ho.close()
		return api.RefreshResponse{}, err
	}
	// The refresh runs as a deploy does, on the engine's context: a client that goes away
	// leaves it to finish (one left half-done would hold the stack's lease), Cancel stops it,
	// and a shutdown leaves it to be resumed at the next start.
	e.goRun(op, false, ho)
	e.mu.Lock()
	done := e.running[op.ID]
	e.mu.Unlock()
	if done == nil { // the run ended already
		done = make(chan struct{})
		close(done)
	}
	answer := func(res refreshed) (api.RefreshResponse, error) {
		if res.err != nil {
			return api.RefreshResponse{}, res.err
		}
		res.resp.Stack, res.resp.Diagnostics = stack, APIDiagnostics(diags)
		return res.resp, nil
	}
	select {
	case res := <-ho.refreshed:
		return answer(res)
	case <-done:
		select {
		case res := <-ho.refreshed:
			return answer(res)
		default: // it ended before refreshing (it could not load, or the store failed)
		}
		got, err := e.store.GetOperation(context.WithoutCancel(ctx), op.ID)
		if err == nil && got.Status == state.Running {
			return api.RefreshResponse{}, fmt.Errorf("refresh of stack %s stopped with the server: operation %s is resumed at its next start", stack, op.ID)
		}
		if err == nil {
			err = errors.New(got.StatusReason)
		}
		return api.RefreshResponse{}, fmt.Errorf("refresh of stack %s failed: %w", stack, err)
	case <-ctx.Done():
		return api.RefreshResponse{}, fmt.Errorf("stopped waiting for the refresh of stack %s, which goes on as operation %s: %w", stack, op.ID, context.Cause(ctx))
	}
}

// refreshed is what a refresh run hands back to the request that started it.
type refreshed struct {
	resp api.RefreshResponse
	err  error
}

// refreshOnly runs a refresh operation to its end: every resource and data source read,
// the outputs stored, the operation finished.
func (r *run) refreshOnly(ctx context.Context) (api.RefreshResponse, error) {
	resp := api.RefreshResponse{Drift: []api.Change{}}
	failure, drift, err := r.refreshAll(ctx)
	if err != nil {
		return resp, err
	}
	resp.Drift = append(resp.Drift, drift...)
	if resp.NotChecked = r.notChecked; len(resp.NotChecked) > 0 {
		resp.Note = noReadNote
	}
	if failure == "" && !r.pol.RefreshKeepsOutputs {
		before := map[string]any{}
		var old []api.Output
		_ = json.Unmarshal(r.stack.Outputs, &old)
		for _, o := range old {
			before[o.Name] = o.Value
		}
		outs, diags := r.outputs(r.sc)
		if diags.HasErrors() {
			failure = "Outputs could not be evaluated: " + reasonOf(diags.Err())
		} else {
			var now []storedOutput
			_ = decodeOutputs(outs, &now)
			for i, o := range now {
				b, had := before[o.Name]
				if o.Value == api.UnknownMarker { // it names a resource deleted outside cairn: keep what was stored
					now[i].Value, now[i].Secret = b, secretOf(r.stack.Outputs, o.Name)
					continue
				}
				if !had || !sameJSON(b, o.Value) {
					resp.OutputChanges = append(resp.OutputChanges, api.PropertyChange{Name: o.Name, Before: b, After: o.Value})
				}
			}
			if outs, err = json.Marshal(now); err != nil {
				return resp, fmt.Errorf("cannot encode outputs: %w", err)
			}
			if len(resp.OutputChanges) > 0 {
				st, err := r.e.store.GetStack(context.WithoutCancel(ctx), r.op.Stack)
				if err != nil {
					return resp, fmt.Errorf("cannot read stack %s: %w", r.stack.Name, err)
				}
				st.Outputs = outs
				if err := r.e.store.PutStack(context.WithoutCancel(ctx), st); err != nil {
					return resp, fmt.Errorf("cannot write stack %s: %w", r.stack.Name, err)
				}
			}
		}
	}
	status := state.Succeeded
	if failure != "" {
		status = state.Failed
	}
	if err := r.e.finishOp(context.WithoutCancel(ctx), r.op.ID, status, failure); err != nil {
		return resp, err
	}
	if failure != "" {
		// What was read is stored; the events name the resources that failed and why.
		return resp, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "%s", failure)}}
	}
	return resp, nil
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
