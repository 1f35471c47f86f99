package provider

import (
	"context"
	"fmt"
	"math/big"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// manifestObject is the object a manifest attribute holds.
func manifestObject(d types.Dynamic) (*unstructured.Unstructured, error) {
	if d.IsNull() || d.IsUnderlyingValueNull() {
		return nil, fmt.Errorf("the manifest is empty")
	}
	if d.IsUnknown() || d.IsUnderlyingValueUnknown() {
		return nil, fmt.Errorf("the manifest is not known yet")
	}
	tv, err := d.UnderlyingValue().ToTerraformValue(context.Background())
	if err != nil {
		return nil, err
	}
	v, err := goValue(tv)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the manifest must be an object with apiVersion, kind and metadata")
	}
	obj := &unstructured.Unstructured{Object: m}
	switch {
	case obj.GetAPIVersion() == "":
		return nil, fmt.Errorf("the manifest has no apiVersion")
	case obj.GetKind() == "":
		return nil, fmt.Errorf("the manifest has no kind")
	case obj.GetName() == "":
		return nil, fmt.Errorf("the manifest has no metadata.name")
	}
	return obj, nil
}

// wholly reports whether v has no unknown value anywhere.
func wholly(d types.Dynamic) bool {
	if d.IsUnknown() || d.IsUnderlyingValueUnknown() {
		return false
	}
	if d.IsNull() {
		return true
	}
	tv, err := d.UnderlyingValue().ToTerraformValue(context.Background())
	return err == nil && tv.IsFullyKnown()
}

// goValue is v as JSON-shaped Go: maps, slices, strings, int64 or float64, bools, nil.
// Integers stay integers: Kubernetes validates `type: integer` strictly.
func goValue(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("a value is not known yet")
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case t.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	case t.Is(tftypes.Number):
		var n big.Float
		if err := v.As(&n); err != nil {
			return nil, err
		}
		if n.IsInt() {
			if i, acc := n.Int64(); acc == big.Exact {
				return i, nil
			}
		}
		f, _ := n.Float64()
		return f, nil
	case t.Is(tftypes.Object{}) || t.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			g, err := goValue(e)
			if err != nil {
				return nil, err
			}
			if g != nil {
				out[k] = g
			}
		}
		return out, nil
	case t.Is(tftypes.List{}) || t.Is(tftypes.Tuple{}) || t.Is(tftypes.Set{}):
		var l []tftypes.Value
		if err := v.As(&l); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(l))
		for _, e := range l {
			g, err := goValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %s", t)
}

// attrValue is JSON-shaped Go as a framework value: objects and tuples, so that every
// element keeps its own type. Nulls are left out.
func attrValue(v any) (attr.Value, error) {
	switch x := v.(type) {
	case nil:
		return types.DynamicNull(), nil
	case string:
		return types.StringValue(x), nil
	case bool:
		return types.BoolValue(x), nil
	case int64:
		return types.NumberValue(new(big.Float).SetInt64(x)), nil
	case int:
		return types.NumberValue(new(big.Float).SetInt64(int64(x))), nil
	case float64:
		return types.NumberValue(big.NewFloat(x)), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k, e := range x {
			if e != nil {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		attrTypes := map[string]attr.Type{}
		vals := map[string]attr.Value{}
		for _, k := range keys {
			av, err := attrValue(x[k])
			if err != nil {
				return nil, err
			}
			attrTypes[k], vals[k] = av.Type(context.Background()), av
		}
		o, diags := types.ObjectValue(attrTypes, vals)
		if diags.HasError() {
			return nil, fmt.Errorf("%v", diags)
		}
		return o, nil
	case []any:
		var elemTypes []attr.Type
		var vals []attr.Value
		for _, e := range x {
			av, err := attrValue(e)
			if err != nil {
				return nil, err
			}
			elemTypes, vals = append(elemTypes, av.Type(context.Background())), append(vals, av)
		}
		t, diags := types.TupleValue(elemTypes, vals)
		if diags.HasError() {
			return nil, fmt.Errorf("%v", diags)
		}
		return t, nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

// manifestValue is an object as a dynamic attribute.
func manifestValue(obj map[string]any) (types.Dynamic, error) {
	v, err := attrValue(obj)
	if err != nil {
		return types.DynamicNull(), err
	}
	return types.DynamicValue(v), nil
}

// statusValue is the object's status as a dynamic attribute (an empty object when it has none).
func statusValue(obj *unstructured.Unstructured) types.Dynamic {
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	if st == nil {
		st = map[string]any{}
	}
	d, err := manifestValue(st)
	if err != nil {
		return types.DynamicValue(types.ObjectValueMust(map[string]attr.Type{}, map[string]attr.Value{}))
	}
	return d
}
