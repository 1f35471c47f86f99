package pulumiyaml

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// TestInvokes: every fn::invoke (long and short form, in outputs, resources and variables,
// used or not) is a data resource of its function, with its arguments, the resources it
// needs, its provider and version; the expression is the result or its `return` property.
func TestInvokes(t *testing.T) {
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": `resources:
  prov:
    type: pulumi:providers:simple-invoke
  res:
    type: simple:Resource
    properties:
      value:
        fn::invoke:
          function: simple-invoke:myInvoke
          arguments: {value: "${prov.id}"}
          options: {provider: "${prov}", version: 10.0.0}
          return: result
variables:
  unused:
    fn::simple-invoke:myInvoke: {value: x}
outputs:
  whole:
    fn::invoke:
      function: simple-invoke:myInvoke
      arguments: {value: hello}
      options: {dependsOn: ["${res}"]}
`}
	schema := func(_ context.Context, source, _ string) ([]byte, error) {
		if pkg, _ := PackageOf(source); pkg == "simple" {
			return []byte(`{"resources": {"simple:index:Resource": {}}}`), nil
		}
		return []byte(`{"functions": {"simple-invoke:index:myInvoke": {}}}`), nil
	}
	st, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	type got struct {
		Type, Provider string
		Deps           []string
	}
	data := map[string]got{}
	for _, r := range st.Resources {
		if r.Mode == template.Data {
			data[r.Name] = got{r.Type, r.Provider, r.DependsOn}
		}
	}
	inRes, inOut, inVar := invokePrefix+"resources.res.properties.value.fn::invoke", invokePrefix+"outputs.whole.fn::invoke",
		invokePrefix+"variables.unused.fn::simple-invoke:myInvoke"
	want := map[string]got{
		inRes: {"simple-invoke:index:myInvoke", ProviderAddr("simple-invoke", "prov"), []string{"prov"}},
		inOut: {"simple-invoke:index:myInvoke", DefaultProviderAddr("simple-invoke"), []string{"res"}},
		inVar: {"simple-invoke:index:myInvoke", DefaultProviderAddr("simple-invoke"), nil},
	}
	if d := cmp.Diff(want, data); d != "" {
		t.Errorf("invokes: -want +got\n%s", d)
	}
	if deps := st.Resource("res").DependsOn; !cmp.Equal(deps, []string{inRes, "prov"}) {
		t.Errorf("res depends on %v", deps)
	}
	if req := st.Requirement("simple-invoke"); req == nil || req.Versions != "10.0.0" {
		t.Errorf("requirement %+v", req)
	}
	result := cty.ObjectVal(map[string]cty.Value{"result": cty.StringVal("hello world")})
	sc := scope{inRes: {Outputs: result}, inOut: {Outputs: result}}
	if v, ds := st.Resource("res").Properties.Eval(sc); ds.HasErrors() || !v.RawEquals(cty.ObjectVal(map[string]cty.Value{"value": cty.StringVal("hello world")})) {
		t.Errorf("return: %#v %v", v, ds)
	}
	if v, ds := st.Outputs[0].Value.Eval(sc); ds.HasErrors() || !v.RawEquals(result) {
		t.Errorf("whole result: %#v %v", v, ds)
	}
	if v, _ := st.Outputs[0].Value.Eval(scope{}); v.IsKnown() {
		t.Errorf("an invoke not read yet is %#v, want unknown", v)
	}
}

// TestResourceInfo: fn::pulumiResourceName and fn::pulumiResourceType give the logical name
// and the canonical type token.
func TestResourceInfo(t *testing.T) {
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": `resources:
  res1: {type: simple:Resource}
outputs:
  name: {fn::pulumiResourceName: "${res1}"}
  type: {fn::pulumiResourceType: "${res1}"}
`}
	schema := func(context.Context, string, string) ([]byte, error) {
		return []byte(`{"resources": {"simple:index:Resource": {}}}`), nil
	}
	st, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for i, want := range []string{"res1", "simple:index:Resource"} {
		if v, ds := st.Outputs[i].Value.Eval(scope{}); ds.HasErrors() || !v.RawEquals(cty.StringVal(want)) {
			t.Errorf("output %s = %#v %v, want %q", st.Outputs[i].Name, v, ds, want)
		}
	}
	files["Main.yaml"] = "variables:\n  v: 1\noutputs:\n  name: {fn::pulumiResourceName: \"${v.x}\"}\n"
	if _, ds := Parse(context.Background(), files, "dev", nil); find(ds, "fn::pulumiResourceName needs a resource reference") == nil {
		t.Errorf("a non-resource: %v", ds)
	}
}
