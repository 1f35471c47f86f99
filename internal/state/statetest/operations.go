package statetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairn-dev/cairn/internal/state"
)

// byID sorts operations, whose listing order the contract leaves open.
var byID = cmpopts.SortSlices(func(a, b state.Operation) bool { return a.ID < b.ID })

// wantBusy fails unless err is a *state.BusyError naming op.
func wantBusy(t *testing.T, call string, err error, op state.Operation) {
	t.Helper()
	var busy *state.BusyError
	if !errors.As(err, &busy) {
		t.Errorf("%s: got error %v, want a *state.BusyError", call, err)
		return
	}
	want := &state.BusyError{Stack: op.Stack, Owner: op.Owner, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
	if diff := cmp.Diff(want, busy, opts); diff != "" {
		t.Errorf("%s: the BusyError must name the running operation: -want +got:\n%s", call, diff)
	}
}

func testStartOperation(t *testing.T, s state.Store) {
	ctx := t.Context()
	_, err := s.GetOperation(ctx, "missing")
	wantNotFound(t, "GetOperation(missing)", err)

	op1 := operation("op1", "s")
	op1.Status = "" // StartOperation stores it as Running whatever it says
	must(t, "StartOperation", s.StartOperation(ctx, op1))
	op1.Status = state.Running
	got, err := s.GetOperation(ctx, "op1")
	must(t, "GetOperation", err)
	if diff := cmp.Diff(op1, got, opts); diff != "" {
		t.Errorf("GetOperation after StartOperation: -want +got:\n%s", diff)
	}
	wantUTC(t, "GetOperation", got.StartedAt, got.LeaseExpires)
	if !got.EndedAt.IsZero() {
		t.Errorf("GetOperation of a running operation: EndedAt = %v, want zero", got.EndedAt)
	}

	op2 := operation("op2", "s")
	op2.Kind, op2.Owner = "delete", "server-2"
	wantBusy(t, "second StartOperation on a busy stack", s.StartOperation(ctx, op2), op1)
	_, err = s.GetOperation(ctx, "op2")
	wantNotFound(t, "GetOperation of a refused operation", err)

	op3 := operation("op3", "other")
	must(t, "StartOperation on another stack", s.StartOperation(ctx, op3))
	running, err := s.ListRunningOperations(ctx)
	must(t, "ListRunningOperations", err)
	if diff := cmp.Diff([]state.Operation{op1, op3}, running, opts, byID); diff != "" {
		t.Errorf("ListRunningOperations: -want +got:\n%s", diff)
	}

	must(t, "FinishOperation", s.FinishOperation(ctx, "op1", state.Succeeded, "", t0.Add(time.Minute)))
	must(t, "StartOperation after FinishOperation", s.StartOperation(ctx, op2))
	wantBusy(t, "StartOperation on a stack busy again", s.StartOperation(ctx, operation("op4", "s")), op2)
	running, err = s.ListRunningOperations(ctx)
	must(t, "ListRunningOperations", err)
	if diff := cmp.Diff([]state.Operation{op2, op3}, running, opts, byID); diff != "" {
		t.Errorf("ListRunningOperations after a finish and a start: -want +got:\n%s", diff)
	}
}

// testStartOperationConcurrently: the one-running-operation rule holds under a race.
func testStartOperationConcurrently(t *testing.T, s state.Store) {
	ctx := t.Context()
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.StartOperation(ctx, operation(fmt.Sprintf("op%02d", i), "s")) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var busy *state.BusyError
		switch {
		case err == nil && winner >= 0:
			t.Errorf("StartOperation: op%02d and op%02d both started on one stack", winner, i)
		case err == nil:
			winner = i
		case !errors.As(err, &busy):
			t.Errorf("StartOperation(op%02d): got error %v, want nil or a *state.BusyError", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("StartOperation: none of %d concurrent calls started", n)
	}
	for i, err := range errs {
		var busy *state.BusyError
		if errors.As(err, &busy) && busy.Operation != fmt.Sprintf("op%02d", winner) {
			t.Errorf("StartOperation(op%02d): BusyError names %s, want the winner op%02d", i, busy.Operation, winner)
		}
	}
	running, err := s.ListRunningOperations(ctx)
	must(t, "ListRunningOperations", err)
	if len(running) != 1 {
		t.Errorf("ListRunningOperations: got %d operations, want 1", len(running))
	}
}

// testClaimOperation: the store compares leases with its own clock (time.Now).
func testClaimOperation(t *testing.T, s state.Store) {
	ctx := t.Context()
	now := time.Now()
	later := now.Add(2 * time.Hour)
	cases := map[string]struct {
		reason    string
		lease     time.Time // the lease the operation holds before the claim
		finished  bool
		owner     string
		wantBusy  bool
		wantErr   bool
		wantOwner string
		wantLease time.Time
	}{
		"SameOwnerRenews": {
			reason: "The holder renews its lease before it expires.",
			lease:  now.Add(time.Hour), owner: "server-1", wantOwner: "server-1", wantLease: later,
		},
		"SameOwnerAfterExpiry": {
			reason: "The holder may renew a lease that has just expired.",
			lease:  now.Add(-time.Hour), owner: "server-1", wantOwner: "server-1", wantLease: later,
		},
		"OtherOwnerWhileLeased": {
			reason: "Another server must wait for the lease to expire.",
			lease:  now.Add(time.Hour), owner: "server-2", wantBusy: true,
			wantOwner: "server-1", wantLease: now.Add(time.Hour),
		},
		"OtherOwnerAfterExpiry": {
			reason: "Another server takes over an expired lease.",
			lease:  now.Add(-time.Minute), owner: "server-2", wantOwner: "server-2", wantLease: later,
		},
		"Finished": {
			reason: "A finished operation cannot be claimed.",
			lease:  now.Add(-time.Minute), finished: true, owner: "server-2", wantErr: true,
			wantOwner: "server-1", wantLease: now.Add(-time.Minute),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			op := operation(name, "stack-"+name)
			op.LeaseExpires = tc.lease
			must(t, "StartOperation", s.StartOperation(ctx, op))
			if tc.finished {
				must(t, "FinishOperation", s.FinishOperation(ctx, op.ID, state.Failed, "gave up", now))
			}
			err := s.ClaimOperation(ctx, op.ID, tc.owner, later)
			switch {
			case tc.wantBusy:
				wantBusy(t, tc.reason+"\nClaimOperation", err, op)
			case tc.wantErr:
				var busy *state.BusyError
				if err == nil || errors.As(err, &busy) {
					t.Errorf("%s\nClaimOperation: got error %v, want an error other than *state.BusyError", tc.reason, err)
				}
			case err != nil:
				t.Errorf("%s\nClaimOperation: %v", tc.reason, err)
			}
			got, err := s.GetOperation(ctx, op.ID)
			must(t, "GetOperation", err)
			if got.Owner != tc.wantOwner || !got.LeaseExpires.Round(time.Second).Equal(tc.wantLease.Round(time.Second)) {
				t.Errorf("%s\nafter ClaimOperation: owner %q, lease %v; want %q, %v", tc.reason, got.Owner,
					got.LeaseExpires, tc.wantOwner, tc.wantLease)
			}
		})
	}
	wantNotFound(t, "ClaimOperation(missing)", s.ClaimOperation(ctx, "missing", "server-1", later))
}

func testFinishOperation(t *testing.T, s state.Store) {
	ctx := t.Context()
	cases := map[string]struct{ status, reason string }{
		"Succeeded": {state.Succeeded, ""},
		"Failed":    {state.Failed, "Resource A failed: boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			op := operation("op-"+name, "s-"+name)
			must(t, "StartOperation", s.StartOperation(ctx, op))
			end := t0.Add(time.Hour)
			must(t, "FinishOperation", s.FinishOperation(ctx, op.ID, tc.status, tc.reason, end))
			got, err := s.GetOperation(ctx, op.ID)
			must(t, "GetOperation", err)
			op.Status, op.StatusReason, op.EndedAt = tc.status, tc.reason, end
			if diff := cmp.Diff(op, got, opts); diff != "" {
				t.Errorf("GetOperation after FinishOperation: -want +got:\n%s", diff)
			}
			wantUTC(t, "GetOperation", got.EndedAt)

			// An ended operation stays as it ended.
			if err := s.FinishOperation(ctx, op.ID, state.Failed, "late", end.Add(time.Hour)); err == nil {
				t.Errorf("FinishOperation of an ended operation: got no error")
			}
			got, err = s.GetOperation(ctx, op.ID)
			must(t, "GetOperation", err)
			if diff := cmp.Diff(op, got, opts); diff != "" {
				t.Errorf("a second FinishOperation changed the operation: -want +got:\n%s", diff)
			}
		})
	}
	op := operation("op-bad-status", "s-bad")
	must(t, "StartOperation", s.StartOperation(ctx, op))
	if err := s.FinishOperation(ctx, op.ID, state.Running, "", t0); err == nil {
		t.Errorf("FinishOperation(status %q): got no error, want one: an operation ends as %s or %s",
			state.Running, state.Succeeded, state.Failed)
	}
	must(t, "FinishOperation", s.FinishOperation(ctx, op.ID, state.Failed, "", t0))
	running, err := s.ListRunningOperations(ctx)
	must(t, "ListRunningOperations", err)
	if len(running) != 0 {
		t.Errorf("ListRunningOperations after every operation finished: got %d, want none", len(running))
	}
	wantNotFound(t, "FinishOperation(missing)", s.FinishOperation(ctx, "missing", state.Failed, "", t0))
}

// testWatchOperation: WatchOperation is GetOperation without the Request, plus the stack's
// status, as the operation runs, ends and its stack goes away.
func testWatchOperation(t *testing.T, s state.Store) {
	ctx := t.Context()
	_, _, err := s.WatchOperation(ctx, "missing")
	wantNotFound(t, "WatchOperation(missing)", err)

	op := operation("op1", "s")
	must(t, "StartOperation", s.StartOperation(ctx, op))
	want := op
	want.Request = nil
	check := func(when, wantStatus string) {
		t.Helper()
		got, status, err := s.WatchOperation(ctx, op.ID)
		must(t, "WatchOperation", err)
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("WatchOperation %s: -want +got:\n%s", when, diff)
		}
		if status != wantStatus {
			t.Errorf("WatchOperation %s: stack status %q, want %q", when, status, wantStatus)
		}
		wantUTC(t, "WatchOperation", got.StartedAt, got.LeaseExpires)
	}
	check("before the stack row exists", "")
	st := stack("s")
	st.Status = "CREATE_IN_PROGRESS"
	must(t, "PutStack", s.PutStack(ctx, st))
	check("while it runs", "CREATE_IN_PROGRESS")
	st.Status = "CREATE_COMPLETE"
	must(t, "PutStack", s.PutStack(ctx, st))
	must(t, "FinishOperation", s.FinishOperation(ctx, op.ID, state.Succeeded, "done", t0.Add(time.Hour)))
	want.Status, want.StatusReason, want.EndedAt = state.Succeeded, "done", t0.Add(time.Hour)
	check("after it ended", "CREATE_COMPLETE")
}
