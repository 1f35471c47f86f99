package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestPulumiProjectPlugins: a plugin that is only in the project's own `plugins:` (a path
// relative to Pulumi.yaml) is found and run by the CLI's in-process cairn, as `pulumi up`
// finds it; with no such entry, the same deploy finds no plugin.
func TestPulumiProjectPlugins(t *testing.T) {
	t.Parallel()
	cache := providerbin.PulumiPlugins(t)
	exe := providerbin.PulumiPlugin(t, cache, "simple", "2.0.0")
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "PULUMI_HOME="+t.TempDir()) // an empty plugin cache, no --plugin-dir
	prog := t.TempDir()
	if err := os.MkdirAll(filepath.Join(prog, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(prog, "bin", "pulumi-resource-simple")); err != nil {
		t.Fatal(err)
	}
	program := func(plugins string) {
		t.Helper()
		text := "name: project-plugins\nruntime: yaml\n" + plugins +
			"resources:\n  r:\n    type: simple:Resource\n    properties: {value: true}\n    options: {version: 2.0.0}\n"
		if err := os.WriteFile(filepath.Join(prog, "Pulumi.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	program("")
	if r := c.try("deploy", "-f", prog, "--stack", "s"); r.err == nil || !strings.Contains(r.all(), "no pulumi-resource-simple 2.0.0") {
		t.Fatalf("without plugins: the deploy must find no plugin: %v\n%s", r.err, r.all())
	}

	program("plugins:\n  providers:\n    - name: simple\n      path: ./bin\n      version: 2.0.0\n")
	c.run("deploy", "-f", prog, "--stack", "s")
	if v := attrs(t, c.describe("s"), "r")["value"]; v != true {
		t.Errorf("r.value = %#v after a deploy with the project's plugin", v)
	}
}
