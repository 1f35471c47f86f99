package pulumistate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/provider/pulumirpc"
)

// componentStates turns a component resource's row into what Pulumi's state holds for it:
// the component (not custom, no id, no inputs, no provider, at the URN its Construct
// registered) and then every resource the Construct registered beneath it, in registration
// order. providerRef is the reference of the provider that served the component, which its
// children registered without a provider of their own used too.
func componentStates(ctx context.Context, u urns, s *sealer, comp resourceState, st pulumirpc.ComponentState, providerRef string, modified *time.Time) ([]resourceState, error) {
	comp.URN, comp.Custom, comp.ID, comp.Inputs, comp.Provider, comp.Parent = u.rebase(st.URN), false, "", nil, "", ""
	comp.PropertyDependencies = nil // pulumi keeps none for a component its Construct made
	out := []resourceState{comp}
	if st.URN == "" { // a Construct that never registered its component: pulumi's state has no row for it
		out = nil
	}
	for _, ch := range st.Children {
		ins, outs, err := ch.Values()
		if err != nil {
			return nil, err
		}
		rs := resourceState{URN: u.rebase(ch.URN), Custom: ch.Custom, ID: ch.ID, Type: ch.Type, Parent: u.rebase(ch.Parent),
			Created: modified, Modified: modified}
		for _, d := range ch.Deps {
			rs.Dependencies = append(rs.Dependencies, u.rebase(d))
		}
		if ch.Custom {
			rs.Provider = ch.Provider
			if rs.Provider == "" {
				rs.Provider = providerRef
			}
		}
		if rs.Inputs, err = s.encodeObject(ctx, ins); err != nil {
			return nil, fmt.Errorf("the inputs of %s: %w", ch.URN, err)
		}
		if rs.Outputs, err = s.encodeObject(ctx, outs); err != nil {
			return nil, fmt.Errorf("the outputs of %s: %w", ch.URN, err)
		}
		if ch.Custom {
			rs.PropertyDependencies = map[string][]string{}
			for k := range rs.Inputs {
				rs.PropertyDependencies[k] = []string{}
			}
		}
		out = append(out, rs)
	}
	return out, nil
}

// rebase gives a URN the export's stack and project: a Construct's URNs were made with the
// names the plugin was given, which may name the project differently (the stack's name when
// the project is not passed to plugins).
func (u urns) rebase(urn string) string {
	parts := strings.SplitN(strings.TrimPrefix(urn, "urn:pulumi:"), "::", 4)
	if urn == "" || len(parts) != 4 {
		return urn
	}
	return u.make(parts[2], parts[3])
}

// refuseComponents says plainly that a deployment holding component resources cannot be
// pushed yet: cairn keeps a component's children in the component's private data, which a
// push does not rebuild.
func refuseComponents(rs []resourceState) error {
	for _, r := range rs {
		if !r.Custom && r.Type != stackType && !r.Delete {
			return fmt.Errorf("the deployment holds component resource %s: pushing component resources is not supported yet", r.URN)
		}
	}
	return nil
}
