package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pulumiPackagesProgram uses what a `pulumi package add` project holds: the program in
// Main.yaml, versions in sdks/*.yaml package declarations, short type tokens, an explicit
// provider and an invoke.
var pulumiPackagesProgram = map[string]string{
	"Pulumi.yaml": "name: packages-e2e\nruntime: yaml\n",
	"Main.yaml": `resources:
  prov:
    type: pulumi:providers:simple
  res:
    type: simple:Resource
    properties:
      value: true
    options:
      provider: ${prov}
  byDefault:
    type: simple:Resource
    properties:
      value: false
outputs:
  greeting:
    fn::invoke:
      function: simple-invoke:myInvoke
      arguments:
        value: hello
      return: result
  short:
    fn::simple-invoke:myInvoke:
      value: bye
  type:
    fn::pulumiResourceType: ${res}
`,
	"sdks/simple.yaml":        "packageDeclarationVersion: 1\nname: simple\nversion: 2.0.0\n",
	"sdks/simple-invoke.yaml": "packageDeclarationVersion: 1\nname: simple-invoke\nversion: 10.0.0\n",
}

// TestPulumiYAMLPackagesAndProviders: package declarations pin the plugins (the conformance
// providers refuse a configuration without their version), type tokens are stored as the
// schema declares them, the explicit provider is a resource with a UUID id that keeps it
// across deploys, and invokes go through the provider's Invoke.
func TestPulumiYAMLPackagesAndProviders(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	for name, text := range pulumiPackagesProgram {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.run("deploy", "-f", dir, "--stack", "s")
	st := c.describe("s")
	types, ids := map[string]string{}, map[string]string{}
	for _, r := range st.Resources {
		types[r.LogicalID], ids[r.LogicalID] = r.Type, r.PhysicalID
	}
	want := map[string]string{"prov": "pulumi:providers:simple", "res": "simple:index:Resource", "byDefault": "simple:index:Resource"}
	for name, typ := range want {
		if types[name] != typ {
			t.Errorf("%s has type %q, want %q (all: %v)", name, types[name], typ, types)
		}
	}
	if len(types) != len(want) {
		t.Errorf("resources %v, want only %v: an invoke is no resource of the stack", types, want)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(ids["prov"]) {
		t.Errorf("the provider's id is %q, want a UUID", ids["prov"])
	}
	if v := attrs(t, st, "prov")["version"]; v != "2.0.0" {
		t.Errorf("the provider's configuration has version %#v, want the declared 2.0.0", v)
	}
	out := c.run("outputs", "--stack", "s")
	for _, w := range []string{"hello world", "bye world", "simple:index:Resource"} {
		if !strings.Contains(out, w) {
			t.Errorf("outputs lack %q:\n%s", w, out)
		}
	}
	c.run("deploy", "-f", dir, "--stack", "s")
	for _, r := range c.describe("s").Resources {
		if r.LogicalID == "prov" && r.PhysicalID != ids["prov"] {
			t.Errorf("an unchanged provider got a new id: %s, was %s", r.PhysicalID, ids["prov"])
		}
	}
	c.run("delete", "--stack", "s")
}
