package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportedResources is `cairn state pull --show-secrets` of stack, its resources by URN.
func exportedResources(t *testing.T, c *cairnCLI, stack string) map[string]map[string]any {
	t.Helper()
	var dep struct {
		Deployment struct {
			Resources []map[string]any `json:"resources"`
		} `json:"deployment"`
	}
	out := c.run("state", "pull", "--show-secrets", "--stack", stack)
	if err := json.Unmarshal([]byte(out), &dep); err != nil {
		t.Fatalf("state pull: %v\n%s", err, out)
	}
	byURN := map[string]map[string]any{}
	for _, r := range dep.Deployment.Resources {
		byURN[r["urn"].(string)] = r
	}
	return byURN
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// stackOutputs is `cairn outputs -o json` of stack, by name.
func stackOutputs(t *testing.T, c *cairnCLI, stack string) map[string]any {
	t.Helper()
	out := c.run("outputs", "--stack", stack, "-o", "json")
	var list []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("outputs: %v\n%s", err, out)
	}
	m := map[string]any{}
	for _, o := range list {
		m[o.Name] = o.Value
	}
	return m
}

// TestPulumiParameterizedPackages deploys two packages made by one base plugin (the
// conformance provider parameterized 1.2.3) through package declarations: an explicit provider
// of one, a resource and an invoke of the other through its default provider. Each package is
// its own parameterized instance (a resource's outputs name the parameter it was given), and
// the export stores the providers as Pulumi does. A component of a parameterized package whose
// Construct answers without registering it (the conformance provider's) gives its outputs and,
// as under pulumi, no row in the export.
func TestPulumiParameterizedPackages(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Pulumi.yaml": "name: params\nruntime: yaml\n",
		"sdks/goodbye.yaml": "packageDeclarationVersion: 1\nname: parameterized\nversion: 1.2.3\n" +
			"parameterization:\n  name: goodbye\n  version: 2.0.0\n  value: R29vZGJ5ZQ==\n", // "Goodbye"
		"sdks/hi.yaml": "packageDeclarationVersion: 1\nname: parameterized\nversion: 1.2.3\n" +
			"parameterization:\n  name: hi\n  version: 3.0.0\n  value: SGVsbG8=\n", // "Hello"
		"Main.yaml": `resources:
  prov:
    type: pulumi:providers:goodbye
    properties:
      text: World
  bye:
    type: goodbye:Goodbye
    options:
      provider: ${prov}
  hello:
    type: hi:Hello
  comp:
    type: hi:HelloComponent
outputs:
  fromComponent: ${comp.parameterValue}
  bye: ${bye.parameterValue}
  hello: ${hello.parameterValue}
  invoked:
    fn::invoke:
      function: hi:doHello
      arguments:
        input: say
      return: output
`,
	})
	c.run("deploy", "-f", dir, "--stack", "s")
	outputs := stackOutputs(t, c, "s")
	out := asJSON(outputs)
	want := map[string]any{"bye": "Goodbye World", "hello": "Hello", "invoked": "sayHello", "fromComponent": "HelloComponent"}
	for k, v := range want {
		if outputs[k] != v {
			t.Errorf("output %s = %#v, want %#v (all: %s)", k, outputs[k], v, out)
		}
	}

	res := exportedResources(t, c, "s")
	prov := res["urn:pulumi:s::params::pulumi:providers:goodbye::prov"]
	if prov == nil {
		t.Fatalf("no explicit provider in the export: %s", asJSON(res))
	}
	wantIn := `{"__internal":{"name":"parameterized","parameterization":"R29vZGJ5ZQ==","version":"1.2.3"},"text":"World","version":"2.0.0"}`
	if got := asJSON(prov["inputs"]); got != wantIn {
		t.Errorf("explicit provider inputs = %s, want %s", got, wantIn)
	}
	if got := asJSON(prov["outputs"]); got != `{"text":"World","version":"2.0.0"}` {
		t.Errorf("explicit provider outputs = %s (no __internal, as Pulumi)", got)
	}
	def := res["urn:pulumi:s::params::pulumi:providers:hi::default_3_0_0"]
	if def == nil {
		t.Fatalf("no default provider default_3_0_0 of hi in the export: %s", asJSON(res))
	}
	wantIn = `{"__internal":{"name":"parameterized","parameterization":"SGVsbG8=","version":"1.2.3"},"version":"3.0.0"}`
	if got := asJSON(def["inputs"]); got != wantIn {
		t.Errorf("default provider inputs = %s, want %s", got, wantIn)
	}
	if r := res["urn:pulumi:s::params::hi:index:Hello::hello"]; r == nil || r["provider"] != "urn:pulumi:s::params::pulumi:providers:hi::default_3_0_0::"+def["id"].(string) {
		t.Errorf("hello is not served by hi's default provider: %s", asJSON(r))
	}

	for urn := range res {
		if urn == "" || strings.Contains(urn, "HelloComponent") {
			t.Errorf("the component its Construct never registered is in the export, as it is not in pulumi's: %s", urn)
		}
	}

	// a redeploy changes nothing, and delete removes both packages' resources
	c.run("deploy", "-f", dir, "--stack", "s")
	c.run("delete", "--stack", "s")
}

// TestPulumiStash keeps a value with the engine's own pulumi:Stash: its output is the input it
// was created with, and an input changed later is an update that keeps that output.
func TestPulumiStash(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	program := func(input string) {
		writeFiles(t, dir, map[string]string{"Pulumi.yaml": `name: stash
runtime: yaml
resources:
  kept:
    type: pulumi:Stash
    properties:
      input: ` + input + `
outputs:
  in: ${kept.input}
  out: ${kept.output}
`})
	}
	outputs := func() map[string]any { return stackOutputs(t, c, "s") }
	program(`{key: [value, s], "": false}`)
	c.run("deploy", "-f", dir, "--stack", "s")
	first := `{"":false,"key":["value","s"]}`
	if o := outputs(); asJSON(o["in"]) != first || asJSON(o["out"]) != first {
		t.Fatalf("after create: %s", asJSON(o))
	}
	id := attrsOf(c.describe("s"), "kept").PhysicalID

	program("changed")
	c.run("deploy", "-f", dir, "--stack", "s")
	if o := outputs(); o["in"] != "changed" || asJSON(o["out"]) != first {
		t.Fatalf("after the input changed: %s, want in = changed and out kept", asJSON(o))
	}
	if got := attrsOf(c.describe("s"), "kept").PhysicalID; got != id || id == "" {
		t.Errorf("the stash was replaced (%q, then %q): a changed input is an update", id, got)
	}
	res := exportedResources(t, c, "s")
	if p := res["urn:pulumi:s::stash::pulumi:providers:pulumi::default"]; p == nil || p["inputs"] != nil {
		t.Errorf("the engine's own default provider is exported without inputs, as Pulumi: %s", asJSON(res))
	}
	c.run("delete", "--stack", "s")
}
