package engine

import (
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/template"
)

// A resource replaced in an operation replaces the resources that name it in ReplaceWith
// (Pulumi's replaceWith) in the same operation; an update of it does not (unlike
// ReplaceTriggeredBy). ReplaceWith resources are in DependsOn, so they are decided first.

// replacedWith reports whether a resource res names in ReplaceWith is replaced.
func replacedWith(res *template.Resource, replaced map[string]bool) bool {
	for _, a := range res.ReplaceWith {
		if replaced[a] {
			return true
		}
	}
	return false
}

// markReplaced records that the run replaces name.
func (r *run) markReplaced(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replaced == nil {
		r.replaced = map[string]bool{}
	}
	r.replaced[name] = true
}

// markReplaced records that the deploy would replace name, when step does.
func (pv *previewer) markReplaced(name string, step plan.Step) {
	if step.Action != plan.Replace {
		return
	}
	if pv.replaced == nil {
		pv.replaced = map[string]bool{}
	}
	pv.replaced[name] = true
}
