package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

const timeConfig = `terraform {
  required_providers {
    time = { source = "hashicorp/time", version = "~> 0.14" }
  }
}
variable "trigger" {
  type    = string
  default = "a"
}
resource "time_static" "t" {
  triggers = { k = var.trigger }
}
resource "time_offset" "o" {
  count        = 2
  base_rfc3339 = time_static.t.rfc3339
  offset_days  = count.index + 1
}
output "trigger" { value = time_static.t.triggers.k }
`

// TestTerraformTimeProvider deploys a Terraform-language configuration with the real
// hashicorp/time provider (protocol 5) found in a filesystem mirror through terraform's own CLI
// configuration, then previews a change that replaces, applies it, imports and deletes.
func TestTerraformTimeProvider(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	mirror := providerbin.Mirror(t, providerbin.Package{Source: "registry.terraform.io/hashicorp/time",
		Version: providerbin.TimeVersion, Binary: providerbin.Time(t)})
	rc := providerbin.CLIConfig(t, mirror)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(timeConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--dir", filepath.Join(dir, "state"))...)
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run("deploy", "-f", cfg, "--stack", "tf")
	if !strings.Contains(out, "CREATE_COMPLETE") || !strings.Contains(out, "trigger = a") || !strings.Contains(out, "terraform_stack") {
		t.Fatalf("deploy:\n%s", out)
	}
	lock, err := os.ReadFile(filepath.Join(cfg, ".terraform.lock.hcl"))
	if err != nil || !strings.Contains(string(lock), `provider "registry.terraform.io/hashicorp/time"`) || !strings.Contains(string(lock), `version     = "0.14.2"`) {
		t.Fatalf("lock file = %s, %v", lock, err)
	}
	out = run("preview", "-f", cfg, "--stack", "tf", "--var", "trigger=b")
	for _, want := range []string{"# time_static.t must be replaced", "# forces replacement", "(known after apply)", "Plan: 1 to add"} {
		if !strings.Contains(out, want) {
			t.Errorf("preview lacks %q:\n%s", want, out)
		}
	}
	out = run("deploy", "-f", cfg, "--stack", "tf", "--var", "trigger=b")
	if !strings.Contains(out, "UPDATE_COMPLETE") || !strings.Contains(out, "trigger = b") {
		t.Fatalf("update:\n%s", out)
	}
	var st struct {
		Resources []struct {
			LogicalID  string         `json:"logicalId"`
			Attributes map[string]any `json:"attributes"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(run("describe", "--stack", "tf", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Resources) != 3 || st.Resources[2].LogicalID != "time_static.t" || st.Resources[2].Attributes["triggers"].(map[string]any)["k"] != "b" {
		t.Fatalf("resources = %+v", st.Resources)
	}
	run("delete", "--stack", "tf")
	// Import adopts an existing object by id, as terraform import does.
	out = run("import", "time_static.t", "2024-01-02T03:04:05Z", "-f", cfg, "--stack", "imp")
	if !strings.Contains(out, "Import successful") {
		t.Fatalf("import:\n%s", out)
	}
	if err := json.Unmarshal([]byte(run("describe", "--stack", "imp", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Resources) != 1 || st.Resources[0].Attributes["year"] != float64(2024) {
		t.Fatalf("imported = %+v", st.Resources)
	}
}
