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
// none) and plugin download URL url ("" for none): `default`, `default_2_0_0`, or
// `default_9_0_0_http_/example.com`, as Pulumi's ProviderRequest.DefaultName writes it.
func DefaultProviderName(version, url string) string {
	name := "default"
	if version != "" {
		name += "_" + strings.NewReplacer(".", "_", "-", "_", "+", "_").Replace(version)
	}
	if url != "" {
		name += "_" + qname(url)
	}
	return name
}

// qname is s as a Pulumi QName (tokens.IntoQName): empty '/'-separated segments dropped, and
// in each segment every byte outside [A-Za-z0-9_.-] replaced by '_'.
func qname(s string) string {
	var segs []string
	for _, seg := range strings.Split(s, "/") {
		if seg == "" {
			continue
		}
		b := []byte(seg)
		for i, c := range b {
			if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
				b[i] = '_'
			}
		}
		segs = append(segs, string(b))
	}
	if len(segs) == 0 {
		return "_"
	}
	return strings.Join(segs, "/")
}
