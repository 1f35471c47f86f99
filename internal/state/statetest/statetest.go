// Package statetest is the conformance suite of state.Store. Every backend runs it in one
// line, statetest.Run(t, open), and must pass it under go test -race. Backends that keep the
// private-provider registry also run statetest.RunRegistry. The suite is the
// specification where state.go leaves room: read the test of a method before changing it.
// It imports only state and go-cmp.
package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cairn-dev/cairn/internal/state"
)

// Run runs the suite. open returns a new, empty store for one subtest and arranges for it to
// be closed when that subtest ends (t.Cleanup); the suite never closes it.
func Run(t *testing.T, open func(t *testing.T) state.Store) {
	suite := []struct {
		name string
		fn   func(*testing.T, state.Store)
	}{
		{"Stacks", testStacks},
		{"StackOperationField", testStackOperationField},
		{"DeleteStack", testDeleteStack},
		{"Resources", testResources},
		{"Append", testAppend},
		{"AppendIsAtomic", testAppendIsAtomic},
		{"FencedAppend", testFencedAppend},
		{"ListJournal", testListJournal},
		{"StartOperation", testStartOperation},
		{"StartOperationConcurrently", testStartOperationConcurrently},
		{"ClaimOperation", testClaimOperation},
		{"FinishOperation", testFinishOperation},
		{"WatchOperation", testWatchOperation},
		{"Events", testEvents},
		{"EventSeqNeverReused", testEventSeqNeverReused},
		{"Key", testKey},
		{"KeyConcurrently", testKeyConcurrently},
		{"CustomRequests", testCustomRequests},
		{"CustomResponseConcurrently", testCustomResponseConcurrently},
		{"ConcurrentWrites", testConcurrentWrites},
		{"Tenants", testTenants},
		{"TakeOverOperation", testTakeOverOperation},
	}
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// t0 has nanoseconds and a zone other than UTC: stores keep at least milliseconds and hand
// times back in UTC.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123_456_789, time.FixedZone("CET", 3600))

// opts compares rows as a store returns them: times to the millisecond, nil and empty
// slices alike. A lease's end may be off by up to a second: a store shared by replicas may
// rebase it on the database's clock (the lease lasts as long as asked, from the database's now).
var opts = cmp.Options{
	cmp.FilterPath(isLease, cmpopts.EquateApproxTime(time.Second)),
	cmp.FilterPath(func(p cmp.Path) bool { return !isLease(p) }, cmpopts.EquateApproxTime(time.Millisecond)),
	cmpopts.EquateEmpty(),
}

func isLease(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "LeaseExpires"
}

// wantUTC fails unless every non-zero time is in UTC.
func wantUTC(t *testing.T, what string, times ...time.Time) {
	t.Helper()
	for _, tm := range times {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("%s: time %v is in %v, want UTC", what, tm, tm.Location())
		}
	}
}

// wantNotFound fails unless err wraps state.ErrNotFound.
func wantNotFound(t *testing.T, call string, err error) {
	t.Helper()
	if !errors.Is(err, state.ErrNotFound) {
		t.Errorf("%s: got error %v, want one wrapping state.ErrNotFound", call, err)
	}
}

// must fails the test now on err.
func must(t *testing.T, call string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", call, err)
	}
}

func stack(name string) state.Stack {
	return state.Stack{Tenant: state.DefaultTenant, Name: name, ID: "arn:cairn:stack/" + name, Dialect: "cloudformation", Status: "CREATE_COMPLETE",
		StatusReason: "ok", Description: "the " + name + " stack", Parameters: []byte(`{"Size":"1"}`),
		Outputs: []byte(`[{"OutputKey":"Url"}]`), Template: []byte(`{"template":"x"}`), Providers: []byte(`{"provider.x":{"v":"1.0.0"}}`),
		TFState: []byte(`{"lineage":"l"}`), CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
}

func resource(stack, name string) state.Resource {
	return state.Resource{Stack: stack, Name: name, Type: "Custom::Thing", ID: "phys-" + name, Status: "CREATE_COMPLETE",
		StatusReason: "", Props: []byte(`{"A":1}`), Outputs: []byte(`{"B":"x"}`), Deps: []string{"Other", "Z"},
		DeletionPolicy: "Delete", Protect: true, Private: []byte(`{"v":1}`), Provider: "provider.time",
		UpdatedAt: t0.Add(time.Second)}
}

func entry(op, stack, step, phase string) state.JournalEntry {
	return state.JournalEntry{Operation: op, Stack: stack, Step: step, Phase: phase, Token: "tok-" + step, At: t0}
}

func operation(id, stack string) state.Operation {
	return state.Operation{ID: id, Stack: stack, Kind: "deploy", Status: state.Running, Request: []byte(`{"kind":"deploy"}`),
		Owner: "server-1", LeaseExpires: time.Now().Add(time.Hour), StartedAt: t0}
}

func event(stack, logicalID, status string) state.Event {
	return state.Event{Stack: stack, Operation: "op-" + stack, LogicalID: logicalID, PhysicalID: "phys-" + logicalID,
		Type: "Custom::Thing", Status: status, Reason: "because", At: t0}
}
