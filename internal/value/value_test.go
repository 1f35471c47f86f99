package value

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestJSONRoundTripAndStringify(t *testing.T) {
	v, err := FromJSON([]byte(`{"Count":4,"Flag":true,"List":[1,"2",{"n":1.5}],"Big":12345678901234567890,"Null":null}`))
	if err != nil {
		t.Fatal(err)
	}
	s := Stringify(v)
	b, err := ToJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Big":"12345678901234567890","Count":"4","Flag":"true","List":["1","2",{"n":"1.5"}],"Null":null}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("Stringify: -want +got\n%s", diff)
	}
}

func TestMaskedHidesSecretsAndUnknowns(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{
		"Password": Secret(cty.StringVal("hunter2")),
		"Later":    cty.DynamicVal,
		"Plain":    cty.StringVal("ok"),
	})
	got := Masked(v, "(known after apply)")
	want := map[string]any{"Password": Mask, "Later": "(known after apply)", "Plain": "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Masked: -want +got\n%s", diff)
	}
	if !IsSecret(Stringify(v)) {
		t.Errorf("Stringify dropped the sensitive mark")
	}
}

func TestMarshalKeepsSecrets(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{
		"Password": Secret(cty.StringVal("hunter2")),
		"List":     cty.TupleVal([]cty.Value{cty.StringVal("a"), Secret(cty.NumberIntVal(3))}),
		"Plain":    cty.StringVal("ok"),
	})
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Password": Mask, "List": []any{"a", Mask}, "Plain": "ok"}
	if diff := cmp.Diff(want, Masked(got, "?")); diff != "" {
		t.Errorf("round trip: -want +got\n%s", diff)
	}
}

func TestWithPaths(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("new"), "b": cty.StringVal("new"),
		"m": cty.MapVal(map[string]cty.Value{"k": cty.StringVal("new")})})
	old := cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("old"), "b": cty.StringVal("old"),
		"m": cty.MapVal(map[string]cty.Value{"k": cty.StringVal("old")})})
	got := WithPaths(v, old, []cty.Path{cty.GetAttrPath("a"), cty.GetAttrPath("m").Index(cty.StringVal("k")), cty.GetAttrPath("zz")})
	want := cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("old"), "b": cty.StringVal("new"),
		"m": cty.MapVal(map[string]cty.Value{"k": cty.StringVal("old")})})
	if !got.RawEquals(want) {
		t.Errorf("WithPaths = %#v, want %#v", got, want)
	}
}
