package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pulumiOptionsProgram exercises the resource options whose effect shows in a deploy, on the
// conformance provider simple 2.0.0 (whose own Diff updates value in place).
func pulumiOptionsProgram(value string, protect bool) string {
	p := "false"
	if protect {
		p = "true"
	}
	return `name: options-e2e
runtime: yaml
resources:
  target:
    type: simple:index:Resource
    properties: {value: true}
    options: {version: 2.0.0, protect: ` + p + `}
  child:
    type: simple:index:Resource
    properties: {value: true}
    options: {version: 2.0.0, parent: '${target}', deletedWith: '${target}'}
  deleteFirst:
    type: simple:index:Resource
    properties: {value: ` + value + `}
    options: {version: 2.0.0, deleteBeforeReplace: true, replaceOnChanges: [value], customTimeouts: {create: 5m}}
  createFirst:
    type: simple:index:Resource
    properties: {value: ` + value + `}
    options: {version: 2.0.0, replaceOnChanges: [value]}
  secret:
    type: simple:index:Resource
    properties: {value: true}
    options: {version: 2.0.0, additionalSecretOutputs: [value]}
`
}

// TestPulumiYAMLResourceOptions deploys Pulumi resource options through the real conformance
// plugin: replaceOnChanges turns an update into a replacement, deleteBeforeReplace orders it
// delete-first (the default is create-first), additionalSecretOutputs hides an output,
// protect (inherited by a child) refuses the stack's deletion, and deletedWith skips the
// child's delete when its target goes too.
func TestPulumiYAMLResourceOptions(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	write := func(value string, protect bool) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiOptionsProgram(value, protect)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	write("true", true)
	c.run("deploy", "-f", dir, "--stack", "s")
	if v := attrs(t, c.describe("s"), "secret")["value"]; v == true {
		t.Errorf("additionalSecretOutputs: secret's value is shown in clear: %#v", v)
	}

	write("false", true)
	out := c.run("deploy", "-f", dir, "--stack", "s")
	order := func(name string) []string {
		var steps []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 3 && f[1] == name {
				steps = append(steps, f[3])
			}
		}
		return steps
	}
	if got, want := strings.Join(order("deleteFirst"), " "), "DELETE_IN_PROGRESS DELETE_COMPLETE CREATE_IN_PROGRESS CREATE_COMPLETE"; got != want {
		t.Errorf("deleteBeforeReplace with replaceOnChanges: steps %q, want %q\n%s", got, want, out)
	}
	if got := order("createFirst"); len(got) == 0 || got[0] != "UPDATE_IN_PROGRESS" || got[len(got)-1] != "DELETE_COMPLETE" ||
		!strings.Contains(out, "create a new physical resource") {
		t.Errorf("replaceOnChanges without deleteBeforeReplace: want a create-first replacement, got %q\n%s", got, out)
	}

	r := c.try("delete", "--stack", "s")
	// target is protected and child inherits it: either may be the one named first.
	if r.err == nil || !(strings.Contains(r.all(), `resource "target" cannot be deleted`) || strings.Contains(r.all(), `resource "child" cannot be deleted`)) {
		t.Fatalf("a protected resource must refuse the stack's deletion:\n%s", r.all())
	}

	write("false", false)
	c.run("deploy", "-f", dir, "--stack", "s")
	out = c.run("delete", "--stack", "s")
	if !strings.Contains(out, "DELETE_SKIPPED") || strings.Contains(out, "child             simple:index:Resource       DELETE_IN_PROGRESS") {
		t.Errorf("deletedWith: child's delete must be skipped when target goes:\n%s", out)
	}
}
