package pulumistate

import (
	"fmt"
	"strings"

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
	chain := typ
	seen := map[string]bool{name: true}
	for p := u.parent(name); p != "" && !seen[p]; p = u.parent(p) {
		seen[p] = true
		if r := u.st.Resource(p); r != nil {
			chain = r.Type + "$" + chain
		}
	}
	return u.make(chain, name)
}

func (u urns) make(chain, name string) string {
	return "urn:pulumi:" + u.stack + "::" + u.project + "::" + chain + "::" + name
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
func urnName(urn string) (string, error) {
	rest, ok := strings.CutPrefix(urn, "urn:pulumi:")
	parts := strings.SplitN(rest, "::", 4)
	if !ok || len(parts) != 4 || parts[3] == "" {
		return "", fmt.Errorf("%q is not a Pulumi URN", urn)
	}
	return parts[3], nil
}
