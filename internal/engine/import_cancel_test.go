package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
)

const cancelImportTF = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "r" {
  value = "new"
}
`

// blockingImport is an import fake whose Import signals started and answers once release is
// closed, or, when honourCancel, as soon as its context ends.
func blockingImport(honourCancel bool) (f *importFake, started chan struct{}, release chan struct{}) {
	f = newImportFake()
	started, release = make(chan struct{}), make(chan struct{})
	f.ImportFn = func(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
		close(started)
		if honourCancel {
			select {
			case <-ctx.Done():
				return provider.ImportResponse{}, ctx.Err()
			case <-release:
			}
		} else {
			<-release
		}
		return provider.ImportResponse{ID: req.ID, Outputs: cty.ObjectVal(map[string]cty.Value{"value": cty.StringVal("old")})}, nil
	}
	return f, started, release
}

func startImport(e *engine.Engine) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := e.Import(context.Background(), "s", api.ImportRequest{Source: api.DeployRequest{Files: map[string]string{"main.tf": cancelImportTF}},
			Address: "fake_thing.r", ID: "obj-1"})
		done <- err
	}()
	return done
}

// TestCancelDuringImport: Cancel during a live `cairn import` stops the import; it does not
// finish the operation as a dead server's while the import still runs (which released the
// stack to a deploy whose row the import then overwrote).
func TestCancelDuringImport(t *testing.T) {
	for _, honour := range []bool{true, false} {
		name := "provider stops"
		if !honour {
			name = "provider answers anyway"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := context.Background()
			f, started, release := blockingImport(honour)
			e := importEngine(t, h.store, f)
			done := startImport(e)
			<-started
			op, err := e.Cancel(ctx, "s")
			if err != nil {
				t.Fatalf("Cancel: %v", err)
			}
			if !honour {
				time.Sleep(200 * time.Millisecond) // a resume of the import would have finished it by now
				if got, err := h.store.GetOperation(ctx, op.ID); err != nil || got.Status != state.Running {
					t.Fatalf("import after Cancel, its provider call still in flight: %+v, %v; want it running", got, err)
				}
				var busy *state.BusyError
				if _, err := e.Deploy(ctx, "s", api.DeployRequest{Files: map[string]string{"main.tf": cancelImportTF}}); !errors.As(err, &busy) {
					t.Fatalf("deploy while the import still runs: %v, want a BusyError", err)
				}
				close(release)
			}
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the cancelled import did not return")
			}
			if err == nil || !strings.Contains(err.Error(), "cancelled") {
				t.Errorf("cancelled import returned %v, want the cancellation", err)
			}
			got, err := h.store.GetOperation(ctx, op.ID)
			if err != nil || got.Status != state.Failed || !strings.Contains(got.StatusReason, "cancelled") {
				t.Errorf("cancelled import's operation: %+v, %v; want failed as cancelled", got, err)
			}
			if rows, _ := h.store.ListResources(ctx, "s"); len(rows) != 0 {
				t.Errorf("rows after a cancelled import: %+v, want none", rows)
			}
			// The stack takes a deploy again, which creates the resource.
			dop, err := e.Deploy(ctx, "s", api.DeployRequest{Files: map[string]string{"main.tf": cancelImportTF}})
			if err != nil {
				t.Fatalf("deploy after the cancelled import: %v", err)
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if w, err := e.Wait(wctx, dop.ID); err != nil || w.Status != state.Succeeded {
				t.Fatalf("deploy after the cancelled import: %+v, %v", w, err)
			}
			rows, _ := h.store.ListResources(ctx, "s")
			if len(rows) != 1 || rows[0].ID == "obj-1" {
				t.Errorf("rows after the deploy: %+v, want the created fake_thing.r", rows)
			}
		})
	}
}

// TestImportKeepsItsLease: a provider slower than the lease does not let another server take
// a live import over (and finish it as failed while it adopts the object).
func TestImportKeepsItsLease(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	f, started, release := blockingImport(true)
	e1 := importEngine(t, h.store, f) // lease 300 ms
	done := startImport(e1)
	<-started
	time.Sleep(500 * time.Millisecond) // the first lease has expired
	e2 := importEngine(t, h.store, newImportFake())
	if err := e2.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	ops, err := h.store.ListRunningOperations(ctx)
	if err != nil || len(ops) != 1 {
		t.Fatalf("running operations while the import's provider call lasts: %+v, %v; want the import", ops, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("import: %v", err)
	}
	rows, _ := h.store.ListResources(ctx, "s")
	if len(rows) != 1 || rows[0].ID != "obj-1" {
		t.Errorf("rows after the import: %+v, want fake_thing.r obj-1", rows)
	}
	if got, err := h.store.GetOperation(ctx, ops[0].ID); err != nil || got.Status != state.Succeeded {
		t.Errorf("import's operation: %+v, %v; want succeeded", got, err)
	}
}

// pushBlockingStore holds the Append that adopts a pushed state until release is closed.
type pushBlockingStore struct {
	state.Store
	once             sync.Once
	started, release chan struct{}
}

func (b *pushBlockingStore) Append(ctx context.Context, e state.JournalEntry, w ...state.Write) (int64, error) {
	if e.Step == "push/state" {
		b.once.Do(func() { close(b.started) })
		<-b.release
	}
	return b.Store.Append(ctx, e, w...)
}

// TestCancelDuringPush: Cancel during a live state push stops it rather than finishing it as
// a dead server's while it still writes; the stack is left as it was.
func TestCancelDuringPush(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	ctx := context.Background()
	if _, err := h.e.PushState(ctx, "s", pushReq(tfstateOf(lineage1, 3, pushResources))); err != nil {
		t.Fatal(err)
	}
	before, _ := h.store.ListResources(ctx, "s")
	b := &pushBlockingStore{Store: h.store, started: make(chan struct{}), release: make(chan struct{})}
	e := tfEngineOn(t, b)
	done := make(chan error, 1)
	go func() {
		_, err := e.PushState(ctx, "s", pushReq(tfstateOf("99999999-2222-4333-8444-555555555555", 9, pushResources)))
		done <- err
	}()
	<-b.started
	op, err := e.Cancel(ctx, "s")
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if got, err := h.store.GetOperation(ctx, op.ID); err != nil || got.Status != state.Running {
		t.Fatalf("push after Cancel, still writing: %+v, %v; want it running", got, err)
	}
	close(b.release)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("cancelled push returned %v, want the cancellation", err)
	}
	if got, err := h.store.GetOperation(ctx, op.ID); err != nil || got.Status != state.Failed {
		t.Errorf("cancelled push's operation: %+v, %v; want failed", got, err)
	}
	if rows, _ := h.store.ListResources(ctx, "s"); len(rows) != len(before) {
		t.Errorf("rows after a cancelled push: %d, want the %d the stack had", len(rows), len(before))
	}
	if st, err := h.store.GetStack(ctx, "s"); err != nil || !strings.Contains(string(st.TFState), lineage1) {
		t.Errorf("stack after a cancelled push: %s, %v; want the first push's lineage", st.TFState, err)
	}
}
