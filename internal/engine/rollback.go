package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// target is what a delete step removes: a physical resource with the properties it was
// created with.
type target struct {
	name, typ, id string
	props         json.RawMessage
	outputs       json.RawMessage
	private       []byte
	provider      string // provider configuration (Terraform language)
	removeRow     bool   // the row goes with it (a removed or rolled-back resource, not an old copy)
	made          bool   // made by this run (a rollback): deleted through the run's provider configuration
}

// targetOf is what deleting a stored row removes.
func targetOf(row state.Resource) target {
	return target{name: row.Name, typ: row.Type, id: row.ID, props: row.Props, outputs: row.Outputs,
		private: row.Private, provider: row.Provider, removeRow: true}
}

// imageTarget is what deleting a journaled copy of res removes.
func (r *run) imageTarget(name string, im *image) target {
	t := target{name: name, typ: r.typeOf(name), id: im.ID, props: im.Props, outputs: im.Outputs, private: im.Private}
	if res := r.tmpl.Resource(name); res != nil {
		t.provider = res.Provider
	} else {
		t.provider = r.prior[name].Provider
	}
	return t
}

// rollback undoes what the forward phase did, newest dependencies last: created resources are
// deleted (a failed create too, with the id its handler reported), updated ones get an Update
// back to their old properties.
func (r *run) rollback(ctx context.Context, phase, reason string) error {
	if cancelled(ctx) {
		ctx = r.base // a cancelled update still rolls back
	}
	prefix := "UPDATE_ROLLBACK"
	if r.req.Creating {
		prefix = "ROLLBACK"
	}
	if phase == phaseRollback {
		if r.stack.Status != prefix+"_IN_PROGRESS" {
			if err := r.setStatus(ctx, prefix+"_IN_PROGRESS", reason); err != nil {
				return err
			}
		}
		touched := r.endedWith("create", "update")
		g := r.depGraph(touched)
		outcomes, errs := dag.Walk(ctx, g.Reverse(), dag.WalkOptions{Parallelism: r.parallelism()},
			func(ctx context.Context, name string) error { return r.undo(ctx, name, touched[name]) })
		if err := r.stopped(ctx); err != nil {
			return err
		}
		if err := storeError(errs); err != nil {
			return err
		}
		if !allDone(outcomes) {
			return r.finish(ctx, prefix+"_FAILED", reason, false)
		}
		if r.req.Creating {
			return r.finish(ctx, "ROLLBACK_COMPLETE", reason, false)
		}
		if err := r.enter(ctx, phaseRollbackCleanup, reason); err != nil {
			return err
		}
	}
	if err := r.setStatus(ctx, "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", ""); err != nil {
		return err
	}
	var targets []target
	for name, d := range r.endedWith("rollback") {
		if d.Kind == "update" && d.Before != nil && d.After != nil && d.Before.ID != d.After.ID {
			targets = append(targets, r.imageTarget(name, d.Before))
		}
	}
	if err := r.deleteAll(ctx, "rollback-cleanup", targets, nil); err != nil {
		return err
	}
	if p := r.req.Previous; p != nil { // the stack is back to its previous template and parameters
		r.stack.Template, r.stack.Parameters, r.stack.Description = p.Template, p.Parameters, p.Description
	}
	return r.finish(ctx, "UPDATE_ROLLBACK_COMPLETE", reason, false)
}

func allDone(outcomes map[string]dag.Outcome) bool {
	for _, o := range outcomes {
		if o != dag.Done {
			return false
		}
	}
	return true
}

// storeError returns the first error that is not a step's failure: the run cannot go on.
func storeError(errs map[string]error) error {
	for _, name := range sortedKeys(errs) {
		var sf *stepFailed
		if !errors.As(errs[name], &sf) {
			return errs[name]
		}
	}
	return nil
}

// depGraph is the template's dependency graph restricted to names.
func (r *run) depGraph(names map[string]stepEnd) *dag.Graph {
	g := dag.New()
	for _, res := range r.tmpl.Resources {
		if _, ok := names[res.Name]; ok {
			g.Add(res.Name, res.DependsOn...)
		}
	}
	return g
}

func (r *run) typeOf(name string) string {
	if res := r.tmpl.Resource(name); res != nil {
		return res.Type
	}
	return r.prior[name].Type
}

// undo rolls back one resource's forward step.
func (r *run) undo(ctx context.Context, name string, fwd stepEnd) error {
	key := "rollback/" + name
	if je, ok := r.ended(key); ok {
		if je.Failed {
			return &stepFailed{name, "rollback failed before the restart"}
		}
		return nil
	}
	res := r.tmpl.Resource(name)
	if fwd.Kind == "create" && fwd.failed && fwd.NotCreated != "" {
		t := r.imageTarget(name, fwd.After)
		t.removeRow = true
		return r.skipDelete(ctx, key, t, "Delete skipped: "+fwd.NotCreated)
	}
	if fwd.Kind == "create" {
		id := fwd.After.ID
		if id == "" { // CloudFormation sends a generated id when the create reported none
			id = fmt.Sprintf("%s-%s-%s", r.stack.Name, name, newID()[:12])
		}
		t := r.imageTarget(name, fwd.After)
		t.id, t.removeRow, t.made = id, true, true
		return r.deleteOne(ctx, key, t)
	}
	p, err := r.ps.configured(ctx, r.sc, res.Type, res.Provider)
	if err != nil {
		return &stepFailed{name, err.Error()}
	}
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	if !resumed {
		if err := r.event(ctx, name, fwd.After.ID, res.Type, "UPDATE_IN_PROGRESS", ""); err != nil {
			return err
		}
	}
	oldProps, err1 := value.Unmarshal(fwd.Before.Props)
	newProps, err2 := value.Unmarshal(fwd.After.Props)
	newOuts, err3 := value.Unmarshal(fwd.After.Outputs)
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("cannot decode journal of %s: %w", name, err)
	}
	// Properties swapped: the old ones are the goal, the failed new ones are "old".
	pctx := r.progress(ctx, name, fwd.After.ID, res.Type, "UPDATE_IN_PROGRESS")
	resp, err := p.Update(pctx, provider.UpdateRequest{Resource: r.resource(res), Token: token, ID: fwd.After.ID,
		OldProps: newProps, NewProps: oldProps, OldOutputs: newOuts, Private: fwd.After.Private})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	if fail != "" {
		row, err := r.row(res, fwd.After.ID, newProps, newOuts)
		if err != nil {
			return err
		}
		row.Status, row.StatusReason = "UPDATE_FAILED", fail
		if err := r.end(ctx, key, token, true, detail{Kind: "update", Before: fwd.After}, state.Write{Put: &row}); err != nil {
			return err
		}
		if err := r.event(ctx, name, row.ID, res.Type, "UPDATE_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{name, fail}
	}
	row, err := r.row(res, resp.ID, oldProps, resp.Outputs)
	if err != nil {
		return err
	}
	row.Status = "UPDATE_COMPLETE"
	if err := r.end(ctx, key, token, false, detail{Kind: "update", Before: fwd.After, After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return err
	}
	return r.event(ctx, name, row.ID, res.Type, "UPDATE_COMPLETE", "")
}

// cleanup runs after a successful update: old copies of replaced resources and resources
// removed from the template are deleted (unless their policy retains them). A failed delete
// here does not fail the stack, as in CloudFormation; the event says what was left behind.
func (r *run) cleanup(ctx context.Context) error {
	if r.req.Creating {
		return r.finish(ctx, "CREATE_COMPLETE", "", true)
	}
	if err := r.setStatus(ctx, "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", ""); err != nil {
		return err
	}
	var targets []target
	retained := map[string]bool{}
	deps := map[string][]string{}
	for name, d := range r.endedWith("update") {
		// Where the engine plans replacements (a Terraform provider's update may change the id
		// attribute without replacing anything), only create_before_destroy leaves an old copy.
		if d.failed || (!d.Replaced && (r.pol.PlansReplacements || d.Before.ID == d.After.ID)) {
			continue
		}
		res := r.tmpl.Resource(name)
		if res.UpdateReplacePolicy == template.Retain {
			retained[name] = true
		}
		deps[name] = res.DependsOn
		targets = append(targets, r.imageTarget(name, d.Before))
	}
	removed := func(name string) bool { return r.tmpl.Resource(name) == nil }
	refused := r.protectedRows(removed) // protect.go
	for name, row := range r.prior {
		if !removed(name) || len(refused) > 0 {
			continue
		}
		if row.DeletionPolicy == string(template.Retain) {
			retained[name] = true
		}
		deps[name] = row.Deps
		targets = append(targets, targetOf(row))
	}
	if err := r.deleteAll(ctx, "cleanup", targets, retained, withDeps(deps)); err != nil {
		return err
	}
	if len(refused) > 0 {
		return r.refuseRemovals(ctx, refused)
	}
	return r.finish(ctx, "UPDATE_COMPLETE", "", true)
}

type deleteOption func(*dag.Graph)

// withDeps orders deletes so that a resource goes before what it depends on.
func withDeps(deps map[string][]string) deleteOption {
	return func(g *dag.Graph) {
		for name, ds := range deps {
			g.Add(name, ds...)
		}
	}
}

// deleteAll deletes targets in reverse dependency order under step kind; retained ones are
// only dropped from state. Failures are reported as events and do not stop the others.
func (r *run) deleteAll(ctx context.Context, kind string, targets []target, retained map[string]bool, opts ...deleteOption) error {
	byName := map[string]target{}
	g := dag.New()
	for _, t := range targets {
		byName[t.name] = t
		g.Add(t.name)
	}
	for _, o := range opts {
		o(g)
	}
	_, errs := dag.Walk(ctx, g.Reverse(), dag.WalkOptions{Parallelism: r.parallelism()},
		func(ctx context.Context, name string) error {
			t := byName[name]
			if retained[name] {
				return r.retain(ctx, kind+"/"+name, t)
			}
			return r.deleteOne(ctx, kind+"/"+name, t)
		})
	if err := r.stopped(ctx); err != nil {
		return err
	}
	return storeError(errs)
}

// retain drops a resource from state without deleting it.
func (r *run) retain(ctx context.Context, key string, t target) error {
	return r.skipDelete(ctx, key, t, "")
}

// skipDelete drops a resource from state without deleting it; reason is its event's.
func (r *run) skipDelete(ctx context.Context, key string, t target, reason string) error {
	if _, ok := r.ended(key); ok {
		return nil
	}
	token, _, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	var writes []state.Write
	if t.removeRow {
		writes = append(writes, state.Write{Delete: t.name})
	}
	if err := r.end(ctx, key, token, false, detail{Kind: "retain"}, writes...); err != nil {
		return err
	}
	return r.event(ctx, t.name, t.id, t.typ, "DELETE_SKIPPED", reason)
}

// deleteOne deletes one physical resource under step key.
func (r *run) deleteOne(ctx context.Context, key string, t target) error {
	if je, ok := r.ended(key); ok {
		if je.Failed {
			return &stepFailed{t.name, "delete failed before the restart"}
		}
		return nil
	}
	p, err := r.ps.forDelete(ctx, r.sc, t) // priorprovider.go
	if err != nil {
		if err := r.event(ctx, t.name, t.id, t.typ, "DELETE_FAILED", err.Error()); err != nil {
			return err
		}
		return &stepFailed{t.name, err.Error()}
	}
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return err
	}
	if !resumed {
		if err := r.event(ctx, t.name, t.id, t.typ, "DELETE_IN_PROGRESS", deleteReason(key)); err != nil {
			return err
		}
	}
	props, err1 := value.Unmarshal(t.props)
	outs, err2 := value.Unmarshal(t.outputs)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("cannot decode state of %s: %w", t.name, err)
	}
	if props.IsNull() {
		props = cty.EmptyObjectVal
	}
	if fail, err := r.deprovision(ctx, key, t); err != nil || fail != "" { // provision.go
		if err != nil {
			return err
		}
		return r.deleteFailed(ctx, key, token, t, fail)
	}
	res := &template.Resource{Name: r.providerName(t.name), Type: t.typ} // deposed.go
	pctx := r.progress(ctx, t.name, t.id, t.typ, "DELETE_IN_PROGRESS")
	resp, err := p.Delete(pctx, provider.DeleteRequest{Resource: r.resource(res), Token: token, ID: t.id, Props: props,
		Outputs: outs, Private: t.private, Timeout: r.deleteTimeout(t.name)})
	fail, err := r.callFailure(ctx, err, resp.Diagnostics)
	if err != nil {
		return err
	}
	d := detail{Kind: "delete", Before: &image{ID: t.id}}
	if fail != "" {
		var writes []state.Write
		if t.removeRow {
			if row, err := r.e.store.GetResource(ctx, r.op.Stack, t.name); err == nil {
				row.Status, row.StatusReason = "DELETE_FAILED", fail
				writes = append(writes, state.Write{Put: &row})
			}
		}
		if err := r.end(ctx, key, token, true, d, writes...); err != nil {
			return err
		}
		if err := r.event(ctx, t.name, t.id, t.typ, "DELETE_FAILED", fail); err != nil {
			return err
		}
		return &stepFailed{t.name, fail}
	}
	var writes []state.Write
	if t.removeRow {
		writes = append(writes, state.Write{Delete: t.name})
	}
	if err := r.end(ctx, key, token, false, d, writes...); err != nil {
		return err
	}
	return r.event(ctx, t.name, t.id, t.typ, "DELETE_COMPLETE", "")
}

// destroy runs a delete operation: every resource, dependents first.
func (r *run) destroy(ctx context.Context) error {
	retainAsked := map[string]bool{}
	for _, n := range r.req.Delete.RetainResources {
		retainAsked[n] = true
	}
	if refused := r.protectedRows(func(name string) bool { return !retainAsked[name] }); len(refused) > 0 { // protect.go
		return r.finish(ctx, "DELETE_FAILED", deleteRefusal(r.pol, refused[0]), false)
	}
	g := dag.New()
	for name, row := range r.prior {
		g.Add(name, row.Deps...)
		if r.tmpl != nil && row.Status != "CREATE_FAILED" {
			if err := r.sc.setRow(row); err != nil {
				return err
			}
			if res := r.tmpl.Resource(name); res != nil && res.PreventDestroy && !retainAsked[name] {
				return r.finish(ctx, "DELETE_FAILED", deleteRefusal(r.pol, name), false)
			}
		}
	}
	ctx2 := ctx
	if !r.req.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx2, cancel = context.WithDeadline(ctx, r.req.Deadline)
		defer cancel()
	}
	_, errs := dag.Walk(ctx2, g.Reverse(), dag.WalkOptions{Parallelism: r.parallelism()},
		func(ctx context.Context, name string) error {
			row := r.prior[name]
			t := targetOf(row)
			if retainAsked[name] || row.DeletionPolicy == string(template.Retain) || row.ID == "" || r.deletedWithStack(name) {
				return r.retain(ctx, "delete/"+name, t)
			}
			return r.deleteOne(ctx, "delete/"+name, t)
		})
	if err := r.stopped(ctx); err != nil {
		return err
	}
	if err := storeError(errs); err != nil {
		return err
	}
	rows, err := r.e.store.ListResources(ctx, r.op.Stack)
	if err != nil {
		return fmt.Errorf("cannot read resources of stack %s: %w", r.stack.Name, err)
	}
	if len(rows) > 0 {
		reason := fmt.Sprintf("The following resource(s) failed to delete: %v.", names(rows))
		switch {
		case cancelled(ctx):
			reason = "Operation cancelled by the user. " + reason
		case ctx2.Err() != nil:
			reason = "Stack timed out after its --timeout. " + reason
		}
		return r.finish(ctx, "DELETE_FAILED", reason, false)
	}
	r.stack.Outputs = nil
	return r.finish(ctx, "DELETE_COMPLETE", "", true)
}

func names(rows []state.Resource) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = row.Name
	}
	return out
}
