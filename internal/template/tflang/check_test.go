package tflang

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// badConfig has an error of each kind the static checks find, in every place they look.
const badConfig = `terraform {
  required_providers {
    time = { source = "hashicorp/time" }
  }
}
variable "v" {
  type = string
  validation {
    condition     = length(var.v) > 0 && lenght(var.v) < 9
    error_message = "bad"
  }
}
locals {
  a  = nosuch(1)
  b  = upper()
  c  = upper("a", "b")
  d  = var.missing
  e  = local.missing
  f  = time_static.missing.id
  g  = data.time_static.missing.id
  i  = uppr("x")
  j  = [for x in [1] : x + local.ok]
  l  = foo
  ok = 1
}
resource "time_static" "t" {
  count = length(var.nope)
}
resource "time_static" "u" {
  triggers = {
    a = local.nope
    b = timestmp()
  }
  lifecycle {
    ignore_changes = [triggers]
  }
}
output "o" {
  value = core::nosuch(1)
}
output "p" {
  value = max(local.ok)
  precondition {
    condition     = local.gone
    error_message = "x"
  }
}
`

// TestStaticChecks: unknown functions, wrong numbers of arguments and references to
// undeclared things fail Parse (validate, preview) at their place with terraform's messages
// (issue 12 item 8), and terraform validate finds the same errors at the same places.
func TestStaticChecks(t *testing.T) {
	_, ds := Parse(context.Background(), files("main.tf", badConfig), Options{Validate: true})
	var got []string
	for _, d := range ds {
		got = append(got, d.Range.String()+" "+d.Summary+": "+strings.SplitN(d.Detail, "\n", 2)[0])
	}
	sort.Strings(got)
	want := []string{
		`main.tf:14:8 Call to unknown function: There is no function named "nosuch".`,
		`main.tf:15:14 Not enough function arguments: Function "upper" expects 1 argument(s). Missing value for "str".`,
		`main.tf:16:20 Too many function arguments: Function "upper" expects only 1 argument(s).`,
		`main.tf:17:8 Reference to undeclared input variable: An input variable with the name "missing" has not been declared. This variable can be declared with a variable "missing" {} block.`,
		`main.tf:18:8 Reference to undeclared local value: A local value with the name "missing" has not been declared.`,
		`main.tf:19:8 Reference to undeclared resource: A managed resource "time_static" "missing" has not been declared in the root module.`,
		`main.tf:20:8 Reference to undeclared resource: A data resource "time_static" "missing" has not been declared in the root module.`,
		`main.tf:21:8 Call to unknown function: There is no function named "uppr". Did you mean "upper"?`,
		`main.tf:23:8 Invalid reference: A reference to a resource type must be followed by at least one attribute access, specifying the resource name.`,
		`main.tf:27:18 Reference to undeclared input variable: An input variable with the name "nope" has not been declared. This variable can be declared with a variable "nope" {} block.`,
		`main.tf:31:9 Reference to undeclared local value: A local value with the name "nope" has not been declared.`,
		`main.tf:39:11 Unknown provider function: The function namespace "core" is not valid. Provider function calls must use the "provider::" namespace prefix.`,
		`main.tf:44:21 Reference to undeclared local value: A local value with the name "gone" has not been declared.`,
		`main.tf:9:42 Call to unknown function: There is no function named "lenght". Did you mean "length"?`,
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics -want +got:\n%s", diff)
	}

	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not found on PATH")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(badConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	mirror := providerbin.Mirror(t, providerbin.Package{Source: "registry.terraform.io/hashicorp/time",
		Version: providerbin.TimeVersion, Binary: providerbin.Time(t)})
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+providerbin.CLIConfig(t, mirror), "CHECKPOINT_DISABLE=1", "TF_DATA_DIR=")
	cmd := exec.Command(bin, "init", "-backend=false", "-no-color")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	cmd = exec.Command(bin, "validate", "-json")
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.Output()
	var tfGot []string
	for _, d := range tfValidate(t, out) {
		tfGot = append(tfGot, d)
	}
	sort.Strings(tfGot)
	var ours []string
	for _, d := range ds {
		ours = append(ours, d.Range.String()+" "+d.Summary)
	}
	sort.Strings(ours)
	if diff := cmp.Diff(tfGot, ours); diff != "" {
		t.Errorf("terraform validate -want, cairn +got:\n%s", diff)
	}
}

// tfValidate is "file:line:col summary" of each error of terraform validate -json.
func tfValidate(t *testing.T, out []byte) []string {
	t.Helper()
	var v struct {
		Diagnostics []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Range    struct {
				Filename string                     `json:"filename"`
				Start    struct{ Line, Column int } `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("terraform validate -json: %v\n%s", err, out)
	}
	var got []string
	for _, d := range v.Diagnostics {
		if d.Severity == "error" {
			got = append(got, fmt.Sprintf("%s:%d:%d %s", d.Range.Filename, d.Range.Start.Line, d.Range.Start.Column, d.Summary))
		}
	}
	return got
}
