package e2e

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// importRC mirrors hashicorp/time and hashicorp/random 3.9.0, whose resources import.
func importRC(t *testing.T) string {
	t.Helper()
	mirror := providerbin.Mirror(t,
		providerbin.Package{Source: "registry.terraform.io/hashicorp/time", Version: providerbin.TimeVersion, Binary: providerbin.Time(t)},
		providerbin.RandomRelease.Package(t))
	return providerbin.CLIConfig(t, mirror)
}

// importConfig imports objects that exist nowhere but in their ids (time_static by RFC 3339
// time, time_sleep by its durations, random_string by its result): a plain block with an id
// from a variable, a for_each block over a local map, one into a module, and one whose
// configuration differs from the imported object, so the plan updates it in place.
// time_static and time_sleep import triggers as {}, which the configuration says too (null
// would force a replacement).
const importConfig = `variable "ts" {
  default = "2024-01-02T03:04:05Z"
}
locals {
  stamps = { a = "2023-05-06T07:08:09Z", b = "2022-01-01T00:00:00Z" }
}
resource "time_static" "t" {
  rfc3339  = var.ts
  triggers = {}
}
import {
  to = time_static.t
  id = var.ts
}
resource "time_static" "m" {
  for_each = local.stamps
  rfc3339  = each.value
  triggers = {}
}
import {
  for_each = local.stamps
  to       = time_static.m[each.key]
  id       = each.value
}
resource "time_sleep" "s" {
  create_duration = "2ms"
  triggers        = {}
}
import {
  to = time_sleep.s
  id = "1ms,"
}
resource "random_string" "r" {
  length = 4
}
import {
  to = random_string.r
  id = "abcd"
}
module "k" {
  source = "./mod"
}
import {
  to = module.k.time_static.x
  id = "2021-03-04T05:06:07Z"
}
output "r" {
  value = random_string.r.result
}
`

const importModule = `resource "time_static" "x" {
  rfc3339  = "2021-03-04T05:06:07Z"
  triggers = {}
}
`

// planHeaders are the lines of a terraform plan that say what happens to each resource
// ("  # time_static.t will be imported", "  # (imported from ...)") and its summary line.
func planHeaders(out string) []string {
	var hs []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  # ") || strings.HasPrefix(line, "Plan: ") || strings.HasPrefix(line, "No changes.") {
			hs = append(hs, strings.TrimRight(line, " "))
		}
	}
	sort.Strings(hs)
	return hs
}

// TestTerraformImportBlocks: the same configuration of import blocks planned and applied by
// terraform and by cairn: the same plan (which resource is imported, which then updated, the
// "Plan: 6 to import, 0 to add, 1 to change" line), the same attributes after the apply,
// nothing created, and no changes on the next plan.
func TestTerraformImportBlocks(t *testing.T) {
	t.Parallel()
	rc := importRC(t)
	thingDir := filepath.Join(t.TempDir(), "things")
	tfDir, cfg := filepath.Join(t.TempDir(), "tf"), filepath.Join(t.TempDir(), "cfg")
	for _, dir := range []string{tfDir, cfg} {
		writeConfig(t, dir, importConfig)
		writeConfig(t, filepath.Join(dir, "mod"), importModule)
	}
	tf := newTFCLI(t, rc, tfDir, thingDir)
	tf.run("init", "-input=false")
	want := planHeaders(tf.run("plan", "-input=false"))
	for _, line := range []string{"Plan: 6 to import, 0 to add, 1 to change, 0 to destroy.", "  # time_static.t will be imported",
		`  # (imported from "1ms,")`, "  # module.k.time_static.x will be imported"} {
		if !contains(want, line) {
			t.Fatalf("terraform plan lacks %q (the test's expectation is wrong): %q", line, want)
		}
	}
	c := newCairnCLI(t, rc, thingDir)
	pre := c.run("preview", "-f", cfg, "--stack", "s")
	if diff := cmp.Diff(want, planHeaders(pre)); diff != "" {
		t.Errorf("cairn preview and terraform plan differ (-terraform +cairn):\n%s\ncairn preview:\n%s", diff, pre)
	}
	if !strings.Contains(pre, "        rfc3339  = \"2024-01-02T03:04:05Z\"") && !strings.Contains(pre, "      rfc3339  = \"2024-01-02T03:04:05Z\"") {
		t.Errorf("the preview does not show the imported object's attributes:\n%s", pre)
	}
	if again := c.run("preview", "-f", cfg, "--stack", "s"); again != pre {
		t.Errorf("a preview stored something: the second differs:\n%s", again)
	}

	tf.run("apply", "-auto-approve", "-input=false")
	dep := c.run("deploy", "-f", cfg, "--stack", "s")
	for _, line := range strings.Split(dep, "\n") {
		if strings.Contains(line, "CREATE_") && (strings.Contains(line, "time_") || strings.Contains(line, "random_")) {
			t.Errorf("the deploy created a resource it should have imported: %s\n%s", line, dep)
		}
	}
	if n := strings.Count(dep, "IMPORT_COMPLETE"); n != 6 {
		t.Errorf("the deploy shows %d IMPORT_COMPLETE events, want 6:\n%s", n, dep)
	}
	if !strings.Contains(dep, "UPDATE_COMPLETE") {
		t.Errorf("the deploy did not update time_sleep.s:\n%s", dep)
	}
	st := c.describe("s")
	state := tf.show()
	for _, r := range state.Values.RootModule.Resources {
		got := attrs(t, st, r.Address)
		wantAttrs := r.Values
		if r.Address == "time_sleep.s" { // its id is the time of the import
			wantAttrs, got = without(wantAttrs, "id"), without(got, "id")
		}
		if diff := cmp.Diff(jsonString(wantAttrs), jsonString(got)); diff != "" {
			t.Errorf("%s after apply (-terraform +cairn):\n%s", r.Address, diff)
		}
	}
	if ids := resourceIDs(st); len(ids) != 6 {
		t.Errorf("the stack holds %v, want the 6 imported resources", ids)
	}
	if got := attrs(t, st, "module.k.time_static.x")["rfc3339"]; got != "2021-03-04T05:06:07Z" {
		t.Errorf("module.k.time_static.x rfc3339 = %v", got)
	}
	if tfAgain := tf.run("plan", "-input=false"); !strings.Contains(tfAgain, "No changes.") {
		t.Errorf("terraform's second plan:\n%s", tfAgain)
	}
	if again := c.run("preview", "-f", cfg, "--stack", "s"); !strings.Contains(again, "No changes.") {
		t.Errorf("cairn preview after the deploy (the import blocks must do nothing now):\n%s", again)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func without(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// TestTerraformImportErrors: the import blocks terraform refuses, refused by cairn's preview
// with the same summary at the same line.
func TestTerraformImportErrors(t *testing.T) {
	t.Parallel()
	rc := importRC(t)
	thingDir := filepath.Join(t.TempDir(), "things")
	cases := map[string]struct {
		main, mod string
		summary   string
	}{
		"MissingTarget": {main: "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.nope\n  id = \"2024-01-02T03:04:05Z\"\n}\n",
			summary: "Configuration for import target does not exist"},
		"Duplicate": {main: "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = \"2024-01-02T03:04:05Z\"\n}\nimport {\n  to = time_static.t\n  id = \"2024-01-02T03:04:06Z\"\n}\n",
			summary: `Duplicate import configuration for "time_static.t"`},
		"DataSource": {main: "data \"time_static\" \"t\" {}\nimport {\n  to = data.time_static.t\n  id = \"2024-01-02T03:04:05Z\"\n}\n",
			summary: "Invalid import address"},
		"ChildModule": {main: "module \"m\" {\n  source = \"./mod\"\n}\n",
			mod:     "resource \"time_static\" \"x\" {}\nimport {\n  to = time_static.x\n  id = \"2024-01-02T03:04:05Z\"\n}\n",
			summary: "Invalid import configuration"},
		"UnknownID": {main: "resource \"time_static\" \"a\" {}\nresource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t\n  id = time_static.a.rfc3339\n}\n",
			summary: "Invalid import id argument"},
		"KeyMismatch": {main: "resource \"time_static\" \"t\" {}\nimport {\n  to = time_static.t[\"x\"]\n  id = \"2024-01-02T03:04:05Z\"\n}\n",
			summary: "Invalid import 'to' expression"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "cfg")
			writeConfig(t, dir, tc.main)
			mod := tc.mod
			if mod == "" {
				mod = "resource \"time_static\" \"x\" {}\n"
			}
			writeConfig(t, filepath.Join(dir, "mod"), mod)
			tf := newTFCLI(t, rc, dir, thingDir)
			tf.try("init", "-input=false") // fails on a configuration error, which plan reports too
			tr := tf.try("plan", "-input=false", "-json")
			tds := tfDiagnostics(tr.stdout)
			if tr.err == nil || len(tds) == 0 || tds[0].Summary != tc.summary {
				t.Fatalf("terraform plan: %v %v, want %q (the test's expectation is wrong)\n%s", tr.err, tds, tc.summary, tr.all())
			}
			cr := newCairnCLI(t, rc, thingDir).try("preview", "-f", dir, "--stack", "s")
			cds := cairnDiagnostics(cr.stderr)
			want := tds[0]
			found := false
			for _, d := range cds {
				if strings.Contains(d.Summary, tc.summary) && filepath.Base(d.File) == filepath.Base(want.File) && d.Line == want.Line {
					found = true
				}
			}
			if cr.err == nil || !found {
				t.Errorf("cairn preview: %v %v; want %s like terraform\n%s", cr.err, cds, fmt.Sprint(want), cr.all())
			}
		})
	}
}
