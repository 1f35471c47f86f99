package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
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
			// The run that was forced out writes no stack row afterwards: its writes are fenced.
			time.Sleep(300 * time.Millisecond)
			if st, err := e.Stack(context.Background(), "s"); err != nil || st.Status != "CREATE_FAILED" || !strings.Contains(st.StatusReason, "force-unlocked by alice@box") {
				t.Errorf("%s\nthe stack after the forced-out run stopped: %s %q (%v)", tc.reason, st.Status, st.StatusReason, err)
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

// TestForcedOutRunWritesNoStackRow: a run on another engine, still alive, that a ForceUnlock
// ended: when its provider call returns, it writes neither its step nor the stack's row
// (both fenced), so the forced status stays.
func TestForcedOutRunWritesNoStackRow(t *testing.T) {
	started, release := make(chan struct{}, 10), make(chan struct{})
	slow := &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == "B" {
			started <- struct{}{}
			<-release // deaf to the cancel, as a provider stuck in a cloud call is
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-1", Outputs: req.Props}, nil
	}}
	h := newHarness(t, slow)
	first := engineOn(t, h.store, slow, engine.Options{LeaseTTL: time.Hour})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	second := engineOn(t, h.store, slow, engine.Options{OwnerAlive: func(string) bool { return true }})
	if _, err := second.ForceUnlock(context.Background(), "s", "alice@box"); err != nil {
		t.Fatal(err)
	}
	close(release)
	waitOn(first, op.ID)
	time.Sleep(300 * time.Millisecond)
	st, err := second.Stack(context.Background(), "s")
	if err != nil || st.Status != "CREATE_FAILED" || !strings.Contains(st.StatusReason, "force-unlocked by alice@box") {
		t.Errorf("the stack after the forced-out run went on: %s %q (%v)", st.Status, st.StatusReason, err)
	}
	for _, r := range st.Resources {
		if r.LogicalID == "B" && r.Status == "CREATE_COMPLETE" {
			t.Errorf("the forced-out run wrote B: %+v", r)
		}
	}
}
