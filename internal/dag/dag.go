// Package dag is a dependency graph of string ids: cycle detection that names the cycle, and
// a bounded parallel walk in dependency order. It knows nothing of resources.
package dag

import (
	"fmt"
	"sort"
	"strings"
)

// Graph maps each node to the nodes it depends on. The zero value is not usable; call New.
type Graph struct {
	order      []string
	deps       map[string][]string
	dependents map[string][]string
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{deps: map[string][]string{}, dependents: map[string][]string{}}
}

// Add adds node id depending on deps. Dependencies on nodes never added are ignored by Walk,
// so callers add every node first or validate references themselves.
func (g *Graph) Add(id string, deps ...string) {
	if _, ok := g.deps[id]; !ok {
		g.order = append(g.order, id)
	}
	g.deps[id] = append(g.deps[id], deps...)
}

// Nodes returns the nodes in the order they were added.
func (g *Graph) Nodes() []string { return append([]string(nil), g.order...) }

// Deps returns the dependencies of id that are nodes of g.
func (g *Graph) Deps(id string) []string {
	var out []string
	for _, d := range g.deps[id] {
		if _, ok := g.deps[d]; ok && d != id {
			out = append(out, d)
		}
	}
	return out
}

// Reverse returns the graph with every edge turned around: a node then waits for its
// dependents, the order deletes need.
func (g *Graph) Reverse() *Graph {
	r := New()
	for _, id := range g.order {
		r.Add(id)
	}
	for _, id := range g.order {
		for _, d := range g.Deps(id) {
			r.Add(d, id)
		}
	}
	return r
}

// Cycle returns one dependency cycle as a path that starts and ends at the same node
// (["a", "b", "a"]), or nil when the graph is acyclic.
func (g *Graph) Cycle() []string {
	const (
		unseen = iota
		onPath
		done
	)
	mark := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		mark[id] = onPath
		path = append(path, id)
		deps := g.Deps(id)
		sort.Strings(deps)
		for _, d := range deps {
			switch mark[d] {
			case onPath:
				for i, p := range path {
					if p == d {
						return append(append([]string(nil), path[i:]...), d)
					}
				}
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[id] = done
		return nil
	}
	ids := append([]string(nil), g.order...)
	sort.Strings(ids)
	for _, id := range ids {
		if mark[id] == unseen {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// CycleError names a dependency cycle.
type CycleError struct{ Path []string }

func (e *CycleError) Error() string {
	return fmt.Sprintf("dependency cycle: %s", strings.Join(e.Path, " -> "))
}
