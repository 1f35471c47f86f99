package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// A deploy or preview that changes nothing starts no provider plugin: the schemas come from the
// provider cache and the provider configuration, the one the resources were applied with, is
// never sent. A changed provider configuration or a changed resource starts it again, and a
// provider configuration the provider refuses still fails the deploy. The cairntest binary runs
// behind a script that counts its launches.
func TestTerraformNoOpStartsNoPlugin(t *testing.T) {
	tmp := t.TempDir()
	launches := filepath.Join(tmp, "launches")
	wrapper := filepath.Join(tmp, "cairntest-counted")
	script := fmt.Sprintf("#!/bin/sh\necho launched >> %q\nexec %q \"$@\"\n", launches, providerbin.Cairntest(t, 6))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t, providerbin.Package{
		Source: "registry.terraform.io/cairn-dev/cairntest", Version: providerbin.CairntestVersion, Binary: wrapper}))
	c := newCairnCLI(t, rc, filepath.Join(tmp, "things"))
	c.env = append(c.env, "CAIRN_PROVIDER_CACHE="+filepath.Join(tmp, "cache"))
	dir := filepath.Join(tmp, "cfg")
	config := func(token, size string) {
		writeConfig(t, dir, `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
  }
}
provider "cairntest" {
  api_token = "`+token+`"
}
resource "cairntest_thing" "a" {
  count = 3
  name  = "a${count.index}"
  size  = `+size+`
}
`)
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
	deploy := func(what string, wantLaunch bool) {
		t.Helper()
		out := c.run("deploy", "-f", dir, "--stack", "lazy")
		if n := count(); (n > 0) != wantLaunch {
			t.Errorf("%s: %d plugin launches (want a launch: %v)\n%s", what, n, wantLaunch, out)
		}
	}

	config("one", "1")
	deploy("first deploy", true)
	deploy("unchanged deploy", false)
	deploy("second unchanged deploy", false)
	if out := c.run("preview", "-f", dir, "--stack", "lazy"); !strings.Contains(out, "No changes.") || count() > 0 {
		t.Errorf("preview of the unchanged configuration started the plugin or found changes:\n%s", out)
	}
	config("two", "1")
	deploy("changed provider configuration", true)
	deploy("unchanged after the provider change", false)
	config("two", "2")
	deploy("changed resources", true)
	if a := attrs(t, c.describe("lazy"), "cairntest_thing.a[2]"); a["size"] != 2.0 {
		t.Errorf("after the resource change: a[2] = %v, want size 2", a)
	}
	deploy("unchanged after the resource change", false)

	// A refused provider configuration still fails the deploy, from the provider.
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), `api_token = "two"`, fmt.Sprintf("api_token = \"two\"\n  state_dir = %q", filepath.Join(file, "sub")), 1)
	writeConfig(t, dir, bad)
	if r := c.try("deploy", "-f", dir, "--stack", "lazy"); r.err == nil || !strings.Contains(r.all(), "cannot create the state directory") {
		t.Errorf("deploy with a refused provider configuration: %v\n%s", r.err, r.all())
	}
}
