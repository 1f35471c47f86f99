package pulumistate

import (
	"context"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/provider/pulumirpc"
)

// componentStates turns a component resource's row into what Pulumi's state holds for it:
// the component (not custom, no id, no inputs, no provider, at the URN its Construct
// registered) and then every resource the Construct registered beneath it, in registration
// order. providerRef is the reference of the provider that served the component, which its
// children registered without a provider of their own used too.
func componentStates(ctx context.Context, s *sealer, comp resourceState, st pulumirpc.ComponentState, providerRef string, modified *time.Time) ([]resourceState, error) {
	comp.URN, comp.Custom, comp.ID, comp.Inputs, comp.Provider, comp.Parent = st.URN, false, "", nil, "", ""
	out := []resourceState{comp}
	for _, ch := range st.Children {
		ins, outs, err := ch.Values()
		if err != nil {
			return nil, err
		}
		rs := resourceState{URN: ch.URN, Custom: ch.Custom, ID: ch.ID, Type: ch.Type, Parent: ch.Parent, Dependencies: ch.Deps,
			Created: modified, Modified: modified}
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
