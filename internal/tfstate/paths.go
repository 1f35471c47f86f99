package tfstate

import (
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// pathStep is a step of a sensitive attribute path as state files write it.
type pathStep struct {
	Type  string          `json:"type"` // "get_attr" or "index"
	Value json.RawMessage `json:"value"`
}

// MarshalPaths encodes attribute paths (sensitive_attributes).
func MarshalPaths(paths []cty.Path) (json.RawMessage, error) {
	out := make([][]pathStep, 0, len(paths))
	for _, p := range paths {
		steps := make([]pathStep, 0, len(p))
		for _, st := range p {
			switch st := st.(type) {
			case cty.GetAttrStep:
				name, _ := json.Marshal(st.Name)
				steps = append(steps, pathStep{Type: "get_attr", Value: name})
			case cty.IndexStep:
				key, err := ctyjson.Marshal(st.Key, cty.DynamicPseudoType)
				if err != nil {
					return nil, fmt.Errorf("cannot encode path step %#v: %w", st.Key, err)
				}
				steps = append(steps, pathStep{Type: "index", Value: key})
			}
		}
		out = append(out, steps)
	}
	return json.Marshal(out)
}

// UnmarshalPaths decodes sensitive_attributes.
func UnmarshalPaths(b json.RawMessage) ([]cty.Path, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var raw [][]pathStep
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("cannot decode sensitive_attributes: %w", err)
	}
	paths := make([]cty.Path, 0, len(raw))
	for _, steps := range raw {
		var p cty.Path
		for _, st := range steps {
			switch st.Type {
			case "get_attr":
				var name string
				if err := json.Unmarshal(st.Value, &name); err != nil {
					return nil, fmt.Errorf("cannot decode sensitive_attributes: %w", err)
				}
				p = append(p, cty.GetAttrStep{Name: name})
			case "index":
				key, err := ctyjson.Unmarshal(st.Value, cty.DynamicPseudoType)
				if err != nil {
					return nil, fmt.Errorf("cannot decode sensitive_attributes: %w", err)
				}
				p = append(p, cty.IndexStep{Key: key})
			default:
				return nil, fmt.Errorf("cannot decode sensitive_attributes: unsupported path step type %q", st.Type)
			}
		}
		paths = append(paths, p)
	}
	return paths, nil
}
