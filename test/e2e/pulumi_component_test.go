package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Component resources: cairntest:index:Group (test/pulumiproviders/cairntest_group.go) is a
// component whose Construct registers one cairntest:index:Thing per entry of `values` on the
// ResourceMonitor cairn serves for the call.

func groupYAML(name, values string) string {
	return "  " + name + ":\n    type: cairntest:index:Group\n    properties: {values: " + values + "}\n    options: {version: 1.0.0}\n"
}

// pulled is `cairn state pull` of stack s: Pulumi's deployment, its resources by name.
func (w *pulumiThings) pulled() map[string]map[string]any {
	w.t.Helper()
	path := filepath.Join(w.t.TempDir(), "state.json")
	w.run("state", "pull", "--stack", "s", "--out", path, "--show-secrets")
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var d struct {
		Deployment struct {
			Resources []map[string]any `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, r := range d.Deployment.Resources {
		urn, _ := r["urn"].(string)
		out[urn[strings.LastIndex(urn, "::")+2:]] = r
	}
	return out
}

func (w *pulumiThings) objects() int {
	w.t.Helper()
	things, err := os.ReadDir(filepath.Join(w.things, "things"))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return len(things)
}

// A component's children are created, diffed and updated, deleted when no longer registered,
// and deleted with the component; a preview constructs with dryRun and makes nothing; the
// export holds the children as resources whose parent is the component.
func TestPulumiComponentLifecycle(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(groupYAML("g", "[one, two]") + thingYAML("after", `value: "${g.outs[1]}"`) +
		"outputs:\n  count: ${g.count}\n  last: ${after.out}\n")

	out := w.run("preview", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Construct g preview", "Check g-0", "Create g-0 preview", "Check g-1", "Create g-1 preview", "Create after preview", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the preview = %v, want %v", got, want)
	}
	if !strings.Contains(out, `"out-out-two"`) || w.objects() != 0 {
		t.Errorf("preview (objects made: %d):\n%s", w.objects(), out)
	}

	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Construct g", "Check g-0", "Create g-0", "Check g-1", "Create g-1", "Check after", "Create after", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the create = %v, want %v", got, want)
	}
	if n := w.objects(); n != 3 {
		t.Errorf("objects after the create = %d, want 3", n)
	}
	if v := attrs(t, w.describe("s"), "after")["value"]; v != "out-two" {
		t.Errorf("after.value = %#v, want out-two (the component's output)", v)
	}
	state := w.pulled()
	g, child := state["g"], state["g-1"]
	if g == nil || child == nil {
		t.Fatalf("the export lacks the component or its child: %v", state)
	}
	if g["custom"] != false || g["id"] != nil || g["type"] != "cairntest:index:Group" {
		t.Errorf("the component in the export = %v", g)
	}
	if child["parent"] != g["urn"] || child["custom"] != true || !strings.HasPrefix(child["provider"].(string), "urn:pulumi:s::") ||
		!strings.Contains(child["urn"].(string), "::cairntest:index:Group$cairntest:index:Thing::g-1") {
		t.Errorf("the child in the export = %v (component %v)", child, g["urn"])
	}

	// No change: nothing is constructed again.
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got := w.calls(); slices.Contains(got, "Construct g") {
		t.Errorf("a no-op constructed the component again: %v", got)
	}

	// A changed entry: the child is diffed and updated in place, the other left alone.
	w.write(groupYAML("g", "[one, three]") + thingYAML("after", `value: "${g.outs[1]}"`))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Construct g", "Check(olds) g-0", "Diff g-0", "Check(olds) g-1", "Diff g-1", "Update g-1", "Check(olds) after", "Diff after", "Update after", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the update = %v, want %v", got, want)
	}
	if v := attrs(t, w.describe("s"), "after")["value"]; v != "out-three" {
		t.Errorf("after.value = %#v, want out-three", v)
	}

	// An entry removed: its child is no longer registered, so it is deleted.
	w.write(groupYAML("g", "[one]") + thingYAML("after", `value: "${g.outs[0]}"`))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got := w.calls(); !slices.Contains(got, "Delete g-1") {
		t.Errorf("calls of the shrink = %v, want Delete g-1", got)
	}
	if n := w.objects(); n != 2 {
		t.Errorf("objects after the shrink = %d, want 2", n)
	}
	if _, ok := w.pulled()["g-1"]; ok {
		t.Errorf("the export still holds g-1")
	}

	// Delete: the dependent first, then the component's children.
	w.run("delete", "--stack", "s", "--yes")
	if got, want := w.calls(), []string{"Delete after", "Delete g-0", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the delete = %v, want %v", got, want)
	}
	if n := w.objects(); n != 0 {
		t.Errorf("objects after the delete = %d, want 0", n)
	}
}
