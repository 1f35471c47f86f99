package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/state"
)

// TestForceUnlock: ForceUnlock ends a running operation at once whoever runs it, without
// rollback, leaving the stack in the failed status of the operation with an event that names
// who forced it and the step in flight; a stack with nothing running is a NoOperationError.
func TestForceUnlock(t *testing.T) {
	cases := map[string]struct {
		reason     string
		ownerAlive bool // the first engine's lease is a live one: it runs elsewhere
		resume     bool // this engine resumed the operation and runs it
	}{
		"LiveOwnerElsewhere": {reason: "Another live engine holds the lease: it is fenced out.", ownerAlive: true},
		"RunHere":            {reason: "This engine resumed it: its run is stopped, not rolled back.", resume: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h, op := abandonedDeploy(t)
			started := make(chan struct{}, 10)
			fake := blockingB(started)
			e := engineOn(t, h.store, fake, engine.Options{OwnerAlive: func(string) bool { return tc.ownerAlive }})
			if tc.resume {
				if err := e.Resume(context.Background()); err != nil {
					t.Fatal(err)
				}
				select {
				case <-started: // B's create is in flight again
				case <-time.After(20 * time.Second):
					t.Fatal("the resumed run never reached B")
				}
			}
			got, err := e.ForceUnlock(context.Background(), "s", "alice@box")
			if err != nil {
				t.Fatalf("%s\nForceUnlock: %v", tc.reason, err)
			}
			if got.Status != state.Failed || got.StackStatus != "CREATE_FAILED" ||
				!strings.Contains(got.StatusReason, "force-unlocked by alice@box") || !strings.Contains(got.StatusReason, "create of B") {
				t.Errorf("%s\nafter ForceUnlock: %+v, want failed, CREATE_FAILED, naming alice@box and B's create", tc.reason, got)
			}
			if waited := waitOn(e, op.ID); waited.Status != state.Failed {
				t.Errorf("%s\nthe operation is %s after ForceUnlock", tc.reason, waited.Status)
			}
			for _, c := range fake.Calls() {
				if c.Method == "Delete" {
					t.Errorf("%s\nForceUnlock rolled back: %v", tc.reason, fake.Calls())
				}
			}
			_, err = e.ForceUnlock(context.Background(), "s", "alice@box")
			var none *engine.NoOperationError
			if !errors.As(err, &none) {
				t.Errorf("ForceUnlock with nothing running: %v, want a *engine.NoOperationError", err)
			}
			if _, err := e.Cancel(context.Background(), "s"); !errors.As(err, &none) {
				t.Errorf("Cancel with nothing running: %v, want a *engine.NoOperationError", err)
			}
		})
	}
}
