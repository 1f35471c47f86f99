package value

import (
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"
)

// stored is the JSON form of a value kept in state: the plain value and the paths of its
// sensitive parts, so a NoEcho value read back is still a secret.
type stored struct {
	Value     json.RawMessage `json:"v"`
	Sensitive [][]any         `json:"s,omitempty"`
}

// CheckStored reports whether b has the shape Marshal writes (empty, or {"v": ..., "s": ...}),
// without decoding the value: a cheap check for data that is decoded later, if at all.
func CheckStored(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("cannot decode stored value: %w", err)
	}
	return nil
}

// Marshal encodes a wholly known value for storage, keeping its sensitive marks.
func Marshal(v cty.Value) ([]byte, error) {
	plain, pvm := v.UnmarkDeepWithPaths()
	body, err := ToJSON(plain)
	if err != nil {
		return nil, err
	}
	s := stored{Value: body}
	for _, pm := range pvm {
		if _, ok := pm.Marks[Sensitive]; !ok {
			continue
		}
		var steps []any
		for _, st := range pm.Path {
			switch st := st.(type) {
			case cty.GetAttrStep:
				steps = append(steps, st.Name)
			case cty.IndexStep:
				if st.Key.Type() == cty.String {
					steps = append(steps, st.Key.AsString())
				} else {
					i, _ := st.Key.AsBigFloat().Int64()
					steps = append(steps, i)
				}
			}
		}
		if steps == nil {
			steps = []any{}
		}
		s.Sensitive = append(s.Sensitive, steps)
	}
	return json.Marshal(s)
}

// Unmarshal decodes what Marshal wrote. Empty input is the null value.
func Unmarshal(b []byte) (cty.Value, error) {
	if len(b) == 0 {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	var s stored
	if err := json.Unmarshal(b, &s); err != nil {
		return cty.NilVal, fmt.Errorf("cannot decode stored value: %w", err)
	}
	v, err := FromJSON(s.Value)
	if err != nil {
		return cty.NilVal, err
	}
	var pvm []cty.PathValueMarks
	for _, steps := range s.Sensitive {
		var p cty.Path
		for _, st := range steps {
			switch st := st.(type) {
			case string:
				p = p.GetAttr(st)
			case float64:
				p = p.Index(cty.NumberIntVal(int64(st)))
			}
		}
		pvm = append(pvm, cty.PathValueMarks{Path: p, Marks: cty.NewValueMarks(Sensitive)})
	}
	return MarkPaths(v, pvm), nil
}
