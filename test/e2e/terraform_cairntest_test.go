package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cairntestSecret is the value of the sensitive attribute: it must never be printed.
const cairntestSecret = "hunter2-do-not-print"

// cairntestConfig is the main configuration: a data source feeding a resource, computed
// attributes, nested rule blocks (one taking protocol's default), a sensitive attribute, the
// protocol 6 nested attribute settings, and a second thing using the first's computed values.
func cairntestConfig(protocol int) string {
	settings := ""
	if protocol == 6 {
		settings = "  settings = { mode = \"fast\", replicas = 2 }\n"
	}
	return `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
  }
}
variable "name" {
  type    = string
  default = "alpha"
}
variable "size" {
  type    = number
  default = 3
}
data "cairntest_echo" "e" {
  input = "hello"
}
resource "cairntest_thing" "a" {
  name   = var.name
  size   = var.size
  secret = "` + cairntestSecret + `"
  tags   = { echo = data.cairntest_echo.e.output, len = tostring(data.cairntest_echo.e.length) }
  rule {
    port = 80
  }
  rule {
    port     = 443
    protocol = "udp"
  }
` + settings + `}
resource "cairntest_thing" "b" {
  name = "b"
  size = cairntest_thing.a.revision
  tags = { a = cairntest_thing.a.id }
}
output "a_id" { value = cairntest_thing.a.id }
output "a_revision" { value = cairntest_thing.a.revision }
`
}

// singleThing is a configuration of one cairntest_thing.x with the given arguments.
func singleThing(args string) string {
	return `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
  }
}
resource "cairntest_thing" "x" {
` + args + `
}
`
}

// things lists the ids of the things in a cairntest state directory.
func things(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		if id, ok := strings.CutPrefix(e.Name(), "thing-"); ok {
			ids = append(ids, strings.TrimSuffix(id, ".json"))
		}
	}
	slices.Sort(ids)
	return ids
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func mustNotContain(t *testing.T, what, text, secret string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("%s shows the secret %q:\n%s", what, secret, text)
	}
}

// TestTerraformCairntest runs cairn against the cairntest provider over protocol 5 and 6, through
// the cairn binary: create with computed, nested and sensitive attributes and a data source,
// update in place, replacement, provider errors and warnings, validation, import and delete.
func TestTerraformCairntest(t *testing.T) {
	for _, protocol := range []int{5, 6} {
		t.Run(fmt.Sprintf("v%d", protocol), func(t *testing.T) {
			t.Parallel()
			rc := providersRC(t, protocol)
			thingDir := filepath.Join(t.TempDir(), "things")
			c := newCairnCLI(t, rc, thingDir)
			cfg := filepath.Join(t.TempDir(), "cfg")
			writeConfig(t, cfg, cairntestConfig(protocol))
			t.Run("Lifecycle", func(t *testing.T) { cairntestLifecycle(t, c, cfg, thingDir, protocol) })
			t.Run("Diagnostics", func(t *testing.T) { cairntestDiagnostics(t, c, thingDir) })
			t.Run("Import", func(t *testing.T) { cairntestImport(t, c, thingDir) })
		})
	}
}

// cairntestLifecycle: preview, create, update in place, replacement and delete of stack "main".
func cairntestLifecycle(t *testing.T, c *cairnCLI, cfg, thingDir string, protocol int) {
	// A preview of the new stack: the secret is masked, computed values are unknown.
	pre := c.try("preview", "-f", cfg, "--stack", "main")
	if pre.err != nil {
		t.Errorf("preview of a new stack with a sensitive attribute failed (terraform plan succeeds): %v\n%s", pre.err, pre.all())
	} else {
		mustContain(t, "preview", pre.stdout, "# cairntest_thing.a will be created", "(sensitive value)", "(known after apply)", "Plan: 2 to add")
	}
	mustNotContain(t, "preview", pre.all(), cairntestSecret)

	dep := c.try("deploy", "-f", cfg, "--stack", "main")
	if dep.err != nil {
		t.Fatalf("deploy: %v\n%s", dep.err, dep.all())
	}
	mustContain(t, "deploy", dep.stdout, "cairntest_thing.a", "CREATE_COMPLETE", "a_revision = 1")
	mustNotContain(t, "deploy", dep.all(), cairntestSecret)

	st := c.describe("main")
	a, b := attrs(t, st, "cairntest_thing.a"), attrs(t, st, "cairntest_thing.b")
	id, _ := a["id"].(string)
	if len(id) != 16 || b["id"] == "" || b["id"] == id {
		t.Errorf("ids: a %v, b %v; want two different 16-hex-digit ids", a["id"], b["id"])
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(a["created_at"])); err != nil {
		t.Errorf("a.created_at = %v: %v", a["created_at"], err)
	}
	wantRules := []any{map[string]any{"port": 80.0, "protocol": "tcp"}, map[string]any{"port": 443.0, "protocol": "udp"}}
	checks := []struct {
		what      string
		got, want any
	}{
		{"a.name", a["name"], "alpha"},
		{"a.size", a["size"], 3.0},
		{"a.revision", a["revision"], 1.0},
		{"a.secret", a["secret"], "(sensitive value)"},
		{"a.rule (protocol defaults to tcp)", a["rule"], wantRules},
		{"a.tags (from the data source)", a["tags"], map[string]any{"echo": "hello", "len": "5"}},
		{"b.size (a.revision)", b["size"], 1.0},
		{"b.tags (a.id)", b["tags"], map[string]any{"a": id}},
	}
	if protocol == 6 {
		checks = append(checks, struct {
			what      string
			got, want any
		}{"a.settings", a["settings"], map[string]any{"mode": "fast", "replicas": 2.0}})
	} else if _, ok := a["settings"]; ok {
		t.Errorf("protocol 5 state has settings: %v", a["settings"])
	}
	for _, ck := range checks {
		if fmt.Sprint(ck.got) != fmt.Sprint(ck.want) {
			t.Errorf("%s = %v, want %v", ck.what, ck.got, ck.want)
		}
	}
	if got := things(t, thingDir); !slices.Contains(got, id) || len(got) != 2 {
		t.Errorf("things after create = %v, want a (%s) and b", got, id)
	}
	for _, args := range [][]string{
		{"describe", "--stack", "main"}, {"describe", "--stack", "main", "-o", "json"},
		{"outputs", "--stack", "main"}, {"events", "--stack", "main"}, {"events", "--stack", "main", "-o", "json"},
	} {
		mustNotContain(t, "cairn "+strings.Join(args, " "), c.run(args...), cairntestSecret)
	}

	// Update in place: size changes, a keeps its id, its revision goes up; b follows a.revision.
	pre = c.try("preview", "-f", cfg, "--stack", "main", "--var", "size=7")
	if pre.err != nil {
		t.Errorf("preview of an update failed: %v\n%s", pre.err, pre.all())
	} else {
		mustContain(t, "update preview", pre.stdout, "# cairntest_thing.a will be updated in-place", "~ size", "3 -> 7", "Plan: 0 to add, 2 to change, 0 to destroy.")
		for _, same := range []string{"~ rule", "~ tags", "~ settings"} { // terraform plan lists only size and revision
			if strings.Contains(pre.stdout, same) {
				t.Errorf("update preview shows the unchanged attribute %q as changed:\n%s", strings.TrimPrefix(same, "~ "), pre.stdout)
			}
		}
	}
	mustNotContain(t, "update preview", pre.all(), cairntestSecret)
	out := c.run("deploy", "-f", cfg, "--stack", "main", "--var", "size=7")
	mustContain(t, "update", out, "UPDATE_COMPLETE", "a_revision = 2", "a_id = "+id)
	st = c.describe("main")
	if a := attrs(t, st, "cairntest_thing.a"); a["id"] != id || a["size"] != 7.0 || a["revision"] != 2.0 {
		t.Errorf("after the update: a = %v; want id %s, size 7, revision 2", a, id)
	}
	if b := attrs(t, st, "cairntest_thing.b"); b["size"] != 2.0 {
		t.Errorf("after the update: b.size = %v, want a's revision 2", b["size"])
	}

	// A new name forces a replacement: a new id, the old thing gone.
	pre = c.try("preview", "-f", cfg, "--stack", "main", "--var", "size=7", "--var", "name=beta")
	if pre.err != nil {
		t.Errorf("preview of a replacement failed: %v\n%s", pre.err, pre.all())
	} else {
		mustContain(t, "replace preview", pre.stdout, "# cairntest_thing.a must be replaced", `"alpha" -> "beta" # forces replacement`)
	}
	out = c.run("deploy", "-f", cfg, "--stack", "main", "--var", "size=7", "--var", "name=beta")
	mustNotContain(t, "replace", out, cairntestSecret)
	a = attrs(t, c.describe("main"), "cairntest_thing.a")
	newID, _ := a["id"].(string)
	if newID == id || newID == "" || a["name"] != "beta" || a["revision"] != 1.0 {
		t.Errorf("after the replacement: a = %v; want a new id (old %s), name beta, revision 1", a, id)
	}
	if got := things(t, thingDir); slices.Contains(got, id) || !slices.Contains(got, newID) {
		t.Errorf("things after the replacement = %v: want %s, not %s", got, newID, id)
	}

	// A second deploy of the same configuration changes nothing.
	pre = c.try("preview", "-f", cfg, "--stack", "main", "--var", "size=7", "--var", "name=beta")
	if pre.err == nil && !strings.Contains(pre.stdout, "No changes.") {
		t.Errorf("preview after deploy: want No changes:\n%s", pre.stdout)
	}

	out = c.run("delete", "--stack", "main")
	mustContain(t, "delete", out, "DELETE_COMPLETE")
	if got := things(t, thingDir); slices.Contains(got, newID) {
		t.Errorf("things after delete = %v, still has %s", got, newID)
	}
}

// cairntestDiagnostics: an error and a warning from the provider, a validation error.
func cairntestDiagnostics(t *testing.T, c *cairnCLI, thingDir string) {
	before := things(t, thingDir)
	dir := filepath.Join(t.TempDir(), "diag")

	// fail_on = "create": the deploy fails with the provider's message, at the resource.
	writeConfig(t, dir, singleThing(`  name    = "failing"
  fail_on = "create"`))
	r := c.try("deploy", "-f", dir, "--stack", "fail")
	if r.err == nil {
		t.Errorf("deploy with fail_on = create succeeded:\n%s", r.all())
	}
	var line string
	for _, l := range strings.Split(r.all(), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[1] == "cairntest_thing.x" && f[3] == "CREATE_FAILED" {
			line = l
		}
	}
	if !strings.Contains(line, "cairntest: forced failure") || !strings.Contains(line, `fail_on asks the create of thing "failing" to fail.`) {
		t.Errorf("deploy with fail_on = create: no CREATE_FAILED line of cairntest_thing.x with the provider's error:\n%s", r.all())
	}

	// fail_on = "warn": the deploy succeeds and shows the warning, as terraform apply does.
	writeConfig(t, dir, singleThing(`  name    = "warning"
  fail_on = "warn"`))
	pre := c.try("preview", "-f", dir, "--stack", "warn")
	mustContain(t, "preview with fail_on = warn", pre.all(), "cairntest: requested warning")
	r = c.try("deploy", "-f", dir, "--stack", "warn")
	if r.err != nil {
		t.Errorf("deploy with fail_on = warn failed: %v\n%s", r.err, r.all())
	}
	mustContain(t, "deploy with fail_on = warn (terraform apply prints \"Warning: cairntest: requested warning\")", r.all(), "cairntest: requested warning")
	c.run("delete", "--stack", "warn")

	// size > 100 is a ValidateResourceConfig warning: shown, and the deploy goes on.
	writeConfig(t, dir, singleThing(`  name = "large"
  size = 150`))
	r = c.try("deploy", "-f", dir, "--stack", "large")
	if r.err != nil {
		t.Errorf("deploy with size = 150 failed: %v\n%s", r.err, r.all())
	}
	mustContain(t, "deploy with size = 150 (terraform apply prints \"Warning: size is large\")", r.all(), "size is large")
	c.run("delete", "--stack", "large")

	// port 0: an error from the provider's validation, before anything is created.
	writeConfig(t, dir, `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
  }
}
resource "cairntest_thing" "ok" {
  name = "ok"
}
resource "cairntest_thing" "bad" {
  name = "bad"
  rule {
    port = 0
  }
}
`)
	r = c.try("deploy", "-f", dir, "--stack", "invalid")
	if r.err == nil {
		t.Errorf("deploy with port 0 succeeded:\n%s", r.all())
	}
	mustContain(t, "deploy with port 0", r.stderr, "Invalid Attribute Value", "value must be between 1 and 65535, got: 0", "cairntest_thing.bad")
	if strings.Contains(r.stdout, "CREATE_IN_PROGRESS") {
		t.Errorf("deploy with port 0 started creating:\n%s", r.stdout)
	}
	if got := things(t, thingDir); !slices.Equal(got, before) {
		t.Errorf("things after the failed deploys = %v, want those before them %v", got, before)
	}
	if d := c.try("describe", "--stack", "invalid"); d.err == nil && strings.Contains(d.stdout, "cairntest_thing.ok") {
		t.Errorf("the invalid deploy recorded resources:\n%s", d.stdout)
	}
}

// cairntestImport: import adopts an existing thing; the next deploy converges it to the
// configuration, as terraform plan does after terraform import.
func cairntestImport(t *testing.T, c *cairnCLI, thingDir string) {
	src := filepath.Join(t.TempDir(), "src")
	writeConfig(t, src, singleThing(`  name = "adopted"
  size = 5
  rule {
    port = 22
  }`))
	c.run("deploy", "-f", src, "--stack", "origin")
	id, _ := attrs(t, c.describe("origin"), "cairntest_thing.x")["id"].(string)
	c.run("delete", "--stack", "origin", "--retain", "cairntest_thing.x")
	if !slices.Contains(things(t, thingDir), id) {
		t.Fatalf("delete --retain removed thing %s", id)
	}

	// The configuration differs from the object in size only.
	dst := filepath.Join(t.TempDir(), "dst")
	writeConfig(t, dst, singleThing(`  name = "adopted"
  size = 9
  rule {
    port = 22
  }`))
	r := c.try("import", "cairntest_thing.x", id, "-f", dst, "--stack", "imp")
	if r.err != nil {
		t.Fatalf("import: %v\n%s", r.err, r.all())
	}
	mustContain(t, "import", r.stdout, "Import successful")
	a := attrs(t, c.describe("imp"), "cairntest_thing.x")
	if a["id"] != id || a["name"] != "adopted" || a["size"] != 5.0 || fmt.Sprint(a["rule"]) != fmt.Sprint([]any{map[string]any{"port": 22.0, "protocol": "tcp"}}) {
		t.Errorf("imported attributes = %v; want the object's: id %s, size 5, one rule on port 22", a, id)
	}
	pre := c.try("preview", "-f", dst, "--stack", "imp")
	if pre.err != nil {
		t.Errorf("preview after import: %v\n%s", pre.err, pre.all())
	} else {
		mustContain(t, "preview after import (terraform plan: ~ size = 5 -> 9)", pre.stdout,
			"# cairntest_thing.x will be updated in-place", "5 -> 9")
	}
	c.run("deploy", "-f", dst, "--stack", "imp")
	if a := attrs(t, c.describe("imp"), "cairntest_thing.x"); a["size"] != 9.0 || a["id"] != id {
		t.Errorf("after deploying the imported stack: x = %v; want size 9 and id %s (terraform apply updates it)", a, id)
	}

	// A missing object cannot be imported.
	r = c.try("import", "cairntest_thing.x", "0000000000000000", "-f", dst, "--stack", "imp2")
	if r.err == nil {
		t.Errorf("import of a missing thing succeeded:\n%s", r.all())
	}
	mustContain(t, "import of a missing thing", r.all(), "Cannot import non-existent remote object")

	c.run("delete", "--stack", "imp")
	if slices.Contains(things(t, thingDir), id) {
		t.Errorf("delete of the imported stack left thing %s", id)
	}
}
