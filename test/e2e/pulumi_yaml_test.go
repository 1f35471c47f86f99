package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// pulumiProgram is a Pulumi YAML project with one resource of the conformance provider
// simple 2.0.0 whose value is value.
func pulumiProgram(value string) string {
	return `name: simple-e2e
runtime: yaml
resources:
  res:
    type: simple:index:Resource
    properties:
      value: ` + value + `
    options:
      version: 2.0.0
outputs:
  value: ${res.value}
`
}

// pulumiCLI is the cairn CLI with a Pulumi home whose plugins are the test plugins.
func pulumiCLI(t *testing.T) *cairnCLI {
	t.Helper()
	home := t.TempDir()
	if err := os.Symlink(providerbin.PulumiPlugins(t), filepath.Join(home, "plugins")); err != nil {
		t.Fatal(err)
	}
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "PULUMI_HOME="+home)
	return c
}

// TestPulumiYAMLLifecycle deploys a Pulumi YAML program through the real conformance plugin
// found in $PULUMI_HOME/plugins: create, a no-op redeploy, an update, outputs and delete.
func TestPulumiYAMLLifecycle(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	write := func(value string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiProgram(value)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	value := func() any {
		t.Helper()
		return attrs(t, c.describe("s"), "res")["value"]
	}

	write("true")
	c.run("deploy", "-f", dir, "--stack", "s")
	if v := value(); v != true {
		t.Fatalf("after create, value = %#v, want true", v)
	}
	if out := c.run("outputs", "--stack", "s"); !strings.Contains(out, "true") {
		t.Errorf("outputs after create:\n%s", out)
	}

	out := c.run("deploy", "-f", dir, "--stack", "s")
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "res" {
			t.Errorf("a no-op redeploy touched res: %s\n%s", line, out)
		}
	}

	write("false")
	out = c.run("deploy", "-f", dir, "--stack", "s")
	t.Logf("update:\n%s", out)
	if !strings.Contains(out, "UPDATE_COMPLETE") {
		t.Errorf("the update did not update res:\n%s", out)
	}
	if v := value(); v != false {
		t.Fatalf("after update, value = %#v, want false", v)
	}
	if out := c.run("outputs", "--stack", "s"); !strings.Contains(out, "false") {
		t.Errorf("outputs after update:\n%s", out)
	}

	c.run("delete", "--stack", "s")
	if r := c.try("describe", "--stack", "s"); r.err == nil && !strings.Contains(r.all(), "DELETE_COMPLETE") {
		t.Errorf("stack still there after delete:\n%s", r.all())
	}
}

// TestPulumiYAMLPluginDir finds the plugin in cairn's --plugin-dir (CAIRN_PLUGIN_DIR), and
// without it refuses the program naming the plugin it looked for and where.
func TestPulumiYAMLPluginDir(t *testing.T) {
	t.Parallel()
	plugins := providerbin.PulumiPlugins(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiProgram("true")), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "PULUMI_HOME="+t.TempDir())
	r := c.try("deploy", "-f", dir, "--stack", "s")
	if r.err == nil || !strings.Contains(r.all(), "no pulumi-resource-simple 2.0.0") {
		t.Fatalf("deploy without the plugin: %v\n%s", r.err, r.all())
	}
	c.env = append(c.env, "CAIRN_PLUGIN_DIR="+plugins)
	c.run("deploy", "-f", dir, "--stack", "s")
	if v := attrs(t, c.describe("s"), "res")["value"]; v != true {
		t.Fatalf("value = %#v, want true", v)
	}
	c.run("delete", "--stack", "s")
}
