package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestPulumiYAMLNoOpStartsNoPlugin: a redeploy of an unchanged Pulumi YAML program, its plugin
// and its provider configuration being those of the last successful deploy, neither checks
// nor diffs anything and so starts no plugin (docs/design/004-pulumi-plan.md, SkipsUnchanged);
// a changed resource, --upgrade and --refresh do start it. Launches are counted through a
// wrapper script installed as the plugin.
func TestPulumiYAMLNoOpStartsNoPlugin(t *testing.T) {
	t.Parallel()
	real := providerbin.PulumiPlugin(t, providerbin.PulumiPlugins(t), "simple", "2.0.0")
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	plugin := filepath.Join(home, "plugins", "resource-simple-v2.0.0")
	if err := os.MkdirAll(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	launches := filepath.Join(tmp, "launches")
	script := fmt.Sprintf("#!/bin/sh\necho launched >> %q\nexec %q \"$@\"\n", launches, real)
	if err := os.WriteFile(filepath.Join(plugin, "pulumi-resource-simple"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "PULUMI_HOME="+home)
	dir := filepath.Join(tmp, "prog")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	program := func(a, b string) {
		t.Helper()
		prog := "name: noop\nruntime: yaml\nresources:\n"
		for _, r := range [][2]string{{"a", a}, {"b", b}} {
			prog += fmt.Sprintf("  %s:\n    type: simple:index:Resource\n    properties:\n      value: %s\n    options:\n      version: 2.0.0\n", r[0], r[1])
		}
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, err := os.ReadFile(launches)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(launches)
		return strings.Count(string(b), "launched")
	}
	deploy := func(what string, wantLaunch bool, flags ...string) string {
		t.Helper()
		out := c.run(append([]string{"deploy", "-f", dir, "--stack", "s"}, flags...)...)
		if n := count(); (n > 0) != wantLaunch {
			t.Errorf("%s: %d plugin launches (want a launch: %v)\n%s", what, n, wantLaunch, out)
		}
		return out
	}

	program("true", "true")
	deploy("first deploy", true)
	deploy("unchanged deploy", false)
	if out := c.run("preview", "-f", dir, "--stack", "s"); count() > 0 {
		t.Errorf("preview of the unchanged program started the plugin:\n%s", out)
	}
	deploy("--upgrade checks everything", true, "--upgrade")
	deploy("--refresh reads everything", true, "--refresh")
	deploy("unchanged after --refresh", false)

	program("true", "false")
	out := deploy("changed resource", true)
	if !strings.Contains(out, "UPDATE_COMPLETE") {
		t.Errorf("the changed resource was not updated:\n%s", out)
	}
	if a, b := attrs(t, c.describe("s"), "a")["value"], attrs(t, c.describe("s"), "b")["value"]; a != true || b != false {
		t.Errorf("after the change a=%v b=%v, want true false", a, b)
	}
	deploy("unchanged after the update", false)
	c.run("delete", "--stack", "s")
}
