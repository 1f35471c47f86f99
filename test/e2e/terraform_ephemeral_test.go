package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// ephemeralRC mirrors cairntest (protocol 6) and hashicorp/random 3.9.0, which has the
// ephemeral random_password and random_bytes.
func ephemeralRC(t *testing.T) string {
	t.Helper()
	mirror := providerbin.Mirror(t,
		providerbin.Package{Source: "registry.terraform.io/cairn-dev/cairntest", Version: providerbin.CairntestVersion,
			Binary: providerbin.Cairntest(t, 6)},
		providerbin.RandomRelease.Package(t))
	return providerbin.CLIConfig(t, mirror)
}

const ephemeralSecret = "s3cr3t-ephemeral-value"

// ephemeralConfig feeds an ephemeral variable (through a local and an ephemeral child-module
// output) and an ephemeral random_password into the cairntest provider's configuration,
// where a wrong value fails Configure, so the apply proves the values arrived.
const ephemeralConfig = `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
    random    = { source = "hashicorp/random" }
  }
}
variable "secret" {
  type      = string
  ephemeral = true
}
locals {
  wrapped = "<${var.secret}>"
}
module "m" {
  source = "./mod"
  in     = local.wrapped
}
ephemeral "random_password" "p" {
  length  = 24
  special = false
}
ephemeral "random_bytes" "b" {
  count  = 2
  length = 4 + count.index
}
provider "cairntest" {
  api_token      = "${module.m.out}/${ephemeral.random_password.p.result}"
  fail_configure = module.m.out == "<` + ephemeralSecret + `>" && length(ephemeral.random_password.p.result) == 24 ? null : "the ephemeral values did not arrive"
}
resource "cairntest_thing" "t" {
  name = "eph"
}
output "child" {
  value = ephemeralasnull(module.m.out)
}
output "password_is_null" {
  value = ephemeralasnull(ephemeral.random_password.p.result) == null
}
output "thing" {
  value = cairntest_thing.t.name
}
`

const ephemeralModule = `variable "in" {
  type      = string
  ephemeral = true
}
output "out" {
  value     = var.in
  ephemeral = true
}
`

func writeEphemeral(t *testing.T, dir, src string) {
	t.Helper()
	writeConfig(t, dir, src)
	if err := os.MkdirAll(filepath.Join(dir, "mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mod", "main.tf"), []byte(ephemeralModule), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTerraformEphemeral applies the same configuration with terraform and cairn: both
// succeed with the same outputs, and the ephemeral variable's value is nowhere in what cairn
// keeps (its state directory, describe, outputs, events).
func TestTerraformEphemeral(t *testing.T) {
	t.Parallel()
	rc := ephemeralRC(t)
	root := t.TempDir()
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	writeEphemeral(t, tfDir, ephemeralConfig)
	writeEphemeral(t, cDir, ephemeralConfig)
	tf.run("init", "-input=false")
	tf.run("apply", "-auto-approve", "-input=false", "-var", "secret="+ephemeralSecret)
	var tfOut map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(tf.run("output", "-json")), &tfOut); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	for k, v := range tfOut {
		want[k] = v.Value
	}

	// A saved plan keeps no ephemeral value: its deploy takes the variable again, as terraform
	// apply PLANFILE does.
	planPath := filepath.Join(root, "s.plan")
	c.run("preview", "-f", cDir, "--stack", "s", "--var", "secret="+ephemeralSecret, "--out", planPath)
	var saved struct {
		Request   api.DeployRequest `json:"request"`
		Ephemeral []string          `json:"ephemeral"`
	}
	b, err := os.ReadFile(planPath)
	if err == nil {
		err = json.Unmarshal(b, &saved)
	}
	if _, kept := saved.Request.Parameters["secret"]; err != nil || kept || !slices.Equal(saved.Ephemeral, []string{"secret"}) {
		t.Fatalf("the plan file holds the ephemeral value or does not name it (%v):\n%s", err, b)
	}
	if r := c.try("deploy", "--plan", planPath); r.err == nil || !strings.Contains(r.all(), "secret") {
		t.Fatalf("deploy --plan without the ephemeral variable: %v\n%s", r.err, r.all())
	}
	if r := c.try("deploy", "--plan", planPath, "--var", "other=1"); r.err == nil || !strings.Contains(r.all(), "only ephemeral variables are given again") {
		t.Fatalf("deploy --plan --var of a saved variable: %v\n%s", r.err, r.all())
	}
	c.run("deploy", "--plan", planPath, "--var", "secret="+ephemeralSecret)
	st := c.describe("s")
	got := map[string]any{}
	for _, o := range st.Outputs {
		if o.Value != nil { // terraform leaves null outputs out of its state
			got[o.Name] = o.Value
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("outputs differ from terraform's (-terraform +cairn):\n%s", d)
	}
	// a second deploy plans nothing new: the provider's fingerprint leaves ephemeral parts out
	out := c.run("deploy", "-f", cDir, "--stack", "s", "--var", "secret="+ephemeralSecret)
	if strings.Contains(out, "UPDATE_IN_PROGRESS") && strings.Contains(out, "cairntest_thing.t") && strings.Contains(out, "UPDATE_COMPLETE  cairntest_thing") {
		t.Errorf("second deploy updated the thing:\n%s", out)
	}

	shown := c.run("describe", "--stack", "s", "-o", "json") + c.run("outputs", "--stack", "s") + c.run("events", "--stack", "s")
	if strings.Contains(shown, ephemeralSecret) {
		t.Fatalf("cairn shows the ephemeral value:\n%s", shown)
	}
	err = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(ephemeralSecret)) {
			t.Errorf("%s holds the ephemeral value", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(tfDir, "terraform.tfstate")); err != nil || bytes.Contains(b, []byte(ephemeralSecret)) {
		t.Fatalf("terraform's state (the test is wrong): %v", err)
	}
}

// TestTerraformEphemeralRefused: managed resource arguments fed by an ephemeral variable
// (through a local) and an ephemeral resource, and a root output fed by an ephemeral value,
// fail validate with terraform's errors at terraform's places.
func TestTerraformEphemeralRefused(t *testing.T) {
	t.Parallel()
	rc := ephemeralRC(t)
	root := t.TempDir()
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	src := `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
    random    = { source = "hashicorp/random" }
  }
}
variable "secret" {
  type      = string
  ephemeral = true
}
locals {
  upper = upper(var.secret)
}
ephemeral "random_password" "p" {
  length = 8
}
resource "cairntest_thing" "t" {
  name = local.upper
}
resource "cairntest_thing" "u" {
  name = ephemeral.random_password.p.result
}
output "leak" {
  value = var.secret
}
`
	writeConfig(t, tfDir, src)
	writeConfig(t, cDir, src)
	tf.run("init", "-input=false")
	tr := tf.try("validate", "-json")
	if tr.err == nil {
		t.Fatalf("terraform validate accepted it (the test is wrong):\n%s", tr.all())
	}
	want := tfValidateDiagnostics(t, tr.stdout)
	cr := c.try("validate", "-f", cDir)
	if cr.err == nil {
		t.Fatalf("cairn validate accepted it:\n%s", cr.all())
	}
	got := cairnDiagnostics(cr.stderr + cr.stdout)
	for i, d := range got { // cairn's line is "path: summary: detail"
		for _, w := range want {
			if w.File == d.File && w.Line == d.Line && strings.Contains(d.Summary, w.Summary) {
				got[i].Summary = w.Summary
			}
		}
	}
	sortLocated(want)
	sortLocated(got)
	if d := cmp.Diff(want, got); d != "" || len(want) != 3 {
		t.Fatalf("diagnostics differ from terraform's (-terraform +cairn):\n%s\ncairn:\n%s\nterraform:\n%s", d, cr.all(), tr.all())
	}
	for _, s := range []string{`Ephemeral values are not valid for "name", because it is not a write-only attribute and must be persisted to state.`,
		"This output value is not declared as returning an ephemeral value"} {
		if !strings.Contains(strings.Join(strings.Fields(cr.all()), " "), s) {
			t.Errorf("cairn does not say %q:\n%s", s, cr.all())
		}
	}
}

func sortLocated(ls []located) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].String() < ls[j-1].String(); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// tfValidateDiagnostics reads the error diagnostics of `terraform validate -json` (one JSON
// document, not a stream).
func tfValidateDiagnostics(t *testing.T, out string) []located {
	t.Helper()
	var doc struct {
		Diagnostics []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Range    *struct {
				Filename string `json:"filename"`
				Start    struct {
					Line int `json:"line"`
				} `json:"start"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("terraform validate -json: %v\n%s", err, out)
	}
	var ds []located
	for _, d := range doc.Diagnostics {
		if d.Severity != "error" {
			continue
		}
		l := located{Summary: d.Summary}
		if d.Range != nil {
			l.File, l.Line = d.Range.Filename, d.Range.Start.Line
		}
		ds = append(ds, l)
	}
	return ds
}
