package pulumirpc

import (
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// ComponentState is what a component resource (a type the package schema marks isComponent)
// keeps in its row's private data: the URN its Construct registered and every resource the
// plugin registered beneath it, in registration order. cairn's engine plans a static graph, so
// the children of a Construct live here rather than as rows of their own: the next Construct
// diffs them, a delete removes them in reverse order, and the Pulumi export
// (internal/pulumistate) writes them as resources whose parent is the component. Private data
// is sealed at rest like the rows' inputs and outputs; values keep their secret marks.
type ComponentState struct {
	Component string           `json:"component"` // marks the private data as a component's
	URN       string           `json:"urn"`
	Children  []ComponentChild `json:"children,omitempty"`
}

// ComponentChild is one resource a Construct registered.
type ComponentChild struct {
	URN    string `json:"urn"`
	Type   string `json:"type"`
	Name   string `json:"name"`
	Parent string `json:"parent"` // its parent's URN: the component or another child
	Custom bool   `json:"custom"`
	ID     string `json:"id,omitempty"`
	// Provider is the provider reference (URN::id) it was registered with, "" when the
	// component's own provider instance serves it (the default provider of the package, or
	// the explicit one the component was given).
	Provider string          `json:"provider,omitempty"`
	Inputs   json.RawMessage `json:"inputs,omitempty"`  // value.Marshal
	Outputs  json.RawMessage `json:"outputs,omitempty"` // value.Marshal
	Deps     []string        `json:"deps,omitempty"`    // URNs
}

const componentMark = "pulumi-component/1"

// DecodeComponentState reads a row's private data; ok is false when it is not a component's.
func DecodeComponentState(private []byte) (ComponentState, bool, error) {
	var s ComponentState
	if len(private) == 0 || private[0] != '{' {
		return s, false, nil
	}
	if err := json.Unmarshal(private, &s); err != nil || s.Component != componentMark {
		return ComponentState{}, false, nil //nolint:nilerr // another provider's private data
	}
	return s, true, nil
}

// Encode is the private data that holds s.
func (s ComponentState) Encode() ([]byte, error) {
	s.Component = componentMark
	return json.Marshal(s)
}

// Values are the child's inputs and outputs (empty objects when none were stored).
func (c ComponentChild) Values() (inputs, outputs cty.Value, err error) {
	if inputs, err = unmarshalOr(c.Inputs); err != nil {
		return cty.NilVal, cty.NilVal, fmt.Errorf("the inputs of %s: %w", c.URN, err)
	}
	if outputs, err = unmarshalOr(c.Outputs); err != nil {
		return cty.NilVal, cty.NilVal, fmt.Errorf("the outputs of %s: %w", c.URN, err)
	}
	return inputs, outputs, nil
}

func unmarshalOr(b json.RawMessage) (cty.Value, error) {
	if len(b) == 0 {
		return cty.EmptyObjectVal, nil
	}
	return value.Unmarshal(b)
}

func marshalValue(v cty.Value) (json.RawMessage, error) {
	if v == cty.NilVal || v.IsNull() {
		return nil, nil
	}
	return value.Marshal(v)
}

// canonicalRefs rewrites the resource references in v as Pulumi's engine stores them:
// signature, urn, id (custom resources) and packageVersion, whatever else the plugin's SDK
// wrote into them (name and type, from the Go SDK).
func canonicalRefs(v cty.Value) cty.Value {
	out, err := cty.Transform(v, func(_ cty.Path, v cty.Value) (cty.Value, error) {
		plain, marks := v.Unmark()
		if !plain.IsKnown() || plain.IsNull() || !plain.Type().IsObjectType() || !plain.Type().HasAttribute(psig.Key) {
			return v, nil
		}
		sig := plain.GetAttr(psig.Key)
		if sig.IsMarked() || !sig.IsKnown() || sig.IsNull() || sig.Type() != cty.String || sig.AsString() != psig.ResourceReference {
			return v, nil
		}
		ref := map[string]cty.Value{psig.Key: sig, "packageVersion": cty.StringVal("")}
		for _, k := range []string{"urn", "id", "packageVersion"} {
			if plain.Type().HasAttribute(k) {
				ref[k] = plain.GetAttr(k)
			}
		}
		return cty.ObjectVal(ref).WithMarks(marks), nil
	})
	if err != nil {
		return v
	}
	return out
}
