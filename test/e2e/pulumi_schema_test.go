package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Schema-driven behaviour of Pulumi YAML programs, through the real conformance plugins
// (test/pulumiproviders): what a package schema says about inputs, replacements and function
// results, byte strings between two plugins, and logical names.

// writeProgram writes a Pulumi.yaml (and, when config is not empty, Pulumi.s.yaml) to dir.
func writeProgram(t *testing.T, dir, program, config string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.s.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// outputsOf returns the stack's outputs, secrets shown.
func outputsOf(t *testing.T, c *cairnCLI) map[string]any {
	t.Helper()
	var outs []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(c.run("outputs", "-o", "json", "--show-secrets", "--stack", "s")), &outs); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	for _, o := range outs {
		m[o.Name] = o.Value
	}
	return m
}

// TestPulumiSchemaDrivenInputsAndInvokes: an invoke's result feeds a boolean input the
// provider refuses unknown (docs 28.0.0: judged once known, not at load); functions whose
// schema returns a scalar give that value, secret when the plugin said so (scalar-returns
// 21.0.0, simple-invoke-with-scalar-return 17.0.0); non-UTF-8 bytes flow from one plugin to
// another (bytesource 48.0.0 refuses an engine that does not accept byte strings).
func TestPulumiSchemaDrivenInputsAndInvokes(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	writeProgram(t, dir, `name: schema-e2e
runtime: yaml
resources:
  doc:
    type: docs:Resource
    properties:
      in:
        fn::invoke: {function: docs:fun, arguments: {in: false}, return: out, options: {version: 28.0.0}}
    options: {version: 28.0.0}
  source:
    type: bytesource:Resource
    properties: {base64: AGhlbGxvIID+/yB3b3JsZPAo}
    options: {version: 48.0.0}
  sink:
    type: bytesink:Resource
    properties: {bytes: "${source.bytes}", expectBase64: "${source.base64}"}
    options: {version: 47.0.0}
outputs:
  docOut: ${doc.out}
  scalar:
    fn::invoke: {function: simple-invoke-with-scalar-return:myInvokeScalar, arguments: {value: goodbye}, options: {version: 17.0.0}}
  secret:
    fn::invoke: {function: scalar-returns:invokeSecret, arguments: {value: goodbye}, options: {version: 21.0.0}}
  map:
    fn::invoke: {function: scalar-returns:invokeMap, arguments: {value: hello}, options: {version: 21.0.0}}
`, "")
	out := c.run("deploy", "-f", dir, "--stack", "s")
	got := outputsOf(t, c)
	want := map[string]any{"docOut": false, "scalar": true, "secret": float64(7), "map": map[string]any{"value": "hello world"}}
	for k, w := range want {
		if b, _ := json.Marshal(got[k]); string(b) != mustJSON(t, w) {
			t.Errorf("output %s = %s, want %s\n%s", k, b, mustJSON(t, w), out)
		}
	}
	if masked := c.run("outputs", "--stack", "s"); strings.Contains(masked, " 7") {
		t.Errorf("the secret scalar is shown in clear:\n%s", masked)
	}
	if v := attrs(t, c.describe("s"), "sink")["expectBase64"]; v != "AGhlbGxvIID+/yB3b3JsZPAo" {
		t.Errorf("sink: %#v", attrs(t, c.describe("s"), "sink"))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPulumiSchemaReplaceOnChanges: a property its schema marks replaceOnChanges replaces the
// resource when it changes (replaceonchanges 25.0.0, whose own Diff updates in place); a
// resource type without one is updated.
func TestPulumiSchemaReplaceOnChanges(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	program := func(replaceProp, value string) string {
		return `name: roc-e2e
runtime: yaml
resources:
  a:
    type: replaceonchanges:ResourceA
    properties: {value: true, replaceProp: ` + replaceProp + `}
    options: {version: 25.0.0}
  b:
    type: replaceonchanges:ResourceB
    properties: {value: ` + value + `}
    options: {version: 25.0.0}
`
	}
	writeProgram(t, dir, program("true", "true"), "")
	c.run("deploy", "-f", dir, "--stack", "s")
	writeProgram(t, dir, program("false", "false"), "")
	out := c.run("deploy", "-f", dir, "--stack", "s")
	steps := func(name string) string {
		var s []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 3 && f[1] == name {
				s = append(s, f[3])
			}
		}
		return strings.Join(s, " ")
	}
	if !strings.Contains(steps("a"), "DELETE_COMPLETE") {
		t.Errorf("a: schema replaceOnChanges on replaceProp: want a replacement, got %q\n%s", steps("a"), out)
	}
	if got := steps("b"); got != "UPDATE_IN_PROGRESS UPDATE_COMPLETE" {
		t.Errorf("b: want an update in place, got %q\n%s", got, out)
	}
}

// TestPulumiLogicalNames: a config declaration's name: is the key of the stack's config, a
// resource's name: its logical name; the program uses the keys it declares.
func TestPulumiLogicalNames(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	writeProgram(t, dir, `name: names-e2e
runtime: yaml
configuration:
  flag:
    type: bool
    name: "cC-Charlie.😃"
resources:
  lexical:
    type: simple:Resource
    name: "aA-Alpha.🤯"
    properties: {value: "${flag}"}
    options: {version: 2.0.0}
outputs:
  value: ${lexical.value}
`, "config:\n  names-e2e:cC-Charlie.😃: \"true\"\n")
	c.run("deploy", "-f", dir, "--stack", "s")
	if v := attrs(t, c.describe("s"), "aA-Alpha.🤯")["value"]; v != true {
		t.Errorf("aA-Alpha.🤯's value = %#v, want true", v)
	}
	if v := outputsOf(t, c)["value"]; v != true {
		t.Errorf("output value = %#v", v)
	}
	if pull := c.run("state", "pull", "--stack", "s", "--show-secrets"); !strings.Contains(pull, "simple:index:Resource::aA-Alpha.🤯") {
		t.Errorf("the URN does not carry the logical name:\n%s", pull)
	}
}
