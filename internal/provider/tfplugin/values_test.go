package tfplugin

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// sensBlock: secret (sensitive), nested object with a sensitive attribute, a list block and a
// set block each holding a sensitive attribute.
func sensBlock() *block {
	b := newBlock()
	b.attrs["plain"] = &attribute{ty: cty.String, optional: true}
	b.attrs["secret"] = &attribute{ty: cty.String, optional: true, sensitive: true}
	o := &object{nesting: nestList, attrs: map[string]*attribute{
		"user": {ty: cty.String, optional: true},
		"pass": {ty: cty.String, optional: true, sensitive: true},
	}}
	b.attrs["logins"] = &attribute{nested: o, ty: cty.List(o.objectType()), optional: true}
	inner := newBlock()
	inner.attrs["k"] = &attribute{ty: cty.String, optional: true}
	inner.attrs["v"] = &attribute{ty: cty.String, optional: true, sensitive: true}
	b.blocks["list"] = &nestedBlock{block: inner, nesting: nestList}
	b.blocks["set"] = &nestedBlock{block: inner, nesting: nestSet}
	return newSchema(0, b).block
}

func sensValue(secret cty.Value) cty.Value {
	kv := obj(map[string]cty.Value{"k": s("k"), "v": s("v")})
	return obj(map[string]cty.Value{
		"plain":  s("p"),
		"secret": secret,
		"logins": cty.ListVal([]cty.Value{obj(map[string]cty.Value{"user": s("u"), "pass": s("pw")})}),
		"list":   cty.ListVal([]cty.Value{kv}),
		"set":    cty.SetVal([]cty.Value{kv}),
	})
}

func TestMarkSensitive(t *testing.T) {
	b := sensBlock()
	v := b.mark(sensValue(s("x")))
	marked := func(p cty.Path) bool {
		x, err := p.Apply(v)
		if err != nil {
			t.Fatalf("%#v: %v", p, err)
		}
		return x.HasMark(value.Sensitive)
	}
	first := cty.NumberIntVal(0)
	for _, c := range []struct {
		path cty.Path
		want bool
	}{
		{cty.GetAttrPath("plain"), false},
		{cty.GetAttrPath("secret"), true},
		{cty.GetAttrPath("logins").Index(first).GetAttr("pass"), true},
		{cty.GetAttrPath("logins").Index(first).GetAttr("user"), false},
		{cty.GetAttrPath("list").Index(first).GetAttr("v"), true},
		{cty.GetAttrPath("list").Index(first).GetAttr("k"), false},
		{cty.GetAttrPath("set"), true}, // cty hoists element marks to the set
	} {
		if got := marked(c.path); got != c.want {
			t.Errorf("%s marked = %v, want %v", pathString(c.path), got, c.want)
		}
	}
	// the marks survive cairn's storage
	if !value.IsSecret(stored(t, v).GetAttr("secret")) {
		t.Error("secret mark lost in storage")
	}
}

// TestMsgpackRoundTrip: values with unknowns (refined ones too) and secret marks travel to the
// provider and back unchanged apart from the marks, which never reach the wire.
func TestMsgpackRoundTrip(t *testing.T) {
	b := sensBlock()
	refined := cty.UnknownVal(cty.String).Refine().NotNull().StringPrefix("arn:").NewValue()
	in := sensValue(refined)
	m := in.AsValueMap()
	m["plain"] = value.Secret(s("shh"))
	m["list"] = cty.UnknownVal(b.blocks["list"].emptyValue().Type())
	in = obj(m)
	enc, err := encode(in, b.ty)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decode(dynValue{msgpack: enc}, b.ty)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := in.UnmarkDeep()
	if !out.RawEquals(plain) {
		t.Errorf("round trip:\n%#v\nwant\n%#v", out, plain)
	}
	if out.ContainsMarked() {
		t.Error("decoded value carries marks")
	}
	if rng := out.GetAttr("secret").Range(); rng.CouldBeNull() || rng.StringPrefix() != "arn:" {
		t.Errorf("refinement lost: %#v", out.GetAttr("secret"))
	}
	// JSON answers are accepted; empty is null
	if v, err := decode(dynValue{json: []byte(`{"plain":"j"}`)}, cty.Object(map[string]cty.Type{"plain": cty.String})); err != nil || v.GetAttr("plain").AsString() != "j" {
		t.Errorf("JSON decode = %#v, %v", v, err)
	}
	if v, err := decode(dynValue{}, b.ty); err != nil || !v.IsNull() {
		t.Errorf("empty decode = %#v, %v", v, err)
	}
}

// TestFit: stored JSON state (lists as tuples, maps as objects, numbers as numbers) and
// configurations from other dialects come back to the schema type.
func TestFit(t *testing.T) {
	b := testBlock()
	st, err := value.FromJSON([]byte(`{"name":"n","size":2,"id":"i","list":[{"k":"a","v":"b"}],
		"byname":{"x":{"v":"1"}},"set":[{"port":80,"proto":"tcp"}],"one":null}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.fit(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Type().Equals(b.ty) || !v.GetAttr("zone").IsNull() || v.GetAttr("list").LengthInt() != 1 || !v.GetAttr("set").Type().IsSetType() {
		t.Errorf("fit = %#v", v)
	}
	if v, err := b.fit(cty.EmptyObjectVal, nil); err != nil || !v.RawEquals(b.emptyValue()) {
		t.Errorf("fit(empty object) = %#v, %v", v, err)
	}
	if _, err := b.fit(obj(map[string]cty.Value{"name": s("n"), "bogus": s("x")}), nil); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Errorf("fit(extra attribute) = %v", err)
	}
	if _, err := b.fit(obj(map[string]cty.Value{"size": s("big")}), nil); err == nil {
		t.Error("fit(size = \"big\"): no error")
	}
	if v, err := b.fit(cty.UnknownVal(cty.DynamicPseudoType), nil); err != nil || v.IsKnown() || !v.Type().Equals(b.ty) {
		t.Errorf("fit(unknown) = %#v, %v", v, err)
	}
}

func TestPathString(t *testing.T) {
	for _, c := range []struct {
		path cty.Path
		want string
	}{
		{nil, ""},
		{cty.GetAttrPath("a"), "a"},
		{cty.GetAttrPath("rule").Index(cty.NumberIntVal(2)).GetAttr("port"), "rule.2.port"},
		{cty.GetAttrPath("tags").Index(cty.StringVal("env")), "tags.env"},
		{cty.GetAttrPath("tags").Index(cty.StringVal("kubernetes.io/name")), `tags["kubernetes.io/name"]`},
		{cty.GetAttrPath("s").Index(cty.ObjectVal(map[string]cty.Value{"a": cty.True})), "s[?]"},
	} {
		if got := pathString(c.path); got != c.want {
			t.Errorf("pathString(%#v) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestPrivateEnvelope(t *testing.T) {
	env, ok := unwrapPrivate(wrapPrivate(3, []byte{0, 1, 2}))
	if !ok || env.Version != 3 || string(env.Private) != "\x00\x01\x02" {
		t.Errorf("round trip = %+v, %v", env, ok)
	}
	if env, ok := unwrapPrivate([]byte("raw provider bytes")); ok || string(env.Private) != "raw provider bytes" {
		t.Errorf("foreign bytes = %+v, %v", env, ok)
	}
	if _, ok := unwrapPrivate(nil); ok {
		t.Error("nil: envelope found")
	}
}
