package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestMovedIntoOccupiedAddress: a move whose target the stack already holds is not made, as
// in terraform, and is not silent either: the preview warns with terraform's words, the
// object left behind is destroyed, and the deploy says why in an event.
func TestMovedIntoOccupiedAddress(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	ctx := context.Background()
	h.deployTF(map[string]string{"main.tf": tfConfig("a", "b")}, false) // fake_thing.r0 and r1
	after := map[string]string{"main.tf": tfConfig() + `resource "fake_thing" "r1" {
  value = "b"
}
moved {
  from = fake_thing.r0
  to   = fake_thing.r1
}
`}
	pr, err := h.e.Preview(ctx, "tf", api.DeployRequest{Files: after})
	if err != nil {
		t.Fatal(err)
	}
	var warned bool
	for _, d := range pr.Diagnostics {
		warned = warned || (d.Severity == "warning" && d.Summary == "Unresolved resource instance address changes" &&
			strings.Contains(d.Detail, "\n  - fake_thing.r0 could not move to fake_thing.r1\n") &&
			strings.Contains(d.Detail, "Terraform has planned to destroy these objects."))
	}
	if !warned {
		t.Errorf("preview diagnostics = %+v, want terraform's warning about the blocked move", pr.Diagnostics)
	}
	if got, want := changesOf(pr.Changes), "Remove fake_thing.r0"; got != want {
		t.Errorf("preview changes = %s, want %s", got, want)
	}
	h.deployTF(after, false)
	var reasons []string
	for _, ev := range h.events("tf") {
		if ev.Status == "MOVE_SKIPPED" {
			reasons = append(reasons, ev.LogicalID+": "+ev.Reason)
		}
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "fake_thing.r0: Warning: Unresolved resource instance address changes: fake_thing.r0 could not move to fake_thing.r1") {
		t.Errorf("MOVE_SKIPPED events = %q", reasons)
	}
	if got := resourceIDs(h.describe("tf")); len(got) != 1 || got["fake_thing.r1"] == "" {
		t.Errorf("resources after the deploy = %v, want fake_thing.r1 alone", got)
	}
}
