package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// refreshConfig: z reads x's computed revision, so drift of x's revision matters to a plan
// that changes z; y stands alone.
const refreshConfig = cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"
  size = 3
}
resource "cairntest_thing" "y" {
  name = "y"
  size = 4
}
resource "cairntest_thing" "z" {
  name = "z"
  size = cairntest_thing.x.revision
}
output "x_size" { value = cairntest_thing.x.size }
`

// editThing changes attributes of a thing's file behind both tools' backs.
func editThing(t *testing.T, thingDir, id string, set map[string]any) {
	t.Helper()
	path := filepath.Join(thingDir, "thing-"+id+".json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		m[k] = v
	}
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func thingSize(t *testing.T, thingDir, id string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(thingDir, "thing-"+id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m["size"]
}

// driftLines is what a plan says changed outside the tool: the "# ADDR has changed" and
// "has been deleted" lines and the attribute lines with a sign, spaces collapsed, the tool's
// name dropped; then the "# ADDR will be ..." lines of the plan.
func driftLines(out string) (drift, plan []string) {
	section := ""
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case strings.Contains(line, "Objects have changed outside of"):
			section = "drift"
		case strings.HasPrefix(line, "Unless you have made") || strings.HasPrefix(line, "This is a refresh-only"):
			section = ""
		case len(f) > 2 && f[0] == "#" && (strings.Contains(line, " will be ") || strings.Contains(line, " must be ")):
			plan = append(plan, strings.Join(f, " "))
		case section == "drift" && len(f) > 0 && (f[0] == "#" || f[0] == "~" || f[0] == "-" || f[0] == "+"):
			if f[0] == "#" && len(f) > 1 && strings.HasPrefix(f[1], "(") { // "# (2 unchanged attributes hidden)"
				continue
			}
			if len(f) > 2 && (f[1] == "id" || f[1] == "created_at") { // generated: differ between the tools
				f = []string{f[0], f[1], "(generated)"}
			}
			drift = append(drift, strings.Join(f, " "))
		}
	}
	return drift, plan
}

// TestTerraformRefreshDrift: a thing edited and another deleted behind both tools' backs.
// `terraform plan` and `cairn preview --refresh` show the same drift and plan the same
// actions; `cairn preview` without --refresh trusts its state; `cairn deploy --refresh`
// repairs the object as `terraform apply` does; `cairn refresh` stores drift without
// changing anything, as `terraform apply -refresh-only` does.
func TestTerraformRefreshDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("builds provider binaries")
	}
	rc := providersRC(t, 6)
	w := newTwins(t, rc, refreshConfig)
	tf, c, tfThings, cairnThings, cairnDir := w.tf, w.c, w.tfThings, w.cThings, w.cDir
	tf.run("apply", "-auto-approve")
	c.run("deploy", "-f", cairnDir, "--stack", "drift")

	tfID := func(addr string) string {
		for _, r := range tf.show().Values.RootModule.Resources {
			if r.Address == addr {
				return r.Values["id"].(string)
			}
		}
		t.Fatalf("terraform state has no %s", addr)
		return ""
	}
	cairnID := func(addr string) string { return attrs(t, c.describe("drift"), addr)["id"].(string) }
	outside := func(set map[string]any, deleteY bool) {
		t.Helper()
		editThing(t, tfThings, tfID("cairntest_thing.x"), set)
		editThing(t, cairnThings, cairnID("cairntest_thing.x"), set)
		if deleteY {
			for dir, id := range map[string]string{tfThings: tfID("cairntest_thing.y"), cairnThings: cairnID("cairntest_thing.y")} {
				if err := os.Remove(filepath.Join(dir, "thing-"+id+".json")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	outside(map[string]any{"size": 7, "revision": 5}, true)

	if out := c.run("preview", "-f", cairnDir, "--stack", "drift"); !strings.Contains(out, "No changes.") {
		t.Errorf("cairn preview without --refresh read something back:\n%s", out)
	}
	tfDrift, tfPlan := driftLines(tf.run("plan"))
	cDrift, cPlan := driftLines(c.run("preview", "-f", cairnDir, "--stack", "drift", "--refresh"))
	if len(tfDrift) == 0 || !slices.Contains(tfDrift, "~ revision = 1 -> 5") {
		t.Fatalf("terraform plan shows no drift of x.revision: %q (the test's premise)", tfDrift)
	}
	if fmt.Sprint(cDrift) != fmt.Sprint(tfDrift) {
		t.Errorf("drift:\ncairn preview --refresh %q\nterraform plan          %q", cDrift, tfDrift)
	}
	if fmt.Sprint(cPlan) != fmt.Sprint(tfPlan) {
		t.Errorf("planned actions:\ncairn preview --refresh %q\nterraform plan          %q", cPlan, tfPlan)
	}

	tf.run("apply", "-auto-approve")
	c.run("deploy", "-f", cairnDir, "--stack", "drift", "--refresh")
	for _, pair := range [][2]any{{thingSize(t, tfThings, tfID("cairntest_thing.x")), thingSize(t, cairnThings, cairnID("cairntest_thing.x"))}} {
		if pair[0] != float64(3) || pair[1] != float64(3) {
			t.Errorf("x's size after the repairing deploy: terraform %v, cairn %v; want 3", pair[0], pair[1])
		}
	}
	if len(things(t, cairnThings)) != 3 || len(things(t, tfThings)) != 3 {
		t.Errorf("things after the repairing deploy: cairn %v, terraform %v", things(t, cairnThings), things(t, tfThings))
	}
	if out := c.run("preview", "-f", cairnDir, "--stack", "drift", "--refresh"); !strings.Contains(out, "No changes.") {
		t.Errorf("preview --refresh after the repair:\n%s", out)
	}

	// Refresh only: the drift is stored, nothing changes.
	outside(map[string]any{"size": 9}, true)
	before := things(t, cairnThings)
	tfDrift, _ = driftLines(tf.run("apply", "-refresh-only", "-auto-approve"))
	cDrift, _ = driftLines(c.run("refresh", "--stack", "drift"))
	if fmt.Sprint(cDrift) != fmt.Sprint(tfDrift) {
		t.Errorf("refresh-only drift:\ncairn refresh                    %q\nterraform apply -refresh-only %q", cDrift, tfDrift)
	}
	if got := things(t, cairnThings); !slices.Equal(got, before) || thingSize(t, cairnThings, cairnID("cairntest_thing.x")) != float64(9) {
		t.Errorf("cairn refresh changed objects: things %v (before %v)", got, before)
	}
	st := c.describe("drift")
	if got := attrs(t, st, "cairntest_thing.x")["size"]; got != float64(9) {
		t.Errorf("x's stored size after cairn refresh = %v, want 9", got)
	}
	for _, r := range st.Resources {
		if r.LogicalID == "cairntest_thing.y" {
			t.Errorf("y, deleted outside cairn, is still in the state after cairn refresh")
		}
	}
	if len(st.Outputs) != 1 || fmt.Sprint(st.Outputs[0].Value) != "9" {
		t.Errorf("outputs after cairn refresh = %+v, want x_size = 9", st.Outputs)
	}
	// The next plans of both tools repair what the refresh recorded.
	_, tfPlan = driftLines(tf.run("plan", "-refresh=false"))
	_, cPlan = driftLines(c.run("preview", "-f", cairnDir, "--stack", "drift"))
	if fmt.Sprint(cPlan) != fmt.Sprint(tfPlan) {
		t.Errorf("plan after refresh-only:\ncairn preview  %q\nterraform plan %q", cPlan, tfPlan)
	}
}

// sensitiveRefreshConfig names a thing from a sensitive variable: the provider's schema does not
// make name sensitive, the configuration does.
const sensitiveRefreshConfig = cairntestHeader + `variable "label" {
  type      = string
  sensitive = true
  default   = "s3cret-label"
}
resource "cairntest_thing" "x" {
  name = var.label
  size = 3
  tags = { label = var.label, plain = "p" }
}
`

// TestTerraformRefreshKeepsSensitivity: a thing whose name comes from a sensitive variable is
// read back after an edit behind both tools' backs. terraform keeps the name sensitive in its
// state after `apply -refresh-only` (it re-marks what ReadResource returns with the prior
// state's paths), and so does cairn refresh: the drift lines are the same, no output shows the
// name, and the stack still masks it.
func TestTerraformRefreshKeepsSensitivity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds provider binaries")
	}
	rc := providersRC(t, 6)
	w := newTwins(t, rc, sensitiveRefreshConfig)
	tf, c, tfThings, cairnThings, tfDir, cairnDir := w.tf, w.c, w.tfThings, w.cThings, w.tfDir, w.cDir
	tf.run("apply", "-auto-approve")
	c.run("deploy", "-f", cairnDir, "--stack", "sens")
	var tfID string
	for _, r := range tf.show().Values.RootModule.Resources {
		tfID = r.Values["id"].(string)
	}
	editThing(t, tfThings, tfID, map[string]any{"size": 9})
	editThing(t, cairnThings, attrs(t, c.describe("sens"), "cairntest_thing.x")["id"].(string), map[string]any{"size": 9})

	tfOut := tf.run("apply", "-refresh-only", "-auto-approve")
	cOut := c.run("refresh", "--stack", "sens")
	tfDrift, _ := driftLines(tfOut)
	cDrift, _ := driftLines(cOut)
	if !slices.Contains(tfDrift, "~ size = 3 -> 9") {
		t.Fatalf("terraform apply -refresh-only shows no drift of size: %q (the test's premise)", tfDrift)
	}
	if fmt.Sprint(cDrift) != fmt.Sprint(tfDrift) {
		t.Errorf("refresh-only drift:\ncairn refresh                 %q\nterraform apply -refresh-only %q", cDrift, tfDrift)
	}
	mustNotContain(t, "terraform apply -refresh-only", tfOut, "s3cret")
	mustNotContain(t, "cairn refresh", cOut, "s3cret")
	// terraform's state still lists name as sensitive after the refresh.
	b, err := os.ReadFile(filepath.Join(tfDir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"sensitive_attributes": [`) || !strings.Contains(string(b), `"value": "name"`) {
		t.Errorf("terraform's state after the refresh does not mark name sensitive (the test's premise):\n%s", b)
	}
	got := attrs(t, c.describe("sens"), "cairntest_thing.x")
	tags, _ := got["tags"].(map[string]any)
	if got["name"] != "(sensitive value)" || got["size"] != float64(9) || tags["label"] != "(sensitive value)" || tags["plain"] != "p" {
		t.Errorf("x after cairn refresh: name %v, size %v, tags %v; want the name and tags.label masked and size 9", got["name"], got["size"], got["tags"])
	}
	if out := c.run("preview", "-f", cairnDir, "--stack", "sens", "--refresh"); strings.Contains(out, "s3cret") {
		t.Errorf("cairn preview --refresh shows the sensitive name:\n%s", out)
	}
}

const localFileConfig = `terraform {
  required_providers {
    local = { source = "hashicorp/local" }
  }
}
variable "file" { type = string }
resource "local_file" "f" {
  filename = var.file
  content  = "hello"
}
`

// TestTerraformRefreshLocalFile: a local_file edited on disk. The local provider forgets it on
// read (its checksum differs), so `terraform plan` and `cairn preview --refresh` plan to create
// it again; `cairn deploy --refresh` writes the content back; `cairn refresh` forgets it and
// changes nothing on disk, as `terraform apply -refresh-only` does.
func TestTerraformRefreshLocalFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds provider binaries")
	}
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t, providerbin.LocalRelease.Package(t)))
	tfDir, cairnDir := filepath.Join(t.TempDir(), "tf"), filepath.Join(t.TempDir(), "cairn")
	writeConfig(t, tfDir, localFileConfig)
	writeConfig(t, cairnDir, localFileConfig)
	tfFile, cairnFile := filepath.Join(t.TempDir(), "tf.txt"), filepath.Join(t.TempDir(), "cairn.txt")
	tf := newTFCLI(t, rc, tfDir, t.TempDir())
	c := newCairnCLI(t, rc, t.TempDir())
	tf.run("init")
	tf.run("apply", "-auto-approve", "-var", "file="+tfFile)
	c.run("deploy", "-f", cairnDir, "--stack", "lf", "--var", "file="+cairnFile)
	edit := func(content string) {
		t.Helper()
		for _, f := range []string{tfFile, cairnFile} {
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(f string) string {
		b, _ := os.ReadFile(f)
		return string(b)
	}
	edit("edited")
	if out := c.run("preview", "-f", cairnDir, "--stack", "lf", "--var", "file="+cairnFile); !strings.Contains(out, "No changes.") {
		t.Errorf("cairn preview without --refresh read something back:\n%s", out)
	}
	tfDrift, tfPlan := driftLines(tf.run("plan", "-var", "file="+tfFile))
	cDrift, cPlan := driftLines(c.run("preview", "-f", cairnDir, "--stack", "lf", "--var", "file="+cairnFile, "--refresh"))
	if fmt.Sprint(cDrift) != fmt.Sprint(tfDrift) || fmt.Sprint(cPlan) != fmt.Sprint(tfPlan) || len(tfPlan) != 1 {
		t.Errorf("plan:\ncairn preview --refresh %q %q\nterraform plan          %q %q", cDrift, cPlan, tfDrift, tfPlan)
	}
	if read(cairnFile) != "edited" {
		t.Errorf("cairn preview --refresh changed the file: %q", read(cairnFile))
	}
	tf.run("apply", "-auto-approve", "-var", "file="+tfFile)
	c.run("deploy", "-f", cairnDir, "--stack", "lf", "--var", "file="+cairnFile, "--refresh")
	if read(tfFile) != "hello" || read(cairnFile) != "hello" {
		t.Errorf("after the repairing deploy: terraform's file %q, cairn's %q; want hello", read(tfFile), read(cairnFile))
	}

	edit("again")
	tfDrift, _ = driftLines(tf.run("apply", "-refresh-only", "-auto-approve", "-var", "file="+tfFile))
	cDrift, _ = driftLines(c.run("refresh", "--stack", "lf", "-f", cairnDir, "--var", "file="+cairnFile))
	norm := func(lines []string) string {
		return strings.NewReplacer(tfFile, "FILE", cairnFile, "FILE").Replace(fmt.Sprint(lines))
	}
	if norm(cDrift) != norm(tfDrift) || len(tfDrift) == 0 {
		t.Errorf("refresh-only drift:\ncairn refresh                 %q\nterraform apply -refresh-only %q", cDrift, tfDrift)
	}
	if read(cairnFile) != "again" {
		t.Errorf("cairn refresh changed the file: %q", read(cairnFile))
	}
	if st := c.describe("lf"); len(st.Resources) != 0 {
		t.Errorf("local_file.f is still in the state after cairn refresh: %+v", st.Resources)
	}
}
