package pulumiyaml

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// factsSchema is a package whose schema marks inputs and outputs secret and replaceOnChanges
// (directly and inside an object type), with functions of each return shape.
const factsSchema = `{"name": "facts",
  "provider": {"inputProperties": {"token": {"type": "string", "secret": true}, "region": {"type": "string"}}},
  "types": {"facts:index:Inner": {"type": "object", "properties": {"zone": {"type": "string", "replaceOnChanges": true},
                                                                "self": {"$ref": "#/types/facts:index:Inner"}}},
            "facts:index:Color": {"type": "string", "enum": [{"value": "red"}]}},
  "resources": {"facts:index:Thing": {
    "properties": {"password": {"type": "string", "secret": true}, "name": {"type": "string", "replaceOnChanges": true},
                   "inner": {"$ref": "#/types/facts:index:Inner"}, "plain": {"type": "string"}},
    "inputProperties": {"password": {"type": "string", "secret": true}, "name": {"type": "string"}, "plain": {"type": "string"}}}},
  "functions": {
    "facts:index:object": {"outputs": {"properties": {"out": {"type": "string"}}}},
    "facts:index:objectRef": {"outputs": {"$ref": "#/types/facts:index:Inner"}},
    "facts:index:number": {"outputs": {"type": "number"}},
    "facts:index:map": {"outputs": {"type": "object", "additionalProperties": {"type": "string"}}},
    "facts:index:enum": {"outputs": {"$ref": "#/types/facts:index:Color"}},
    "facts:index:none": {}}}`

func TestScalarReturnsFromTheSchema(t *testing.T) {
	tokens, err := decodeTokens([]byte(factsSchema))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"facts:index:number": true, "facts:index:map": true, "facts:index:enum": true}
	if d := cmp.Diff(want, tokens.scalarFunctions); d != "" {
		t.Errorf("scalar functions: -want +got\n%s", d)
	}
}

func parseFacts(t *testing.T, main string) *template.Stack {
	t.Helper()
	files := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n", "Main.yaml": main}
	schema := func(context.Context, string, string) ([]byte, error) { return []byte(factsSchema), nil }
	st, ds := ParseWith(context.Background(), files, "dev", nil, Options{Schema: schema})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return st
}

// TestSchemaSecretInputsAndReplaceOnChanges: what the schema marks secret is sent secret (the
// program wrote it plain), secret outputs are additional secret outputs, and the paths to
// replaceOnChanges properties join the program's own option, as pulumi-yaml applies them;
// for a provider resource, the schema's provider section counts.
func TestSchemaSecretInputsAndReplaceOnChanges(t *testing.T) {
	st := parseFacts(t, `resources:
  prov:
    type: pulumi:providers:facts
    properties: {token: abc, region: here}
  thing:
    type: facts:Thing
    properties: {password: hunter2, name: n, plain: p}
    options:
      replaceOnChanges: [plain]
      additionalSecretOutputs: [name]
`)
	thing := st.Resource("thing")
	v, ds := thing.Properties.Eval(scope{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	attrs := v.AsValueMap()
	if !value.IsSecret(attrs["password"]) || value.IsSecret(attrs["name"]) || value.IsSecret(attrs["plain"]) {
		t.Errorf("thing's inputs: %#v, want only password secret", v)
	}
	if d := cmp.Diff([]string{"plain", "inner.zone", "name"}, thing.ReplaceOnChanges); d != "" { // a recursive type ends
		t.Errorf("replaceOnChanges: -want +got\n%s", d)
	}
	if d := cmp.Diff([]string{"name", "password"}, thing.SecretOutputs); d != "" {
		t.Errorf("secret outputs: -want +got\n%s", d)
	}
	pv, _ := st.Resource("prov").Properties.Eval(scope{})
	if pa := pv.AsValueMap(); !value.IsSecret(pa["token"]) || value.IsSecret(pa["region"]) {
		t.Errorf("provider's inputs: %#v, want token secret", pv)
	}
}

// TestScalarInvokeResults: a function whose schema outputs are not an object returns the one
// value of the plugin's answer (its property name is the plugin's choice), secret when the
// answer held a secret; `return:` is refused for it; an object result is kept whole.
func TestScalarInvokeResults(t *testing.T) {
	st := parseFacts(t, `outputs:
  number:
    fn::invoke: {function: facts:number, arguments: {}}
  map:
    fn::invoke: {function: facts:map, arguments: {}}
  object:
    fn::invoke: {function: facts:object, arguments: {}}
  returned:
    fn::invoke: {function: facts:number, arguments: {x: 1}, return: out}
`)
	name := func(out string) string { return invokePrefix + "outputs." + out + ".fn::invoke" }
	secretMap := value.Secret(cty.ObjectVal(map[string]cty.Value{"value": cty.StringVal("secret world")}))
	sc := scope{
		name("number"):   {Outputs: cty.ObjectVal(map[string]cty.Value{"return": value.Secret(cty.NumberIntVal(7))})},
		name("map"):      {Outputs: cty.ObjectVal(map[string]cty.Value{"result": secretMap})},
		name("object"):   {Outputs: cty.ObjectVal(map[string]cty.Value{"out": cty.StringVal("x")})},
		name("returned"): {Outputs: cty.ObjectVal(map[string]cty.Value{"out": cty.NumberIntVal(1)})},
	}
	want := map[string]cty.Value{
		"number": value.Secret(cty.NumberIntVal(7)),
		"map":    secretMap,
		"object": cty.ObjectVal(map[string]cty.Value{"out": cty.StringVal("x")}),
	}
	for _, o := range st.Outputs {
		v, ds := o.Value.Eval(sc)
		if o.Name == "returned" {
			if find(ds, "has a non-object return value; cannot specify property 'out'") == nil {
				t.Errorf("return: on a scalar function: %v", ds)
			}
			continue
		}
		if ds.HasErrors() || !v.RawEquals(want[o.Name]) {
			t.Errorf("output %s = %#v %v, want %#v", o.Name, v, ds, want[o.Name])
		}
	}
}
