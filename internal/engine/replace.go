package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// replace replaces a Terraform resource whose plan requires it (or a tainted one, whose create
// failed after making an object), in the order the plan gives: delete-first destroys the old
// object (after the dependents that are replaced delete-first too) and creates the new one;
// create-first makes the new copy first, and the old one goes in the cleanup phase.
func (r *run) replace(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, prior state.Resource, props cty.Value, order plan.Order) error {
	r.markReplaced(res.Name)
	if order == plan.CreateFirst {
		oldProps, err := value.Unmarshal(prior.Props)
		if err != nil {
			return fmt.Errorf("cannot decode properties of %s: %w", res.Name, err)
		}
		return r.update(ctx, sc, p, res, prior, oldProps, props, true)
	}
	if err := r.destroyDependentsFirst(ctx, res); err != nil {
		return err
	}
	if err := r.deleteOne(ctx, "replace/"+res.Name, targetOf(prior)); err != nil {
		return err
	}
	return r.create(ctx, sc, p, res, props)
}

// ReplacedFirstReason is the reason of the DELETE_IN_PROGRESS event of a delete-first
// replacement, so the event log tells it from a resource removed from the template: the
// CREATE that follows in the same operation makes the replacement.
const ReplacedFirstReason = "Resource replacement: the old physical resource is deleted before the new one is created"

// deleteReason is the DELETE_IN_PROGRESS reason of the delete step keyed key.
func deleteReason(key string) string {
	if strings.HasPrefix(key, "replace/") {
		return ReplacedFirstReason
	}
	return ""
}

// destroyDependentsFirst destroys the existing resources downstream of res that plan.Cascade
// says go before it: those whose plan, with the replaced resources' new values unknown, is a
// delete-first replacement too. Their own steps then create them anew. A dependent whose
// plan cannot be made now is left to its step.
func (r *run) destroyDependentsFirst(ctx context.Context, res *template.Resource) error {
	deps := func(name string) []string { return dependenciesOf(r.tmpl, name) }
	doomed := plan.Cascade(r.order(), deps, res.Name, func(name string, replaced map[string]bool) bool {
		d := r.tmpl.Resource(name)
		if d == nil || d.Mode != template.Managed || r.isGone(name) {
			return false
		}
		prior, had := r.prior[name]
		if !had || prior.ID == "" || !applied(prior) {
			return false
		}
		return r.planReplaces(ctx, d, prior, replaced)
	})
	if r.req.Plan != nil {
		if err := r.req.Plan.HoldsCascade(res.Name, doomed); err != nil {
			return r.failStep(context.WithoutCancel(ctx), res, "", "UPDATE_FAILED", err.Error())
		}
	}
	for _, name := range doomed {
		if !r.claimGone(name) {
			continue // another replacement upstream of it destroyed it already
		}
		if err := r.deleteOne(ctx, "replace/"+name, targetOf(r.prior[name])); err != nil {
			return err
		}
	}
	return nil
}

// planReplaces plans d as the preview does, with the resources in replaced unknown, and
// reports whether plan.Decide makes it a delete-first replacement.
func (r *run) planReplaces(ctx context.Context, d *template.Resource, prior state.Resource, replaced map[string]bool) bool {
	p, err := r.ps.configured(ctx, r.sc, d.Type, d.Provider)
	if err != nil {
		return false
	}
	props, diags := evalBody(ctx, p, schemaKind(d), d.Properties, overlay{r.sc, replaced})
	if diags.HasErrors() {
		return false
	}
	oldProps, err1 := value.Unmarshal(prior.Props)
	oldOuts, err2 := value.Unmarshal(prior.Outputs)
	if err1 != nil || err2 != nil {
		return false
	}
	props = ignoring(d, props, oldProps)
	diff, err := p.Diff(ctx, provider.DiffRequest{Resource: r.resource(d), ID: prior.ID, OldProps: oldProps, NewProps: props,
		OldOutputs: oldOuts, Private: prior.Private})
	if err != nil || diff.Diagnostics.HasErrors() {
		return false
	}
	f := factsOf(r.pol, d, prior, true, false)
	f.Diff = answerOf(diff)
	f.Triggered = r.triggered(d)
	for _, a := range d.ReplaceTriggeredBy {
		f.Triggered = f.Triggered || replaced[a]
	}
	f.Triggered = f.Triggered || replacedWith(d, replaced)
	step, err := plan.Decide(f)
	return err == nil && step.Action == plan.Replace && step.Order == plan.DeleteFirst
}

// overlay is a scope where some resources are unknown (about to be replaced).
type overlay struct {
	template.Scope
	unknown map[string]bool
}

func (o overlay) Resource(name string) (template.ResourceValue, bool) {
	if o.unknown[name] {
		return template.UnknownResource, true
	}
	return o.Scope.Resource(name)
}

// order is the template's resources in dependency order, computed once per run.
func (r *run) order() []string {
	r.orderOnce.Do(func() { r.topo = topoOrder(r.tmpl) })
	return r.topo
}

// claimGone marks a resource destroyed ahead of its own step, once; isGone tells that step
// to create it.
func (r *run) claimGone(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone[name] {
		return false
	}
	if r.gone == nil {
		r.gone = map[string]bool{}
	}
	r.gone[name] = true
	return true
}

func (r *run) isGone(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gone[name]
}
