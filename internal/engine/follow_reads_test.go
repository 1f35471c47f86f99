package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
)

// TestLastEvent: LastEvent is the newest of the stack's events (what a follower starts after),
// and a missing stack is ErrNotFound.
func TestLastEvent(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	ctx := context.Background()
	if _, _, err := h.e.LastEvent(ctx, "demo"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("LastEvent of a missing stack: %v, want ErrNotFound", err)
	}
	h.deploy("demo", chain)
	h.deploy("other", chain)
	evs, err := h.e.Events(ctx, "demo", 0, 0)
	if err != nil || len(evs) < 2 {
		t.Fatalf("Events: %d, %v", len(evs), err)
	}
	got, ok, err := h.e.LastEvent(ctx, "demo")
	if err != nil || !ok || got != evs[len(evs)-1] {
		t.Errorf("LastEvent = %+v, %v, %v; want %+v", got, ok, err, evs[len(evs)-1])
	}
}

// TestStackBrief: StackBrief lists a Terraform-language stack's resources as Stack does, without
// their attributes.
func TestStackBrief(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	op, err := h.e.Deploy(context.Background(), "tf", api.DeployRequest{Files: map[string]string{"main.tf": tfConfig("a")}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(op.ID)
	full := h.describe("tf")
	brief, err := h.e.StackBrief(context.Background(), "tf")
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Resources) != 1 || full.Resources[0].Attributes == nil {
		t.Fatalf("Stack: %+v, want one resource with attributes", full.Resources)
	}
	want := full
	want.Resources = []api.Resource{full.Resources[0]}
	want.Resources[0].Attributes = nil
	if diff := cmp.Diff(want, brief); diff != "" {
		t.Errorf("StackBrief: -want +got:\n%s", diff)
	}
}
