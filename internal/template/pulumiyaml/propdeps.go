package pulumiyaml

import (
	"maps"
	"slices"

	"github.com/cairn-dev/cairn/internal/template"
)

// Property dependencies, as Pulumi records them (a deployment's propertyDependencies): for
// each top-level input property, the resources whose outputs its value is made of. An
// invoke's result counts as the resources its arguments use and its dependsOn names
// (pulumi-yaml returns it as an output with those dependencies), not as a resource itself.

// propertyDeps records the resources (and invokes, expanded later) each top-level property of
// r uses.
func (p *parser) propertyDeps(r *template.Resource, props expr, at where) {
	obj, ok := props.(objectExpr)
	if !ok || len(obj.keys) == 0 {
		return
	}
	reported := len(p.ds) // what the walk finds wrong was reported for the whole properties
	r.PropertyDeps = map[string][]string{}
	for i, key := range obj.keys {
		r.PropertyDeps[key] = p.deps(obj.elems[i], at)
	}
	p.ds = p.ds[:reported]
}

// expandInvokeDeps replaces the invokes among property dependencies by what each invoke
// depends on (its provider aside), once the invokes' data resources are known.
func (p *parser) expandInvokeDeps(st *template.Stack) {
	invokeDeps := map[string][]string{}
	for _, r := range st.Resources {
		if r.Mode == template.Data && isInvokeName(r.Name) {
			var deps []string
			for _, d := range r.DependsOn {
				if inv := p.invokes[r.Name]; inv == nil || d != p.prog.nameOf(inv.provider) {
					deps = append(deps, d)
				}
			}
			invokeDeps[r.Name] = deps
		}
	}
	var add func(set, seen map[string]bool, d string)
	add = func(set, seen map[string]bool, d string) {
		inner, isInvoke := invokeDeps[d]
		if !isInvoke {
			set[d] = true
			return
		}
		if seen[d] { // invokes cannot form a cycle (checkCycles), but a walk must end regardless
			return
		}
		seen[d] = true
		for _, x := range inner {
			add(set, seen, x)
		}
	}
	for _, r := range st.Resources {
		for key, deps := range r.PropertyDeps {
			set := map[string]bool{}
			for _, d := range deps {
				add(set, map[string]bool{}, d)
			}
			r.PropertyDeps[key] = append([]string{}, slices.Sorted(maps.Keys(set))...) // [] for none: Pulumi writes every property
		}
	}
}
