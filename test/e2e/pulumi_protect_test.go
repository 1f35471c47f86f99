package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Pulumi's protect is kept in the stack's state, as `pulumi up` keeps it: a protected resource
// removed from the program, or in a stack being deleted, is refused before anything is
// deleted; a deploy that only turns protect off stores it, after which the removal works.
func TestPulumiProtectIsKeptInState(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	b := sideThing("b", "value: x", "")
	w.write(sideThing("a", "value: one", "protect: true") + b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	before := w.resources()
	if exported(t, w, "a")["protect"] != true {
		t.Fatalf("a is not protected in the export")
	}

	// Removed from the program: refused, with Pulumi's words, and nothing is deleted.
	w.write(b)
	r := w.try("deploy", "-f", w.prog, "--stack", "s")
	if r.err == nil || !strings.Contains(gist(r.all()), `resource "a" cannot be deleted because it is protected`) {
		t.Fatalf("deploy without the protected a: %v\n%s", r.err, r.all())
	}
	if _, err := os.Stat(filepath.Join(w.things, "things", before["a"].PhysicalID+".json")); err != nil {
		t.Errorf("a's object is gone: %v", err)
	}
	if a, ok := w.resources()["a"]; !ok || a.PhysicalID != before["a"].PhysicalID {
		t.Errorf("a left the stack's state: %+v", a)
	}
	if exported(t, w, "a")["protect"] != true {
		t.Errorf("a is no longer protected in the export after the refusal")
	}
	// The preview says so too.
	if r := w.try("preview", "-f", w.prog, "--stack", "s"); r.err == nil || !strings.Contains(gist(r.all()), `resource "a" cannot be deleted because it is protected`) {
		t.Errorf("preview without the protected a: %v\n%s", r.err, r.all())
	}

	// Deleting the stack is refused as well, before anything is deleted (b stays).
	w.calls()
	r = w.try("delete", "--stack", "s")
	if r.err == nil || !strings.Contains(gist(r.all()), `resource "a" cannot be deleted because it is protected`) {
		t.Fatalf("delete of a stack holding the protected a: %v\n%s", r.err, r.all())
	}
	if got := w.resources(); len(got) != 2 {
		t.Errorf("resources after the refused delete: %v", got)
	}
	if calls := w.calls(); slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "Delete") }) {
		t.Errorf("the refused delete reached the plugin: %v", calls)
	}

	// Unprotected with no other change: the option is stored (no provider call changes a).
	w.write(sideThing("a", "value: one", "protect: false") + b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if calls := w.calls(); slices.Contains(calls, "Update a") {
		t.Errorf("unprotecting updated a: %v", calls)
	}
	if exported(t, w, "a")["protect"] == true {
		t.Errorf("a is still protected in the export after unprotecting it")
	}
	w.write(b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if _, ok := w.resources()["a"]; ok {
		t.Errorf("a is still in the stack once unprotected and removed")
	}
	if _, err := os.Stat(filepath.Join(w.things, "things", before["a"].PhysicalID+".json")); !os.IsNotExist(err) {
		t.Errorf("a's object is still there: %v", err)
	}
}

// A replacement of a protected resource is refused in Pulumi's words; unprotecting it in
// the same deploy allows it (Pulumi looks at the old and the new flag).
func TestPulumiProtectedReplacement(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(sideThing("a", "value: one, key: k1", "protect: true"))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	before := w.resources()["a"]

	w.write(sideThing("a", "value: one, key: k2", "protect: true"))
	r := w.try("deploy", "-f", w.prog, "--stack", "s")
	if r.err == nil || !strings.Contains(gist(r.all()), `unable to replace resource "a" as it is currently marked for protection`) {
		t.Fatalf("replacement of the protected a: %v\n%s", r.err, r.all())
	}
	if a := w.resources()["a"]; a.PhysicalID != before.PhysicalID {
		t.Errorf("a was replaced: %s -> %s", before.PhysicalID, a.PhysicalID)
	}

	w.write(sideThing("a", "value: one, key: k2", "protect: false"))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if a := w.resources()["a"]; a.PhysicalID == before.PhysicalID {
		t.Errorf("a was not replaced once unprotected in the same deploy")
	}
}

// retainOnDelete added to an unchanged resource is stored by that deploy, so the resource's
// later removal keeps its object, as under `pulumi up`.
func TestPulumiOptionChangeOfAnUnchangedResourceIsStored(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	b := sideThing("b", "value: x", "")
	w.write(sideThing("a", "value: one", "") + b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	id := w.resources()["a"].PhysicalID

	w.write(sideThing("a", "value: one", "retainOnDelete: true") + b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got := exported(t, w, "a")["retainOnDelete"]; got != true {
		t.Errorf("retainOnDelete in the export = %v", got)
	}
	w.calls()
	w.write(b)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if calls := w.calls(); slices.Contains(calls, "Delete a") {
		t.Errorf("the retained a was deleted: %v", calls)
	}
	if _, err := os.Stat(filepath.Join(w.things, "things", id+".json")); err != nil {
		t.Errorf("a's object is gone: %v", err)
	}
	if _, ok := w.resources()["a"]; ok {
		t.Errorf("a is still in the stack after its removal")
	}
}

// exported is the resource called name in `cairn state pull` (as `pulumi stack export`).
func exported(t *testing.T, w *pulumiThings, name string) map[string]any {
	t.Helper()
	var d struct {
		Deployment struct {
			Resources []map[string]any `json:"resources"`
		} `json:"deployment"`
	}
	out := w.run("state", "pull", "--stack", "s", "--show-secrets")
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("state pull: %v\n%s", err, out)
	}
	for _, r := range d.Deployment.Resources {
		if urn, _ := r["urn"].(string); strings.HasSuffix(urn, "::"+name) {
			return r
		}
	}
	t.Fatalf("no resource %s in the export:\n%s", name, out)
	return nil
}
