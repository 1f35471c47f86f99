package pulumiyaml

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// TestLogicalNames: a config declaration's name: is the key read from the stack's config, a
// resource's name: its logical name (URN, state, dependencies); the program refers to both by
// the keys it declares them under.
func TestLogicalNames(t *testing.T) {
	files := map[string]string{
		"Pulumi.yaml": "name: p\nruntime: yaml\n",
		"Main.yaml": `configuration:
  flag:
    type: bool
    name: "cC-Charlie.😃"
resources:
  first:
    type: simple:Resource
    name: "aA-Alpha.🤯"
    properties: {value: "${flag}"}
  second:
    type: simple:Resource
    properties: {value: "${first.value}"}
    options: {dependsOn: ["${first}"]}
outputs:
  v: ${first.value}
  n: {fn::pulumiResourceName: "${first}"}
`,
		"Pulumi.dev.yaml": "config:\n  p:cC-Charlie.😃: \"true\"\n",
	}
	st, ds := Parse(context.Background(), files, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if r := st.Resource("aA-Alpha.🤯"); r == nil {
		t.Fatalf("no resource under the logical name; resources %v", st.Resources)
	}
	if deps := st.Resource("second").DependsOn; len(deps) != 1 || deps[0] != "aA-Alpha.🤯" {
		t.Errorf("second depends on %v", deps)
	}
	if v, ds := st.Resource("aA-Alpha.🤯").Properties.Eval(scope{}); ds.HasErrors() || !v.RawEquals(cty.ObjectVal(map[string]cty.Value{"value": cty.True})) {
		t.Errorf("first's properties %#v %v: the config read by its name: key", v, ds)
	}
	sc := scope{"aA-Alpha.🤯": {Outputs: cty.ObjectVal(map[string]cty.Value{"value": cty.True})}}
	for i, want := range []cty.Value{cty.True, cty.StringVal("aA-Alpha.🤯")} {
		if v, ds := st.Outputs[i].Value.Eval(sc); ds.HasErrors() || !v.RawEquals(want) {
			t.Errorf("output %s = %#v %v, want %#v", st.Outputs[i].Name, v, ds, want)
		}
	}
	if p := parameter(st, "cC-Charlie.😃"); p == nil {
		t.Errorf("no parameter under the config key; %v", st.Parameters)
	}

	files["Main.yaml"] = "resources:\n  a: {type: simple:Resource, name: b}\n  b: {type: simple:Resource}\n"
	if _, ds := Parse(context.Background(), files, "dev", nil); find(ds, `two resources have the logical name "b"`) == nil {
		t.Errorf("a name: taken twice: %v", ds)
	}
}

func parameter(st *template.Stack, name string) *template.Parameter {
	for _, p := range st.Parameters {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// TestPropertyDependencies: each top-level property lists the resources its value comes
// from; an invoke's result counts as what its arguments use and its dependsOn names.
func TestPropertyDependencies(t *testing.T) {
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": `resources:
  first: {type: simple:Resource, properties: {value: true}}
  other: {type: simple:Resource, properties: {value: true}}
  second:
    type: simple:Resource
    properties:
      value: ${data.result}
      plain: x
      both: ["${other.value}", "${arg.result}"]
    options: {dependsOn: ["${other}"]}
variables:
  data:
    fn::invoke: {function: simple-invoke:myInvoke, arguments: {value: hello}, options: {dependsOn: ["${first}"]}}
  arg:
    fn::invoke: {function: simple-invoke:myInvoke, arguments: {value: "${data.result}"}}
`}
	st, ds := Parse(context.Background(), files, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	want := map[string][]string{"value": {"first"}, "plain": {}, "both": {"first", "other"}}
	got := st.Resource("second").PropertyDeps
	for k, w := range want {
		if g := got[k]; len(g) != len(w) || (len(w) > 0 && strings.Join(g, ",") != strings.Join(w, ",")) {
			t.Errorf("property %s depends on %v, want %v", k, g, w)
		}
	}
}
