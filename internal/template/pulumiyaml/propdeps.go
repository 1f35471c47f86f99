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
	// closure is what d stands for: itself, or for an invoke the resources it depends on
	// through other invokes, each invoke's worked out once (a chain of invokes used by many
	// properties would otherwise be walked again for each).
	memo := map[string][]string{}
	var closure func(d string) []string
	closure = func(d string) []string {
		inner, isInvoke := invokeDeps[d]
		if !isInvoke {
			return []string{d}
		}
		if c, ok := memo[d]; ok {
			return c
		}
		memo[d] = nil // invokes cannot form a cycle (checkCycles), but a walk must end regardless
		set := map[string]bool{}
		for _, x := range inner {
			for _, y := range closure(x) {
				set[y] = true
			}
		}
		memo[d] = slices.Sorted(maps.Keys(set))
		return memo[d]
	}
	for _, r := range st.Resources {
		for key, deps := range r.PropertyDeps {
			set := map[string]bool{}
			for _, d := range deps {
				for _, x := range closure(d) {
					set[x] = true
				}
			}
			r.PropertyDeps[key] = append([]string{}, slices.Sorted(maps.Keys(set))...) // [] for none: Pulumi writes every property
		}
	}
}
