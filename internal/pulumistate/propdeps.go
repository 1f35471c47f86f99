package pulumistate

import (
	"strings"

	"github.com/cairn-dev/cairn/internal/template"
)

// initErrors are a failed create's reasons as Pulumi keeps them (a resource's initErrors: the
// provider's ErrorResourceInitFailed reasons, verbatim). cairn stores the reason of the
// failure as text: the plugin adapter's diagnostics, "Create: <reason>" each, joined by "; "
// (pulumirpc.initDiags, engine.reasonOf), which this takes apart again.
func initErrors(reason string) []string {
	const op = "Create: "
	rest, ok := strings.CutPrefix(reason, op)
	switch {
	case reason == "":
		return []string{"the resource's create failed"}
	case !ok:
		return []string{reason}
	}
	return strings.Split(rest, "; "+op)
}

// propertyDependencies resolves r's PropertyDeps to resources of st: an invoke (a data
// resource) stands for what it depends on (its arguments' resources and its dependsOn), as a
// Pulumi invoke's result carries its inputs' dependencies.
func propertyDependencies(st *template.Stack, r *template.Resource) map[string][]string {
	if r.PropertyDeps == nil {
		return nil
	}
	out := make(map[string][]string, len(r.PropertyDeps))
	for k, names := range r.PropertyDeps {
		seen := map[string]bool{}
		deps := []string{}
		var add func(name string)
		add = func(name string) {
			if seen[name] {
				return
			}
			seen[name] = true
			d := st.Resource(name)
			switch {
			case d == nil:
			case d.Mode == template.Data:
				for _, n := range d.DependsOn {
					add(n)
				}
			default:
				deps = append(deps, name)
			}
		}
		for _, n := range names {
			add(n)
		}
		out[k] = deps
	}
	return out
}

// usesInProperties says whether resource name's properties use resource dep's values (Pulumi
// lists a resource's provider among its dependencies only then).
func usesInProperties(st *template.Stack, name, dep string) bool {
	r := st.Resource(name)
	if r == nil {
		return false
	}
	for _, deps := range propertyDependencies(st, r) {
		for _, d := range deps {
			if d == dep {
				return true
			}
		}
	}
	return false
}
