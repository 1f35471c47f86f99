package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A delete-first replacement says so on its DELETE_IN_PROGRESS, for the replaced resource and
// for the dependent destroyed ahead of it, so the event log tells a replacement from a removal;
// a plain removal keeps an empty reason.
func TestDeleteFirstReplacementEventsSayReplacement(t *testing.T) {
	h, f := newTFHarness(t, nil, engine.Options{})
	f.DiffFn = replacingDiff
	h.deployTF(map[string]string{"main.tf": cascadeTF}, false)
	op := h.deployTF(map[string]string{"main.tf": strings.Replace(cascadeTF, `value = "A"`, `value = "A2"`, 1)}, false)
	evs, err := h.e.Events(context.Background(), "tf", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	deletes := map[string]string{}
	for _, ev := range evs {
		if ev.Operation == op.ID && ev.Status == "DELETE_IN_PROGRESS" {
			deletes[ev.LogicalID] = ev.Reason
		}
	}
	for _, name := range []string{"fake_thing.a", "fake_thing.b"} {
		if got := deletes[name]; got != engine.ReplacedFirstReason {
			t.Errorf("%s: DELETE_IN_PROGRESS reason %q, want %q (all: %v)", name, got, engine.ReplacedFirstReason, h.statuses("tf"))
		}
	}
	op = h.deployTF(map[string]string{"main.tf": "terraform {\n  required_providers {\n    fake = { source = \"example.com/test/fake\" }\n  }\n}\n"}, false)
	evs, err = h.e.Events(context.Background(), "tf", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Operation == op.ID && ev.Status == "DELETE_IN_PROGRESS" && ev.Reason != "" {
			t.Errorf("%s removed from the template: DELETE_IN_PROGRESS reason %q, want none", ev.LogicalID, ev.Reason)
		}
	}
}
