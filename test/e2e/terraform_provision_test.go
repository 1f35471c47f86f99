package e2e

// Provisioners and terraform_data against the terraform CLI: the same configuration applied,
// changed, replaced and destroyed by both tools leaves the same files, outputs and attributes.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// provisionSrc writes what its provisioners see into $OUT, a directory of each tool's own:
// destroy-time provisioners may reference only self, count.index and each.key.
const provisionSrc = `
variable "input" {
  default = "one"
}
variable "trigger" {
  default = "t1"
}

resource "terraform_data" "a" {
  count            = 2
  input            = { name = "${var.input}-${count.index}", tags = ["x", var.input] }
  triggers_replace = var.trigger

  provisioner "local-exec" {
    command = "echo created ${self.output.name} ${count.index} $(cat data.txt) >> $OUT/created-${count.index}"
  }
  provisioner "local-exec" {
    command    = "echo failing; exit 3"
    on_failure = continue
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo destroyed ${self.output.name} ${count.index} >> $OUT/destroyed"
  }
}

resource "terraform_data" "each" {
  for_each = toset(["p", "q"])
  input    = "fixed"
  lifecycle {
    replace_triggered_by = [terraform_data.a[0]]
  }
  provisioner "local-exec" {
    command     = "printf '%s %s\n' \"$V\" ${each.key} >> $OUT/each-${each.key}"
    environment = { V = self.output }
  }
}

output "a" {
  value = terraform_data.a[*].output
}
output "each" {
  value = { for k, v in terraform_data.each : k => v.output }
}
`

// outFiles reads every file of dir, lines sorted (parallel instances append in any order).
func outFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		sort.Strings(lines)
		out[e.Name()] = lines
	}
	return out
}

func TestTerraformProvisionersParity(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rc := filepath.Join(root, "terraformrc") // terraform_data needs no provider
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tfOut, cOut := filepath.Join(root, "tf-out"), filepath.Join(root, "cairn-out")
	for _, d := range []string{tfOut, cOut} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	tf.env = append(tf.env, "OUT="+tfOut)
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	c.env = append(c.env, "OUT="+cOut)
	for _, d := range []string{tfDir, cDir} {
		writeConfig(t, d, provisionSrc)
		if err := os.WriteFile(filepath.Join(d, "data.txt"), []byte("from-the-configuration\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tf.run("init", "-input=false")

	compare := func(step string) {
		t.Helper()
		if diff := cmp.Diff(outFiles(t, tfOut), outFiles(t, cOut)); diff != "" {
			t.Errorf("%s: files the provisioners wrote, -terraform +cairn:\n%s", step, diff)
		}
	}
	apply := func(step string, vars ...string) {
		t.Helper()
		var tfArgs, cArgs []string
		for _, v := range vars {
			tfArgs = append(tfArgs, "-var", v)
			cArgs = append(cArgs, "--var", v)
		}
		tf.run(append([]string{"apply", "-auto-approve", "-input=false"}, tfArgs...)...)
		if r := c.try(append([]string{"deploy", "-f", cDir, "--stack", "prov"}, cArgs...)...); r.err != nil {
			t.Fatalf("%s: cairn deploy failed where terraform apply succeeded: %v\n%s", step, r.err, r.all())
		}
		compare(step)
		want := map[string]map[string]any{}
		for _, r := range tf.show().Values.RootModule.Resources {
			delete(r.Values, "id") // a random UUID in each tool
			want[r.Address] = r.Values
		}
		st := c.describe("prov")
		got := map[string]map[string]any{}
		for _, r := range st.Resources {
			a, _ := r.Attributes.(map[string]any)
			delete(a, "id")
			got[r.LogicalID] = a
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: attributes, -terraform +cairn:\n%s", step, diff)
		}
		var tfOutputs map[string]struct{ Value any }
		if err := json.Unmarshal([]byte(tf.run("output", "-json")), &tfOutputs); err != nil {
			t.Fatal(err)
		}
		wantOut := map[string]any{}
		for k, v := range tfOutputs {
			wantOut[k] = v.Value
		}
		if diff := cmp.Diff(wantOut, outputs(st)); diff != "" {
			t.Errorf("%s: outputs, -terraform +cairn:\n%s", step, diff)
		}
	}

	apply("create")
	if got := outFiles(t, cOut)["created-1"]; len(got) != 1 || got[0] != "created one-1 1 from-the-configuration" {
		t.Errorf("cairn's created-1 = %q", got)
	}
	apply("an update runs no provisioner; replace_triggered_by replaces", "input=two")
	if got := outFiles(t, cOut)["each-p"]; len(got) != 2 {
		t.Errorf("terraform_data.each[\"p\"] was not replaced when a[0] changed: each-p = %q", got)
	}
	apply("a replacement runs destroy-time then creation-time provisioners", "input=two", "trigger=t2")
	if got := outFiles(t, cOut)["destroyed"]; len(got) != 2 {
		t.Errorf("cairn's destroyed after the replacement = %q", got)
	}

	tf.run("destroy", "-auto-approve", "-input=false", "-var", "input=two", "-var", "trigger=t2")
	if r := c.try("delete", "--stack", "prov"); r.err != nil {
		t.Fatalf("cairn delete: %v\n%s", r.err, r.all())
	}
	compare("destroy")
}

// TestTerraformProvisionerTaintParity: a failing creation-time provisioner fails both tools
// and taints the object; once the command succeeds, both replace it (the provisioner runs
// again, for a new object).
func TestTerraformProvisionerTaintParity(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rc := filepath.Join(root, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := `
resource "terraform_data" "x" {
  input = "v"
  provisioner "local-exec" {
    command = "echo run >> $OUT/runs; test -e $OUT/ok"
  }
}
`
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tfOut, cOut := filepath.Join(root, "tf-out"), filepath.Join(root, "cairn-out")
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	tf.env = append(tf.env, "OUT="+tfOut)
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	c.env = append(c.env, "OUT="+cOut)
	for _, d := range []string{tfDir, cDir, tfOut, cOut} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(t, tfDir, src)
	writeConfig(t, cDir, src)
	tf.run("init", "-input=false")
	tr := tf.try("apply", "-auto-approve", "-input=false")
	cr := c.try("deploy", "-f", cDir, "--stack", "taint")
	if tr.err == nil || cr.err == nil {
		t.Fatalf("a failing provisioner: terraform err %v, cairn err %v\n%s", tr.err, cr.err, cr.all())
	}
	if !strings.Contains(cr.all(), "exit status 1") {
		t.Errorf("cairn does not say why the provisioner failed:\n%s", cr.all())
	}
	if !strings.Contains(tf.run("state", "show", "terraform_data.x"), "tainted") {
		t.Fatal("terraform did not taint the object")
	}
	if r := attrsOf(c.describe("taint"), "terraform_data.x"); r.Status != "CREATE_FAILED" {
		t.Errorf("cairn's object after the failure: %+v", r)
	}
	for _, d := range []string{tfOut, cOut} {
		if err := os.WriteFile(filepath.Join(d, "ok"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tf.run("apply", "-auto-approve", "-input=false")
	if r := c.try("deploy", "-f", cDir, "--stack", "taint"); r.err != nil {
		t.Fatalf("cairn deploy after the fix: %v\n%s", r.err, r.all())
	}
	if diff := cmp.Diff(outFiles(t, tfOut), outFiles(t, cOut)); diff != "" {
		t.Errorf("files, -terraform +cairn:\n%s", diff)
	}
	if got := outFiles(t, cOut)["runs"]; len(got) != 2 {
		t.Errorf("the tainted object was not replaced: runs %v", got)
	}
}

func attrsOf(st api.Stack, addr string) api.Resource {
	for _, r := range st.Resources {
		if r.LogicalID == addr {
			return r
		}
	}
	return api.Resource{}
}

// TestTerraformProvisionerSensitiveFailure: a local-exec command holding a sensitive value
// fails both tools the same way (terraform's "local-exec provisioner error", the exit status,
// the output suppressed line by line, the object tainted), and cairn keeps the value out of
// the failure it stores and prints. terraform 1.11 repeats the command and its output in its
// error; cairn's failure is stored where every reader of the stack sees it, so it says
// '(sensitive value)' and suppresses the output (docs/templates-terraform.md, Provisioners).
func TestTerraformProvisionerSensitiveFailure(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-e2e-secret"
	root := t.TempDir()
	rc := filepath.Join(root, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := `
variable "pw" {
  sensitive = true
  default   = "` + secret + `"
}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo ${var.pw}; false"
  }
}
`
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	writeConfig(t, tfDir, src)
	writeConfig(t, cDir, src)
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	tf.run("init", "-input=false")
	tr := tf.try("apply", "-auto-approve", "-input=false", "-no-color")
	cr := c.try("deploy", "-f", cDir, "--stack", "secret")
	if tr.err == nil || cr.err == nil {
		t.Fatalf("a failing provisioner: terraform err %v, cairn err %v\n%s", tr.err, cr.err, cr.all())
	}
	for _, want := range []string{"local-exec provisioner error", "exit status 1", "(local-exec): (output suppressed due to sensitive value in config)"} {
		if !strings.Contains(tr.all(), want) {
			t.Errorf("terraform does not print %q:\n%s", want, tr.all())
		}
		if !strings.Contains(cr.all(), want) {
			t.Errorf("cairn does not print %q:\n%s", want, cr.all())
		}
	}
	if !strings.Contains(cr.all(), "Error running command '(sensitive value)': exit status 1. Output: (output suppressed due to sensitive value in config)") {
		t.Errorf("cairn's failure:\n%s", cr.all())
	}
	if strings.Contains(tr.all(), secret) {
		t.Logf("terraform 1.11 repeats the secret in its error (cairn does not)")
	}
	if !strings.Contains(tf.run("state", "show", "terraform_data.x"), "tainted") {
		t.Error("terraform did not taint the object")
	}
	stored := cr.all() + c.run("describe", "--stack", "secret", "-o", "json") + c.run("events", "--stack", "secret")
	if strings.Contains(stored, secret) {
		t.Errorf("cairn shows the secret:\n%s", stored)
	}
	if r := attrsOf(c.describe("secret"), "terraform_data.x"); r.Status != "CREATE_FAILED" {
		t.Errorf("cairn's object after the failure: %+v", r)
	}
}
