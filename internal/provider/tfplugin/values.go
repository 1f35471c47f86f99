package tfplugin

import (
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"
	ctyconvert "github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"github.com/zclconf/go-cty/cty/msgpack"

	"github.com/cairn-dev/cairn/internal/value"
)

// encode is a value on the wire: msgpack of the schema type. Marks are stripped first (a
// secret is a secret to cairn's display and storage; the provider needs the plain value), and
// msgpack keeps unknowns, refinements included.
func encode(v cty.Value, ty cty.Type) ([]byte, error) {
	if v == cty.NilVal {
		v = cty.NullVal(ty)
	}
	v, _ = v.UnmarkDeep()
	b, err := msgpack.Marshal(v, ty)
	if err != nil {
		return nil, fmt.Errorf("cannot encode a value for the provider: %w", err)
	}
	return b, nil
}

// decode reads a value the provider sent: msgpack, or JSON when msgpack is empty (servers
// may answer either; null is an empty DynamicValue).
func decode(d dynValue, ty cty.Type) (cty.Value, error) {
	switch {
	case len(d.msgpack) > 0:
		v, err := msgpack.Unmarshal(d.msgpack, ty)
		if err != nil {
			return cty.NilVal, fmt.Errorf("cannot decode the provider's value: %w", err)
		}
		return v, nil
	case len(d.json) > 0:
		v, err := ctyjson.Unmarshal(d.json, ty)
		if err != nil {
			return cty.NilVal, fmt.Errorf("cannot decode the provider's JSON value: %w", err)
		}
		return v, nil
	}
	return cty.NullVal(ty), nil
}

// fit brings an unmarked value to the block's implied type. Values reach the provider from
// places that do not know the schema exactly: state stored as JSON (lists come back as tuples,
// maps as objects), configurations built by other template dialects, an empty object for an
// absent provider block, state written before the schema gained an attribute. Missing
// attributes become null and missing nested blocks empty; an attribute the schema does not
// have is an error.
func (b *block) fit(v cty.Value, path cty.Path) (cty.Value, error) {
	switch {
	case v == cty.NilVal || v.IsNull():
		return cty.NullVal(b.ty), nil
	case v.Type().Equals(b.ty):
		return v, nil
	case !v.IsKnown():
		return cty.UnknownVal(b.ty), nil
	case !v.Type().IsObjectType() && !v.Type().IsMapType():
		return cty.NilVal, path.NewErrorf("an object is required")
	}
	in := v.AsValueMap()
	if err := b.unexpected(in, path); err != nil {
		return cty.NilVal, err
	}
	out := make(map[string]cty.Value, len(b.attrs)+len(b.blocks))
	for name, a := range b.attrs {
		av, ok := in[name]
		if !ok {
			out[name] = cty.NullVal(a.ty)
			continue
		}
		fv, err := fitType(av, a.ty, path.GetAttr(name))
		if err != nil {
			return cty.NilVal, err
		}
		out[name] = fv
	}
	for name, nb := range b.blocks {
		bv, ok := in[name]
		if !ok {
			out[name] = nb.emptyValue()
			continue
		}
		fv, err := nb.fit(bv, path.GetAttr(name))
		if err != nil {
			return cty.NilVal, err
		}
		out[name] = fv
	}
	return cty.ObjectVal(out), nil
}

// unexpected reports the first (sorted) key of in that names nothing in the block.
func (b *block) unexpected(in map[string]cty.Value, path cty.Path) error {
	var extra []string
	for k := range in {
		if b.attrs[k] == nil && b.blocks[k] == nil {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	sort.Strings(extra)
	return path.GetAttr(extra[0]).NewErrorf("an argument named %q is not expected here", extra[0])
}

func (nb *nestedBlock) fit(v cty.Value, path cty.Path) (cty.Value, error) {
	switch nb.nesting {
	case nestSingle, nestGroup:
		return nb.block.fit(v, path)
	}
	ty := nb.emptyValue().Type()
	switch {
	case v.IsNull():
		return cty.NullVal(ty), nil
	case v.Type().Equals(ty):
		return v, nil
	case !v.IsKnown():
		return cty.UnknownVal(ty), nil
	}
	return rebuild(v, ty, path, func(e cty.Value, p cty.Path) (cty.Value, error) { return nb.block.fit(e, p) })
}

// fitType is fit for a value of a plain type: collections are rebuilt element by element,
// objects get their missing attributes as null, primitives are converted.
func fitType(v cty.Value, ty cty.Type, path cty.Path) (cty.Value, error) {
	switch {
	case ty == cty.DynamicPseudoType:
		return v, nil
	case v.IsNull():
		return cty.NullVal(ty), nil
	case v.Type().Equals(ty):
		return v, nil
	case !v.IsKnown():
		return cty.UnknownVal(ty), nil
	case ty.IsObjectType():
		if !v.Type().IsObjectType() && !v.Type().IsMapType() {
			return cty.NilVal, path.NewErrorf("an object is required")
		}
		in := v.AsValueMap()
		out := make(map[string]cty.Value, len(ty.AttributeTypes()))
		for name, aty := range ty.AttributeTypes() {
			av, ok := in[name]
			if !ok {
				out[name] = cty.NullVal(aty)
				continue
			}
			fv, err := fitType(av, aty, path.GetAttr(name))
			if err != nil {
				return cty.NilVal, err
			}
			out[name] = fv
		}
		for name := range in {
			if !ty.HasAttribute(name) {
				return cty.NilVal, path.GetAttr(name).NewErrorf("an attribute named %q is not expected here", name)
			}
		}
		return cty.ObjectVal(out), nil
	case ty.IsListType() || ty.IsSetType() || ty.IsMapType():
		ety := ty.ElementType()
		return rebuild(v, ty, path, func(e cty.Value, p cty.Path) (cty.Value, error) { return fitType(e, ety, p) })
	}
	out, err := ctyconvert.Convert(v, ty)
	if err != nil {
		return cty.NilVal, path.NewError(err)
	}
	return out, nil
}

// rebuild makes a collection of type ty (list, set, map, or the tuple or object a block with
// dynamic attributes decodes to) from v's elements, each passed through f.
func rebuild(v cty.Value, ty cty.Type, path cty.Path, f func(cty.Value, cty.Path) (cty.Value, error)) (cty.Value, error) {
	vt := v.Type()
	keyed := ty.IsMapType() || ty.IsObjectType()
	if keyed != (vt.IsMapType() || vt.IsObjectType()) || !(keyed || vt.IsListType() || vt.IsSetType() || vt.IsTupleType()) {
		return cty.NilVal, path.NewErrorf("%s is required", ty.FriendlyName())
	}
	var elems []cty.Value
	named := map[string]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		p := path.Index(k)
		if vt.IsSetType() {
			p = path.Index(cty.UnknownVal(vt.ElementType()))
		}
		fe, err := f(e, p)
		if err != nil {
			return cty.NilVal, err
		}
		if keyed {
			named[k.AsString()] = fe
		} else {
			elems = append(elems, fe)
		}
	}
	switch {
	case ty.IsObjectType():
		return cty.ObjectVal(named), nil
	case ty.IsTupleType():
		return cty.TupleVal(elems), nil
	case ty.IsMapType() && len(named) == 0:
		return cty.MapValEmpty(ty.ElementType()), nil
	case ty.IsMapType():
		return cty.MapVal(named), nil
	case len(elems) == 0 && ty.IsListType():
		return cty.ListValEmpty(ty.ElementType()), nil
	case len(elems) == 0:
		return cty.SetValEmpty(ty.ElementType()), nil
	case ty.IsListType():
		return cty.ListVal(elems), nil
	default:
		return cty.SetVal(elems), nil
	}
}

// mark marks the block's sensitive attributes in v with value.Secret, so that cairn masks them
// wherever it shows or stores the value. A set holding a secret is marked as a whole (cty
// hoists marks of set elements to the set).
func (b *block) mark(v cty.Value) cty.Value {
	if !b.sensitive || v == cty.NilVal || v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return v
	}
	out := make(map[string]cty.Value, len(b.attrs)+len(b.blocks))
	for name, av := range v.AsValueMap() {
		switch {
		case b.attrs[name] != nil:
			av = b.attrs[name].mark(av)
		case b.blocks[name] != nil:
			av = b.blocks[name].mark(av)
		}
		out[name] = av
	}
	return cty.ObjectVal(out)
}

func (a *attribute) mark(v cty.Value) cty.Value {
	switch {
	case a.sensitive:
		return value.Secret(v)
	case a.nested != nil && a.nested.hasSensitive():
		return a.nested.mark(v)
	}
	return v
}

func (o *object) mark(v cty.Value) cty.Value {
	if v.IsNull() || !v.IsKnown() {
		return v
	}
	one := func(e cty.Value) cty.Value {
		if e.IsNull() || !e.IsKnown() {
			return e
		}
		out := map[string]cty.Value{}
		for name, av := range e.AsValueMap() {
			if a := o.attrs[name]; a != nil {
				av = a.mark(av)
			}
			out[name] = av
		}
		return cty.ObjectVal(out)
	}
	if o.nesting == nestSingle {
		return one(v)
	}
	return eachElement(v, one)
}

func (nb *nestedBlock) mark(v cty.Value) cty.Value {
	if !nb.block.sensitive || v.IsNull() || !v.IsKnown() {
		return v
	}
	switch nb.nesting {
	case nestSingle, nestGroup:
		return nb.block.mark(v)
	}
	return eachElement(v, nb.block.mark)
}

// eachElement applies f to every element of a known collection, keeping its kind.
func eachElement(v cty.Value, f func(cty.Value) cty.Value) cty.Value {
	ty := v.Type()
	if v.LengthInt() == 0 {
		return v
	}
	var elems []cty.Value
	named := map[string]cty.Value{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if ty.IsMapType() || ty.IsObjectType() {
			named[k.AsString()] = f(e)
		} else {
			elems = append(elems, f(e))
		}
	}
	switch {
	case ty.IsListType():
		return cty.ListVal(elems)
	case ty.IsSetType():
		return cty.SetVal(elems)
	case ty.IsTupleType():
		return cty.TupleVal(elems)
	case ty.IsMapType():
		return cty.MapVal(named)
	default:
		return cty.ObjectVal(named)
	}
}

// unmark drops every mark (cairn's secrets) from v.
func unmark(v cty.Value) cty.Value {
	if v == cty.NilVal {
		return v
	}
	v, _ = v.UnmarkDeep()
	return v
}

// equalValues reports whether two unmarked values are the same, unknowns compared by type
// only (a refinement is no difference) and an unknown never equal to a known value.
func equalValues(a, b cty.Value) bool {
	if a.IsWhollyKnown() && b.IsWhollyKnown() {
		return a.RawEquals(b) || (a.Type().Equals(b.Type()) && a.Equals(b).True())
	}
	return unrefined(a).RawEquals(unrefined(b))
}

// unrefined replaces every unknown in v with a plain unknown of its type.
func unrefined(v cty.Value) cty.Value {
	out, _ := cty.Transform(v, func(_ cty.Path, x cty.Value) (cty.Value, error) {
		if !x.IsKnown() {
			return cty.UnknownVal(x.Type()), nil
		}
		return x, nil
	})
	return out
}
