package cfn

import (
	"context"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// unknownScope is the scope of the check pass: every resource is not yet known.
type unknownScope struct{}

func (unknownScope) Resource(string) (template.ResourceValue, bool) {
	return template.UnknownResource, true
}

// Context implements template.Scope: the check pass is bounded by the parser's own budget.
func (unknownScope) Context() context.Context { return context.Background() }

// check evaluates every expression once against unknown resources, which checks each
// function's arguments and each reference, then fills in every resource's dependencies and
// rejects cycles.
func (p *parser) check(st *template.Stack) {
	// One meter for the whole pass, so that many expressions each under the limits are bounded
	// too; past a limit, the pass stops with that one diagnostic.
	m := p.bud.Meter()
	var exprs []template.Expr
	for _, r := range st.Resources {
		exprs = append(exprs, r.Properties)
	}
	for _, o := range st.Outputs {
		exprs = append(exprs, o.Value)
	}
	for _, x := range exprs {
		ds, over := p.eval(m, x, unknownScope{})
		p.diags = p.diags.Append(ds)
		if over {
			return
		}
	}
	deps := map[string][]string{}
	for _, r := range st.Resources {
		set := map[string]bool{}
		p.b.refs(p.b.props[r.Name], func(name string) { set[name] = true }, 0)
		for _, d := range p.b.dependsOn[r.Name] {
			name, _ := d.str()
			if !p.b.resources[name] {
				p.errf(d, "DependsOn names %s, which is not a resource of this template%s", name, excludedNote(p.b, name))
				continue
			}
			set[name] = true
		}
		r.DependsOn = nil
		for d := range set {
			r.DependsOn = append(r.DependsOn, d)
		}
		slices.Sort(r.DependsOn)
		deps[r.Name] = r.DependsOn
	}
	for _, c := range cycles(st.Resources, deps) {
		r := st.Resource(c[0])
		p.diags = p.diags.Append(diag.Errorf(r.Range, "Resources."+r.Name, "dependency cycle: %s", strings.Join(c, " -> ")))
	}
}

// eval evaluates x in s under the request's budget (its deadline included), charging what
// it builds to m, and reports whether it passed a limit.
func (p *parser) eval(m *budget.Meter, x template.Expr, s template.Scope) (diag.Diagnostics, bool) {
	if e, ok := x.(expr); ok {
		_, diags, over := e.evalWith(m, s)
		return diags, over
	}
	_, diags := x.Eval(s)
	return diags, false
}

func excludedNote(b *binding, name string) string {
	if c, ok := b.excluded[name]; ok {
		return " (it is left out because its condition " + c + " is false)"
	}
	return ""
}

// refs calls add for every resource of the stack that n, depth levels down, refers to with
// Ref, Fn::GetAtt or Fn::Sub, skipping the branches of Fn::If that a decided condition does
// not take. Names that are not resources of the stack are left to the check pass to report,
// and so is nesting past the depth limit (Parse has refused it already).
func (b *binding) refs(n *node, add func(string), depth int) {
	if n == nil || b.bud.Depth(depth) != nil {
		return
	}
	resource := func(name string) {
		if b.resources[name] {
			add(name)
		}
	}
	switch n.kind {
	case kMap, kList:
		for _, c := range n.vals {
			b.refs(c, add, depth+1)
		}
		return
	case kScalar:
		return
	}
	a := n.arg
	switch n.fn {
	case "Ref":
		if s, ok := a.str(); ok && a.kind == kScalar {
			if _, isParam := b.params[s]; !isParam {
				resource(s)
			}
		}
		return
	case "Fn::GetAtt":
		if a.kind == kScalar {
			s, _ := a.str()
			res, _, _ := strings.Cut(s, ".")
			resource(res)
			return
		}
		if a.kind == kList && len(a.vals) > 0 {
			s, _ := a.vals[0].str()
			resource(s)
		}
	case "Fn::Sub":
		format, vars := a, (*node)(nil)
		if a.kind == kList && len(a.vals) == 2 {
			format, vars = a.vals[0], a.vals[1]
		}
		s, _ := format.str()
		for _, name := range subNames(s) {
			if vars.index(name) >= 0 {
				continue
			}
			if _, isParam := b.params[name]; !isParam {
				res, _, _ := strings.Cut(name, ".")
				resource(res)
			}
		}
	case "Fn::If":
		if a.kind == kList && len(a.vals) == 3 {
			name, _ := a.vals[0].str()
			if c, ok := b.conds[name]; ok && c.IsKnown() {
				if c.True() {
					b.refs(a.vals[1], add, depth+1)
				} else {
					b.refs(a.vals[2], add, depth+1)
				}
				return
			}
		}
	}
	b.refs(a, add, depth+1)
}

// subNames returns the variable names of a Fn::Sub text, without ${!Literal}s.
func subNames(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return out
		}
		if name := strings.TrimSpace(s[i+2 : i+j]); !strings.HasPrefix(name, "!") {
			out = append(out, name)
		}
		s = s[i+j+1:]
	}
}

// cycles returns one cycle through each strongly connected group of resources, as the list
// of names from the group's first resource in template order back to it.
func cycles(resources []*template.Resource, deps map[string][]string) [][]string {
	var order []string
	for _, r := range resources {
		order = append(order, r.Name)
	}
	var out [][]string
	for _, scc := range components(order, deps) {
		start := scc[0]
		if len(scc) == 1 && !slices.Contains(deps[start], start) {
			continue
		}
		out = append(out, shortestCycle(start, scc, deps))
	}
	return out
}

// components returns the strongly connected components of the graph (Tarjan), each sorted
// by template order, in the template order of their first member.
func components(order []string, deps map[string][]string) [][]string {
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	index, low, onStack := map[string]int{}, map[string]int{}, map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range deps[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var scc []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			scc = append(scc, w)
			if w == v {
				break
			}
		}
		slices.SortFunc(scc, func(a, b string) int { return pos[a] - pos[b] })
		out = append(out, scc)
	}
	for _, v := range order {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return pos[a[0]] - pos[b[0]] })
	return out
}

// shortestCycle finds the shortest path from start back to start within scc (breadth
// first, dependencies in sorted order, so the answer is stable).
func shortestCycle(start string, scc []string, deps map[string][]string) []string {
	in := map[string]bool{}
	for _, n := range scc {
		in[n] = true
	}
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range deps[v] {
			if w == start {
				path := []string{start}
				for u := v; u != start; u = prev[u] {
					path = append(path, u)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := prev[w]; !seen && in[w] {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start, start} // not reached: start is in a cycle
}
