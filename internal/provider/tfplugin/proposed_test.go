package tfplugin

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// testBlock is a schema with every kind of member ProposedNew treats differently:
//
//	name     required string
//	size     optional number
//	id       computed string
//	zone     optional+computed string
//	opts     optional+computed nested object {a optional string, c computed string}
//	list     list block  {k required string, v computed string}
//	byname   map block   {v optional+computed string}
//	set      set block   {port required number, proto optional+computed string}
//	one      single block {x optional string, y computed string}
func testBlock() *block {
	leaf := func(b *block, name string, ty cty.Type, req, opt, comp bool) {
		b.attrs[name] = &attribute{ty: ty, required: req, optional: opt, computed: comp}
	}
	b := newBlock()
	leaf(b, "name", cty.String, true, false, false)
	leaf(b, "size", cty.Number, false, true, false)
	leaf(b, "id", cty.String, false, false, true)
	leaf(b, "zone", cty.String, false, true, true)
	opts := &object{nesting: nestSingle, attrs: map[string]*attribute{
		"a": {ty: cty.String, optional: true},
		"c": {ty: cty.String, computed: true},
	}}
	b.attrs["opts"] = &attribute{nested: opts, ty: opts.objectType(), optional: true, computed: true}
	list := newBlock()
	leaf(list, "k", cty.String, true, false, false)
	leaf(list, "v", cty.String, false, false, true)
	b.blocks["list"] = &nestedBlock{block: list, nesting: nestList}
	m := newBlock()
	leaf(m, "v", cty.String, false, true, true)
	b.blocks["byname"] = &nestedBlock{block: m, nesting: nestMap}
	set := newBlock()
	leaf(set, "port", cty.Number, true, false, false)
	leaf(set, "proto", cty.String, false, true, true)
	b.blocks["set"] = &nestedBlock{block: set, nesting: nestSet}
	one := newBlock()
	leaf(one, "x", cty.String, false, true, false)
	leaf(one, "y", cty.String, false, false, true)
	b.blocks["one"] = &nestedBlock{block: one, nesting: nestSingle}
	return newSchema(0, b).block
}

func obj(m map[string]cty.Value) cty.Value { return cty.ObjectVal(m) }

var s = cty.StringVal

func TestProposedNew(t *testing.T) {
	b := testBlock()
	listTy := b.blocks["list"].block.ty
	optsTy := b.attrs["opts"].ty
	prior := obj(map[string]cty.Value{
		"name": s("n"), "size": cty.NumberIntVal(1), "id": s("i-1"), "zone": s("z1"),
		"opts":   obj(map[string]cty.Value{"a": cty.NullVal(cty.String), "c": s("computed")}),
		"list":   cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("a"), "v": s("va")}), obj(map[string]cty.Value{"k": s("b"), "v": s("vb")})}),
		"byname": cty.MapVal(map[string]cty.Value{"x": obj(map[string]cty.Value{"v": s("vx")})}),
		"set": cty.SetVal([]cty.Value{obj(map[string]cty.Value{"port": cty.NumberIntVal(80), "proto": s("tcp")}),
			obj(map[string]cty.Value{"port": cty.NumberIntVal(53), "proto": s("udp")})}),
		"one": obj(map[string]cty.Value{"x": s("x"), "y": s("y")}),
	})
	config := obj(map[string]cty.Value{
		"name": s("n2"), "size": cty.NullVal(cty.Number), "id": cty.NullVal(cty.String), "zone": cty.NullVal(cty.String),
		"opts": cty.NullVal(optsTy),
		"list": cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("a2"), "v": cty.NullVal(cty.String)}),
			obj(map[string]cty.Value{"k": s("b"), "v": cty.NullVal(cty.String)}),
			obj(map[string]cty.Value{"k": s("c"), "v": cty.NullVal(cty.String)})}),
		"byname": cty.MapVal(map[string]cty.Value{"x": obj(map[string]cty.Value{"v": cty.NullVal(cty.String)}),
			"y": obj(map[string]cty.Value{"v": cty.NullVal(cty.String)})}),
		"set": cty.SetVal([]cty.Value{obj(map[string]cty.Value{"port": cty.NumberIntVal(80), "proto": cty.NullVal(cty.String)}),
			obj(map[string]cty.Value{"port": cty.NumberIntVal(53), "proto": s("tcp")})}),
		"one": obj(map[string]cty.Value{"x": cty.UnknownVal(cty.String), "y": cty.NullVal(cty.String)}),
	})
	got := b.proposedNew(prior, config)
	want := obj(map[string]cty.Value{
		"name": s("n2"), "size": cty.NullVal(cty.Number), "id": s("i-1"), "zone": s("z1"),
		"opts": obj(map[string]cty.Value{"a": cty.NullVal(cty.String), "c": s("computed")}),
		"list": cty.ListVal([]cty.Value{obj(map[string]cty.Value{"k": s("a2"), "v": s("va")}),
			obj(map[string]cty.Value{"k": s("b"), "v": s("vb")}),
			obj(map[string]cty.Value{"k": s("c"), "v": cty.NullVal(cty.String)})}),
		"byname": cty.MapVal(map[string]cty.Value{"x": obj(map[string]cty.Value{"v": s("vx")}),
			"y": obj(map[string]cty.Value{"v": cty.NullVal(cty.String)})}),
		"set": cty.SetVal([]cty.Value{obj(map[string]cty.Value{"port": cty.NumberIntVal(80), "proto": s("tcp")}),
			obj(map[string]cty.Value{"port": cty.NumberIntVal(53), "proto": s("tcp")})}),
		"one": obj(map[string]cty.Value{"x": cty.UnknownVal(cty.String), "y": s("y")}),
	})
	if !got.RawEquals(want) {
		t.Errorf("proposedNew =\n%#v\nwant\n%#v", got, want)
	}

	// a create: the configuration as it is
	create := b.proposedNew(cty.NullVal(b.ty), config)
	if !create.RawEquals(config) {
		t.Errorf("create proposal differs from the configuration:\n%#v", create)
	}
	// an optional+computed nested object set by the previous configuration (a non-computed
	// attribute is set) and now removed from it is proposed null, not kept
	m := prior.AsValueMap()
	m["opts"] = obj(map[string]cty.Value{"a": s("user"), "c": s("computed")})
	prior2 := obj(m)
	if got := b.proposedNew(prior2, config).GetAttr("opts"); !got.IsNull() {
		t.Errorf("opts set by the old configuration: proposed %#v, want null", got)
	}
	// an unknown configuration of a dynamic block stays unknown
	m = config.AsValueMap()
	m["list"] = cty.UnknownVal(cty.List(listTy))
	if got := b.proposedNew(prior, obj(m)).GetAttr("list"); got.IsKnown() {
		t.Errorf("unknown list block proposed as %#v", got)
	}
}

func TestPlannedDataObject(t *testing.T) {
	b := testBlock()
	config := b.emptyValue()
	m := config.AsValueMap()
	m["name"] = cty.UnknownVal(cty.String)
	m["size"] = cty.NumberIntVal(3)
	got := b.proposedNew(cty.UnknownVal(b.ty), obj(m))
	if !got.GetAttr("size").RawEquals(cty.NumberIntVal(3)) || got.GetAttr("id").IsKnown() || got.GetAttr("name").IsKnown() || got.GetAttr("zone").IsKnown() {
		t.Errorf("planned data object = %#v", got)
	}
}

func TestEmptyValueAndSpec(t *testing.T) {
	b := testBlock()
	e := b.emptyValue()
	if !e.Type().Equals(b.ty) {
		t.Fatalf("empty value type %#v, implied %#v", e.Type(), b.ty)
	}
	if l := e.GetAttr("list"); l.IsNull() || l.LengthInt() != 0 {
		t.Errorf("empty list block = %#v", l)
	}
	if o := e.GetAttr("one"); !o.IsNull() {
		t.Errorf("empty single block = %#v", o)
	}
}
