package provider

import (
	"fmt"
	"sort"
	"strings"
)

// Registry maps resource types to the providers that serve them. A pattern ending in "*"
// matches every type with that prefix ("Custom::*"); an exact type wins over a pattern.
type Registry struct {
	exact    map[string]Provider
	prefixes map[string]Provider
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{exact: map[string]Provider{}, prefixes: map[string]Provider{}}
}

// Register serves the types matching pattern with p.
func (r *Registry) Register(pattern string, p Provider) {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		r.prefixes[prefix] = p
		return
	}
	r.exact[pattern] = p
}

// Lookup returns the provider for typ, or an error that lists the served types.
func (r *Registry) Lookup(typ string) (Provider, error) {
	if p, ok := r.exact[typ]; ok {
		return p, nil
	}
	best := ""
	for prefix := range r.prefixes {
		if strings.HasPrefix(typ, prefix) && len(typ) > len(prefix) && len(prefix) >= len(best) {
			best = prefix
		}
	}
	if best != "" {
		return r.prefixes[best], nil
	}
	return nil, &UnknownTypeError{Type: typ, Served: r.Types()}
}

// Types lists the served types and patterns, sorted.
func (r *Registry) Types() []string {
	var out []string
	for t := range r.exact {
		out = append(out, t)
	}
	for p := range r.prefixes {
		out = append(out, p+"*")
	}
	sort.Strings(out)
	return out
}

// Close closes every registered provider once.
func (r *Registry) Close() error {
	seen := map[Provider]bool{}
	var first error
	for _, m := range []map[string]Provider{r.exact, r.prefixes} {
		for _, p := range m {
			if seen[p] {
				continue
			}
			seen[p] = true
			if err := p.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// UnknownTypeError says no provider serves a resource type.
type UnknownTypeError struct {
	Type   string
	Served []string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("no provider serves resource type %q; served types: %s", e.Type, strings.Join(e.Served, ", "))
}
