package pulumistate

import (
	"strings"

	"github.com/cairn-dev/cairn/internal/pulumiurn"
	"github.com/cairn-dev/cairn/internal/template"
)

// urns makes the URNs of one stack: urn:pulumi:<stack>::<project>::<type chain>::<name>,
// where the type chain is the parents' types then the resource's, joined by '$'.
type urns struct {
	stack, project string
	st             *template.Stack
}

func (u urns) stackURN() string {
	return u.make(stackType, u.project+"-"+u.stack)
}

func (u urns) urn(name, typ string) string {
	return u.make(pulumiurn.Chain(typ, ParentTypes(u.st, name)...), name)
}

// ParentTypes are the types of the parents of resource name in st, nearest first.
func ParentTypes(st *template.Stack, name string) []string {
	var out []string
	if st == nil {
		return nil
	}
	seen := map[string]bool{name: true}
	for r := st.Resource(name); r != nil && r.Parent != "" && !seen[r.Parent]; r = st.Resource(r.Parent) {
		seen[r.Parent] = true
		p := st.Resource(r.Parent)
		if p == nil {
			break
		}
		out = append(out, p.Type)
	}
	return out
}

func (u urns) make(chain, name string) string {
	return pulumiurn.New(u.stack, u.project, chain, name)
}

// parent is the logical id of the resource's parent in the program, "" for the stack.
func (u urns) parent(name string) string {
	if u.st == nil {
		return ""
	}
	if r := u.st.Resource(name); r != nil {
		return r.Parent
	}
	return ""
}

// urnName is the name a URN ends with (a name may itself hold "::").
func urnName(urn string) (string, error) { return pulumiurn.Name(urn) }

// DefaultProviderName is the name of a default provider of a package at version ("" for
// none): `default`, or `default_2_0_0` as Pulumi's ProviderRequest.DefaultName writes it.
func DefaultProviderName(version string) string {
	if version == "" {
		return "default"
	}
	return "default_" + strings.NewReplacer(".", "_", "-", "_", "+", "_").Replace(version)
}
