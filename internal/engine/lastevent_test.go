package engine_test

import (
	"context"
	"errors"
	"testing"

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
