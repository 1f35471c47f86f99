package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A create-first replacement whose new object's create fails after making it keeps both
// objects, as `pulumi up` does: the new one as the resource (a failed create, updated by the
// next deploy), the old one awaiting deletion, deleted at the end of the next deploy that
// succeeds. The calls are those of `pulumi up` on the same program and plugin.
func TestPulumiFailedCreateFirstReplacementKeepsTheNewObject(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	deps := thingYAML("b", `value: "${a.out}"`)
	w.write(thingYAML("a", "value: one, key: k1") + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	old := w.resources()["a"].PhysicalID
	object := func(id string) bool {
		_, err := os.Stat(filepath.Join(w.things, "things", id+".json"))
		return err == nil
	}

	w.write(thingYAML("a", "value: one, key: k2, failCreate: true") + deps)
	if r := w.try("deploy", "-f", w.prog, "--stack", "s"); r.err == nil || !strings.Contains(r.all(), "failCreate is set") {
		t.Fatalf("deploy of a failing replacement: %v\n%s", r.err, r.all())
	}
	res := w.resources()
	a := res["a"]
	if a.PhysicalID == old || a.Status != "CREATE_FAILED" || !object(a.PhysicalID) {
		t.Fatalf("a after its failed replacement = %+v (old object %s)", a, old)
	}
	if d, ok := res["a~deposed-"+old]; !ok || d.PhysicalID != old || !object(old) {
		t.Fatalf("the old object is not kept for deletion: %+v", res)
	}
	w.calls()

	w.write(thingYAML("a", "value: one, key: k2") + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	want := []string{"Check(olds) a", "Diff a", "Update a", "Check(olds) b", "Diff b", "Delete a", "Cancel"}
	if got := w.calls(); !slices.Equal(got, want) {
		t.Errorf("calls of the next deploy = %v, want %v", got, want)
	}
	res = w.resources()
	if res["a"].PhysicalID != a.PhysicalID || res["a"].Status != "UPDATE_COMPLETE" {
		t.Errorf("a after the next deploy = %+v, want %s updated", res["a"], a.PhysicalID)
	}
	if _, ok := res["a~deposed-"+old]; ok || object(old) {
		t.Errorf("the old object %s was not deleted: %+v", old, res)
	}
	if things, _ := os.ReadDir(filepath.Join(w.things, "things")); len(things) != 2 {
		t.Errorf("objects = %v, want a and b only", things)
	}
}
