// Package value holds thin helpers over go-cty, cairn's one value model: converting JSON-shaped
// data to and from cty, marking secrets, masking them for display, and CloudFormation's
// stringification of scalars. It imports nothing of ours.
package value

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/zclconf/go-cty/cty"
)

// Sensitive is the mark carried by secret values (NoEcho parameters, NoEcho response data,
// sensitive attributes). Marks survive every operation on a value, so a secret cannot leak
// into an output or a log by being copied.
const Sensitive = "sensitive"

// Mask is what a secret looks like wherever it is shown.
const Mask = "****"

// FromGo converts a value decoded by encoding/json (map[string]any, []any, string, float64,
// json.Number, bool, nil) to cty: objects become object values and arrays tuples, so mixed
// JSON needs no type unification.
func FromGo(v any) (cty.Value, error) {
	switch t := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case string:
		return cty.StringVal(t), nil
	case bool:
		return cty.BoolVal(t), nil
	case float64:
		return cty.NumberFloatVal(t), nil
	case int:
		return cty.NumberIntVal(int64(t)), nil
	case int64:
		return cty.NumberIntVal(t), nil
	case json.Number:
		f, _, err := big.ParseFloat(string(t), 10, 512, big.ToNearestEven)
		if err != nil {
			return cty.NilVal, fmt.Errorf("cannot parse number %q: %w", t, err)
		}
		if !NumberInRange(f) {
			return cty.NilVal, fmt.Errorf("number %q is out of range (at most about 1e330 in magnitude)", t)
		}
		return cty.NumberVal(f), nil
	case []any:
		if len(t) == 0 {
			return cty.EmptyTupleVal, nil
		}
		vals := make([]cty.Value, len(t))
		for i, e := range t {
			cv, err := FromGo(e)
			if err != nil {
				return cty.NilVal, err
			}
			vals[i] = cv
		}
		return cty.TupleVal(vals), nil
	case map[string]any:
		if len(t) == 0 {
			return cty.EmptyObjectVal, nil
		}
		attrs := make(map[string]cty.Value, len(t))
		for k, e := range t {
			cv, err := FromGo(e)
			if err != nil {
				return cty.NilVal, err
			}
			attrs[k] = cv
		}
		return cty.ObjectVal(attrs), nil
	default:
		return cty.NilVal, fmt.Errorf("cannot convert %T to a value", v)
	}
}

// FromJSON decodes JSON text to cty without a schema.
func FromJSON(b []byte) (cty.Value, error) {
	if len(b) == 0 {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return cty.NilVal, fmt.Errorf("cannot decode value: %w", err)
	}
	return FromGo(v)
}

// ToGo converts a wholly known cty value to JSON-shaped Go data. Marks are dropped, so callers
// that may be handling secrets must decide first (see Masked). Numbers become json.Number so
// that large integers survive.
func ToGo(v cty.Value) (any, error) {
	v, _ = v.Unmark()
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("value is not known yet")
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), nil
	case ty == cty.Bool:
		return v.True(), nil
	case ty == cty.Number:
		return json.Number(FormatNumber(v.AsBigFloat())), nil
	case ty.IsObjectType() || ty.IsMapType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			ge, err := ToGo(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k.AsString(), err)
			}
			out[k.AsString()] = ge
		}
		return out, nil
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			ge, err := ToGo(e)
			if err != nil {
				return nil, err
			}
			out = append(out, ge)
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot convert %s to JSON", ty.FriendlyName())
}

// ToJSON encodes a wholly known value as JSON text (marks dropped; see ToGo).
func ToJSON(v cty.Value) ([]byte, error) {
	g, err := ToGo(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

// maxExp bounds the binary exponent of the numbers NumberInRange accepts: a little past
// float64's (2^1024, 2^-1074).
const maxExp = 1100

// NumberInRange reports whether f is zero or of a magnitude between 2^-1100 and 2^1100 (about
// 1e-331 to 1e331): the numbers FormatNumber writes in microseconds. Far outside, math/big's
// decimal conversion takes time and memory in proportion to the exponent (1e-99999 takes
// seconds, 1e-9999999 hours; 1e999999999 is a 400 MB integer), so numbers read from users'
// text are checked with it first.
func NumberInRange(f *big.Float) bool {
	if f.IsInf() {
		return false
	}
	if f.Sign() == 0 {
		return true
	}
	exp := f.MantExp(nil)
	return exp <= maxExp && exp >= -maxExp
}

// FormatNumber renders a number the way templates write it: integers without a decimal point.
func FormatNumber(f *big.Float) string {
	if f.IsInt() {
		i, _ := f.Int(nil)
		return i.String()
	}
	return f.Text('g', -1)
}

// Secret marks v as sensitive.
func Secret(v cty.Value) cty.Value { return v.Mark(Sensitive) }

// IsSecret reports whether v or anything inside it is sensitive.
func IsSecret(v cty.Value) bool { return v.ContainsMarked() }

// Masked replaces every sensitive part of v by the string Mask and every unknown part by
// unknownText, so the result can be shown to a person or written to a log.
func Masked(v cty.Value, unknownText string) any { return MaskedAs(v, unknownText, Mask) }

// MaskedAs is Masked with secretText in place of each secret.
func MaskedAs(v cty.Value, unknownText, secretText string) any {
	if v.IsMarked() {
		return secretText
	}
	if !v.IsKnown() {
		return unknownText
	}
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType() || ty.IsMapType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = MaskedAs(e, unknownText, secretText)
		}
		return out
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, MaskedAs(e, unknownText, secretText))
		}
		return out
	}
	g, err := ToGo(v)
	if err != nil {
		return unknownText
	}
	return g
}

// Stringify converts every scalar inside v to a string, recursively, as CloudFormation does to
// custom-resource properties: 14 becomes "14", true becomes "true". Nulls, unknowns and marks
// are kept.
func Stringify(v cty.Value) cty.Value {
	v, marks := v.Unmark()
	if v.IsNull() || !v.IsKnown() {
		return v.WithMarks(marks)
	}
	ty := v.Type()
	var out cty.Value
	switch {
	case ty == cty.Number:
		out = cty.StringVal(FormatNumber(v.AsBigFloat()))
	case ty == cty.Bool:
		if v.True() {
			out = cty.StringVal("true")
		} else {
			out = cty.StringVal("false")
		}
	case ty.IsObjectType() || ty.IsMapType():
		attrs := map[string]cty.Value{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			attrs[k.AsString()] = Stringify(e)
		}
		out = cty.ObjectVal(attrs)
	case ty.IsTupleType() || ty.IsListType() || ty.IsSetType():
		var elems []cty.Value
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			elems = append(elems, Stringify(e))
		}
		if len(elems) == 0 {
			out = cty.EmptyTupleVal
		} else {
			out = cty.TupleVal(elems)
		}
	default:
		out = v
	}
	return out.WithMarks(marks)
}

// Keys returns the attribute names of an object value, sorted.
func Keys(v cty.Value) []string {
	v, _ = v.Unmark()
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil
	}
	var keys []string
	for it := v.ElementIterator(); it.Next(); {
		k, _ := it.Element()
		keys = append(keys, k.AsString())
	}
	sort.Strings(keys)
	return keys
}

// Get returns attribute name of object v, and whether it exists.
func Get(v cty.Value, name string) (cty.Value, bool) {
	v, marks := v.Unmark()
	if v.IsNull() || !v.IsKnown() {
		return cty.NilVal, false
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType():
		if !ty.HasAttribute(name) {
			return cty.NilVal, false
		}
		return v.GetAttr(name).WithMarks(marks), true
	case ty.IsMapType():
		k := cty.StringVal(name)
		if !v.HasIndex(k).True() {
			return cty.NilVal, false
		}
		return v.Index(k).WithMarks(marks), true
	}
	return cty.NilVal, false
}

// WithPaths returns v with the value at each of paths taken from old instead (Terraform's
// ignore_changes). A path that old lacks keeps v's value.
func WithPaths(v, old cty.Value, paths []cty.Path) cty.Value {
	if old == cty.NilVal || old.IsNull() || !old.IsKnown() {
		return v
	}
	out, err := cty.Transform(v, func(p cty.Path, cur cty.Value) (cty.Value, error) {
		for _, ip := range paths {
			if p.Equals(ip) {
				if ov, err := ip.Apply(old); err == nil {
					return ov, nil
				}
			}
		}
		return cur, nil
	})
	if err != nil {
		return v
	}
	return out
}
