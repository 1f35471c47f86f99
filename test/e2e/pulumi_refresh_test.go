package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A refresh Reads each resource and then Diffs what it read against the stored inputs, as
// `pulumi refresh` does; it stores the inputs read (not the outputs) and keeps the stack's
// outputs, and the next deploy diffs the program against what was read.
func TestPulumiRefreshStoresWhatReadReturned(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(thingYAML("a", "value: one"))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	id := w.resources()["a"].PhysicalID
	behind := func(key, v string) { // a change made outside cairn
		t.Helper()
		path := filepath.Join(w.things, "things", id+".json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		obj := map[string]any{}
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatal(err)
		}
		obj[key] = v
		b, _ = json.Marshal(obj)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// An output changed outside: the inputs stay what they were.
	behind("out", "changed outside")
	w.calls()
	w.run("refresh", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Read a", "Diff a", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the refresh = %v, want %v", got, want)
	}
	if in := exported(t, w, "a")["inputs"].(map[string]any); len(in) != 1 || in["value"] != "one" {
		t.Errorf("inputs after the refresh = %v, want the stored ones", in)
	}
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got := w.calls(); slices.Contains(got, "Update a") {
		t.Errorf("the deploy after an output changed outside updated a: %v", got)
	}

	// An input changed outside: the next deploy diffs against it and updates a back.
	behind("value", "drifted")
	w.run("refresh", "-f", w.prog, "--stack", "s")
	if in := exported(t, w, "a")["inputs"].(map[string]any); in["value"] != "drifted" {
		t.Errorf("inputs after the refresh = %v, want the drifted value read", in)
	}
	w.calls()
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Update a", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the deploy after the drift = %v, want %v", got, want)
	}
}
