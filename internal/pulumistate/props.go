package pulumistate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// encodeObject writes an object's attributes as a property map (nil for none).
func (s *sealer) encodeObject(ctx context.Context, v cty.Value) (map[string]any, error) {
	if v == cty.NilVal {
		return nil, nil
	}
	out, err := s.encode(ctx, v)
	if err != nil || out == nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("properties are %s, not an object", v.Type().FriendlyName())
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// encode writes v as Pulumi serializes a property value: a secret (a value marked
// value.Sensitive) becomes the secret envelope around its serialized value.
func (s *sealer) encode(ctx context.Context, v cty.Value) (any, error) {
	v, marks := v.Unmark()
	if _, ok := marks[value.Sensitive]; ok {
		inner, err := s.encode(ctx, v)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(inner)
		if err != nil {
			return nil, err
		}
		return s.seal(ctx, string(b))
	}
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, errors.New("a stored value is unknown")
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Bool:
		return v.True(), nil
	case t == cty.Number:
		return json.Number(value.FormatNumber(v.AsBigFloat())), nil
	case t.IsObjectType() || t.IsMapType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			ev, err := s.encode(ctx, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.AsString(), err)
			}
			out[k.AsString()] = ev
		}
		return out, nil
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			ev, err := s.encode(ctx, e)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot write a value of type %s", t.FriendlyName())
}

// decodeObject reads a property map as an object (cty.EmptyObjectVal for none).
func (o *opener) decodeObject(ctx context.Context, m map[string]any) (cty.Value, error) {
	if len(m) == 0 {
		return cty.EmptyObjectVal, nil
	}
	v, err := o.decode(ctx, m)
	if err != nil {
		return cty.NilVal, err
	}
	// A property bag is an object of properties: a whole bag sealed as one secret, or a
	// special value in its place, is not one Pulumi writes.
	if v.IsMarked() || !v.Type().IsObjectType() || v.Type().HasAttribute(sig.Key) {
		return cty.NilVal, errors.New("a property bag must be an object of properties, not a secret or another special value")
	}
	return v, nil
}

// decode reads a serialized property value (decoded with json.Decoder.UseNumber): secrets
// come back marked value.Sensitive; assets, archives and resource references stay the objects
// with a signature key that cairn passes to plugins.
func (o *opener) decode(ctx context.Context, v any) (cty.Value, error) {
	switch v := v.(type) {
	case nil, string, bool, json.Number, float64:
		return value.FromGo(v) // numbers bounded as every stored number is
	case []any:
		if len(v) == 0 {
			return cty.EmptyTupleVal, nil
		}
		out := make([]cty.Value, len(v))
		for i, e := range v {
			ev, err := o.decode(ctx, e)
			if err != nil {
				return cty.NilVal, err
			}
			out[i] = ev
		}
		return cty.TupleVal(out), nil
	case map[string]any:
		if v[sig.Key] == sig.Secret {
			pt, err := o.open(ctx, v)
			if err != nil {
				return cty.NilVal, err
			}
			dec := json.NewDecoder(strings.NewReader(pt))
			dec.UseNumber()
			var inner any
			if err := dec.Decode(&inner); err != nil {
				return cty.NilVal, fmt.Errorf("a secret does not hold a serialized value: %w", err)
			}
			iv, err := o.decode(ctx, inner)
			if err != nil {
				return cty.NilVal, err
			}
			return value.Secret(iv), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrs := make(map[string]cty.Value, len(v))
		for _, k := range keys {
			ev, err := o.decode(ctx, v[k])
			if err != nil {
				return cty.NilVal, fmt.Errorf("%s: %w", k, err)
			}
			attrs[k] = ev
		}
		return cty.ObjectVal(attrs), nil
	}
	return cty.NilVal, fmt.Errorf("cannot read a value of Go type %T", v)
}
