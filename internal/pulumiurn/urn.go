// Package pulumiurn makes and reads Pulumi URNs, `urn:pulumi:<stack>::<project>::<type
// chain>::<name>`, for every part of cairn that names a Pulumi resource: the plugins' calls
// (pulumirpc), the front end and the exported state (pulumistate). It imports nothing of cairn.
package pulumiurn

import (
	"fmt"
	"strings"
)

// New is the URN of resource name of type chain (the parents' types then the resource's,
// joined by '$') in project's stack.
func New(stack, project, chain, name string) string {
	return "urn:pulumi:" + stack + "::" + project + "::" + chain + "::" + name
}

// Chain is the type chain of a resource of type typ whose ancestors, nearest first, are of
// types parents.
func Chain(typ string, parents ...string) string {
	chain := typ
	for _, p := range parents {
		chain = p + "$" + chain
	}
	return chain
}

// Name is the name a URN ends with (a name may itself hold "::").
func Name(urn string) (string, error) {
	rest, ok := strings.CutPrefix(urn, "urn:pulumi:")
	parts := strings.SplitN(rest, "::", 4)
	if !ok || len(parts) != 4 || parts[3] == "" {
		return "", fmt.Errorf("%q is not a Pulumi URN", urn)
	}
	return parts[3], nil
}

// Project is the project a URN names ("" when urn is not a Pulumi URN).
func Project(urn string) string {
	rest, ok := strings.CutPrefix(urn, "urn:pulumi:")
	parts := strings.SplitN(rest, "::", 4)
	if !ok || len(parts) != 4 {
		return ""
	}
	return parts[1]
}
