package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

const movedModule = `resource "time_static" "x" {}
output "t" { value = time_static.x.rfc3339 }
`

const movedBefore = `resource "time_static" "a" {}
resource "time_static" "c" {
  count = 2
}
resource "time_static" "gone" {}
module "m" {
  source = "./mod"
}
`

const movedAfter = `resource "time_static" "b" {}
moved {
  from = time_static.a
  to   = time_static.b
}
resource "time_static" "d" {
  count = 2
}
moved {
  from = time_static.c
  to   = time_static.d
}
module "n" {
  source = "./mod"
}
moved {
  from = module.m
  to   = module.n
}
removed {
  from = time_static.gone
  lifecycle {
    destroy = false
  }
}
`

// TestTerraformMovedRemoved: moved blocks (a resource, a counted resource, a module call)
// rename the stored objects without replacing them, and a removed block with destroy = false
// forgets one; cairn's preview says so as terraform's plan does, and after the deploy every
// object keeps its value.
func TestTerraformMovedRemoved(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	thingDir := filepath.Join(t.TempDir(), "things")
	write := func(dir, src string) {
		writeConfig(t, dir, src)
		writeConfig(t, filepath.Join(dir, "mod"), movedModule)
	}
	tfDir, cfg := filepath.Join(t.TempDir(), "tf"), filepath.Join(t.TempDir(), "cfg")
	write(tfDir, movedBefore)
	write(cfg, movedBefore)
	tf := newTFCLI(t, rc, tfDir, thingDir)
	tf.run("init", "-input=false")
	tf.run("apply", "-auto-approve", "-input=false")
	c := newCairnCLI(t, rc, thingDir)
	c.run("deploy", "-f", cfg, "--stack", "s")
	before := c.describe("s")

	write(tfDir, movedAfter)
	write(cfg, movedAfter)
	tf.run("init", "-input=false")
	plan := tf.run("plan", "-input=false")
	pre := c.run("preview", "-f", cfg, "--stack", "s")
	for _, want := range []string{
		"# time_static.a has moved to time_static.b",
		"# time_static.c[0] has moved to time_static.d[0]",
		"# time_static.c[1] has moved to time_static.d[1]",
		"# module.m.time_static.x has moved to module.n.time_static.x",
		"# time_static.gone will no longer be managed by Terraform, but will not be destroyed",
		"Plan: 0 to add, 0 to change, 0 to destroy.",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("terraform plan lacks %q (the test's expectation is wrong):\n%s", want, plan)
		}
		if !strings.Contains(pre, want) {
			t.Errorf("cairn preview lacks %q, which terraform plan shows:\n%s", want, pre)
		}
	}
	dep := c.run("deploy", "-f", cfg, "--stack", "s")
	for _, line := range strings.Split(dep, "\n") {
		if strings.Contains(line, "CREATE_") || strings.Contains(line, "DELETE_IN_PROGRESS") {
			t.Errorf("deploy with moved blocks created or destroyed something: %s\n%s", line, dep)
		}
	}
	after := c.describe("s")
	for old, moved := range map[string]string{"time_static.a": "time_static.b", "time_static.c[0]": "time_static.d[0]",
		"time_static.c[1]": "time_static.d[1]", "module.m.time_static.x": "module.n.time_static.x"} {
		if got, want := attrs(t, after, moved)["rfc3339"], attrs(t, before, old)["rfc3339"]; got != want {
			t.Errorf("%s (moved from %s): rfc3339 %v, want the old %v", moved, old, got, want)
		}
	}
	if ids := resourceIDs(after); len(ids) != 4 {
		t.Errorf("after the deploy the stack holds %v; want b, d[0], d[1] and module.n's x (gone forgotten)", ids)
	}
	if again := c.run("preview", "-f", cfg, "--stack", "s"); !strings.Contains(again, "No changes.") {
		t.Errorf("preview after the deploy:\n%s", again)
	}
}

// TestTerraformMovedErrors: a move from a resource still declared is refused, as terraform
// plan refuses it, at the moved block.
func TestTerraformMovedErrors(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	thingDir := filepath.Join(t.TempDir(), "things")
	cfg := filepath.Join(t.TempDir(), "cfg")
	writeConfig(t, cfg, `resource "time_static" "a" {}
resource "time_static" "b" {}
moved {
  from = time_static.a
  to   = time_static.b
}
`)
	tf := newTFCLI(t, rc, cfg, thingDir)
	tf.run("init", "-input=false")
	tr := tf.try("plan", "-input=false")
	c := newCairnCLI(t, rc, thingDir)
	cr := c.try("preview", "-f", cfg, "--stack", "s")
	for what, r := range map[string]result{"terraform plan": tr, "cairn preview": cr} {
		if r.err == nil || !strings.Contains(r.all(), "Moved object still exists") || !strings.Contains(r.all(), "main.tf") {
			t.Errorf("%s: %v, want Moved object still exists at main.tf\n%s", what, r.err, r.all())
		}
	}
	if !strings.Contains(cr.all(), "main.tf:3") {
		t.Errorf("cairn points elsewhere than terraform (main.tf:3):\n%s\nterraform:\n%s", cr.all(), tr.all())
	}
}

// TestTerraformMovedIntoOccupied: a move to an address the state already holds is not made;
// terraform plan and cairn preview both warn ("Unresolved resource instance address changes",
// "- time_static.a could not move to time_static.b") and plan to destroy the object left at a.
func TestTerraformMovedIntoOccupied(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	thingDir := filepath.Join(t.TempDir(), "things")
	tfDir, cfg := filepath.Join(t.TempDir(), "tf"), filepath.Join(t.TempDir(), "cfg")
	before := `resource "time_static" "a" {}
resource "time_static" "b" {}
`
	after := `resource "time_static" "b" {}
moved {
  from = time_static.a
  to   = time_static.b
}
`
	writeConfig(t, tfDir, before)
	writeConfig(t, cfg, before)
	tf := newTFCLI(t, rc, tfDir, thingDir)
	tf.run("init", "-input=false")
	tf.run("apply", "-auto-approve", "-input=false")
	c := newCairnCLI(t, rc, thingDir)
	c.run("deploy", "-f", cfg, "--stack", "s")
	writeConfig(t, tfDir, after)
	writeConfig(t, cfg, after)
	plan := tf.run("plan", "-input=false")
	pr := c.try("preview", "-f", cfg, "--stack", "s")
	if pr.err != nil {
		t.Fatalf("cairn preview: %v\n%s", pr.err, pr.all())
	}
	pre := pr.all() // warnings go to stderr
	for _, want := range []string{
		"Unresolved resource instance address changes", // cairn prints diagnostics as "warning: summary: detail"
		"- time_static.a could not move to time_static.b",
		"# time_static.a will be destroyed",
		"Plan: 0 to add, 0 to change, 1 to destroy.",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("terraform plan lacks %q (the test's expectation is wrong):\n%s", want, plan)
		}
		if !strings.Contains(pre, want) {
			t.Errorf("cairn preview lacks %q, which terraform plan shows:\n%s", want, pre)
		}
	}
	dep := c.run("deploy", "-f", cfg, "--stack", "s")
	mustContain(t, "deploy", dep, "MOVE_SKIPPED")
	if ids := resourceIDs(c.describe("s")); len(ids) != 1 || ids["time_static.b"] == "" {
		t.Errorf("after the deploy the stack holds %v, want time_static.b alone", ids)
	}
}
