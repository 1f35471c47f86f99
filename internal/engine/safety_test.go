package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

// blockingB is a provider whose create of B never returns until its engine stops: the stand-in
// for a step that kills the server every time it runs.
func blockingB(started chan<- struct{}) *providertest.Fake {
	return &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == "B" {
			started <- struct{}{}
			<-ctx.Done()
			return provider.CreateResponse{}, ctx.Err()
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-1", Outputs: req.Props}, nil
	}}
}

func engineOn(t *testing.T, store state.Store, fake provider.Provider, o engine.Options) *engine.Engine {
	t.Helper()
	reg := provider.NewRegistry()
	reg.Register("Test::*", fake)
	o.Store, o.Providers = store, reg
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 300 * time.Millisecond
	}
	e, err := engine.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

// stopsAgain resumes the operations of store on a new engine with fake, waits until fake has
// reached the call it blocks in (started), then stops that engine: one more life of a server.
func stopsAgain(t *testing.T, store state.Store, fake provider.Provider, started <-chan struct{}, life int) {
	t.Helper()
	e := engineOn(t, store, fake, engine.Options{})
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatalf("resumption %d did not reach its blocking call", life)
	}
	e.Shutdown(context.Background())
}

// dyingStore is the store of an engine whose process dies: Shutdown stops it, but the clean-stop
// mark a shutdown journals is never written (a killed process writes nothing more).
type dyingStore struct{ state.Store }

func (d dyingStore) Append(ctx context.Context, e state.JournalEntry, w ...state.Write) (int64, error) {
	if e.Step == "resume" && strings.Contains(string(e.Detail), `"clean":true`) {
		return 0, nil
	}
	return d.Store.Append(ctx, e, w...)
}

// TestCrashLoopBreaker: an operation that dies at the same step every time it is resumed is
// failed, naming the step, on the resumption after MaxResumes; the stack can then be deleted.
func TestCrashLoopBreaker(t *testing.T) {
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	dying := dyingStore{h.store}
	first := engineOn(t, dying, blockingB(started), engine.Options{})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	first.Shutdown(context.Background()) // dies at B
	for i := range 3 {                   // resumed, and dies at B again, three times
		stopsAgain(t, dying, blockingB(started), started, i+1)
	}
	e := engineOn(t, h.store, blockingB(started), engine.Options{})
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := e.Wait(ctx, op.ID)
	if err != nil || got.Status != state.Failed {
		t.Fatalf("the fourth resumption: %+v, %v; want the operation failed by the breaker", got, err)
	}
	if !strings.Contains(got.StatusReason, "3 times in a row") || !strings.Contains(got.StatusReason, "create/B") {
		t.Errorf("reason %q must say how often and at which step", got.StatusReason)
	}
	if got.StackStatus != "CREATE_FAILED" {
		t.Errorf("stack status %s, want CREATE_FAILED", got.StackStatus)
	}
	select {
	case <-started:
		t.Errorf("the breaker ran the step again")
	default:
	}
	del, err := e.Delete(context.Background(), "s", api.DeleteRequest{})
	if err != nil {
		t.Fatalf("delete after the breaker: %v", err)
	}
	if got, _ := e.Wait(ctx, del.ID); got.Status != state.Succeeded {
		t.Errorf("delete after the breaker: %+v", got)
	}
}

// TestCleanStopsAreNotDeaths: an operation stopped by shutdowns (restarts, the in-process
// CLI's short-lived servers) is resumed however often that happens.
func TestCleanStopsAreNotDeaths(t *testing.T) {
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	op, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	h.e.Shutdown(context.Background())
	for i := range 5 {
		stopsAgain(t, h.store, blockingB(started), started, i+1)
	}
	if o, _ := h.store.GetOperation(context.Background(), op.ID); o.Status != state.Running {
		t.Fatalf("after five clean restarts the operation is %s (%s), want still running", o.Status, o.StatusReason)
	}
}

// oneStepThenDie creates one resource per engine, then blocks on the next as if the process
// died there: every resumption makes progress.
func oneStepThenDie(started chan<- struct{}) *providertest.Fake {
	var mu sync.Mutex
	made := 0
	return &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		mu.Lock()
		made++
		first := made == 1
		mu.Unlock()
		if !first {
			started <- struct{}{}
			<-ctx.Done()
			return provider.CreateResponse{}, ctx.Err()
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-1", Outputs: req.Props}, nil
	}}
}

// TestDeathsWithProgressAreNoCrashLoop: an operation whose server dies again and again, but
// that finishes a step before each death, is resumed every time.
func TestDeathsWithProgressAreNoCrashLoop(t *testing.T) {
	const steps = `
Resources:
  A: {Type: Test::Thing}
  B: {Type: Test::Thing, Properties: {After: !Ref A}}
  C: {Type: Test::Thing, Properties: {After: !Ref B}}
  D: {Type: Test::Thing, Properties: {After: !Ref C}}
  E: {Type: Test::Thing, Properties: {After: !Ref D}}
  F: {Type: Test::Thing, Properties: {After: !Ref E}}
  G: {Type: Test::Thing, Properties: {After: !Ref F}}
`
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	dying := dyingStore{h.store}
	first := engineOn(t, dying, oneStepThenDie(started), engine.Options{})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: steps})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	first.Shutdown(context.Background()) // A made, dies at B
	for i := range 5 {                   // each resumption makes one more, then dies
		stopsAgain(t, dying, oneStepThenDie(started), started, i+1)
	}
	if o, _ := h.store.GetOperation(context.Background(), op.ID); o.Status != state.Running {
		t.Fatalf("after five deaths each with progress the operation is %s (%s), want still running", o.Status, o.StatusReason)
	}
}

// TestProgressResetsTheBreaker: resumptions that each let a step finish are not a crash loop.
func TestProgressResetsTheBreaker(t *testing.T) {
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	op, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	h.e.Shutdown(context.Background())
	e := engineOn(t, h.store, &providertest.Fake{}, engine.Options{MaxResumes: 1})
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := waitOn(e, op.ID); got.Status != state.Succeeded {
		t.Fatalf("a first resumption that makes progress: %+v, want succeeded", got)
	}
}

// TestDeadOwnerIsTakenOverAtOnce: a lease whose holder is known to be dead (the CLI process
// that was killed) is taken over without waiting for it to expire.
func TestDeadOwnerIsTakenOverAtOnce(t *testing.T) {
	h, op := abandonedDeploy(t)
	e := engineOn(t, h.store, &providertest.Fake{}, engine.Options{LeaseTTL: time.Hour,
		OwnerAlive: func(string) bool { return false }})
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := waitOn(e, op.ID); got.Status != state.Succeeded {
		t.Fatalf("resumption of a dead holder's operation: %+v, want succeeded well before the hour", got)
	}
}

// TestCancelWhileResuming: cancelling right after a restart (the old server is dead; the new
// one is resuming the operation, or has not got to it yet) is accepted and the operation ends
// cancelled; an operation that another live engine runs is refused with 409 (cancel it there).
func TestCancelWhileResuming(t *testing.T) {
	cases := map[string]struct {
		resume, ownerAlive, refused bool
	}{
		"BeingResumed":       {resume: true},
		"NotYetResumed":      {},
		"LiveOwnerElsewhere": {ownerAlive: true, refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h, op := abandonedDeploy(t)
			if tc.ownerAlive { // a live engine elsewhere holds it (a clean stop handed it over)
				if err := h.store.ClaimOperation(context.Background(), op.ID, "elsewhere:1:x", time.Now().Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
			}
			// B blocks until cancelled here too, so the run cannot finish before the Cancel arrives.
			e := engineOn(t, h.store, blockingB(make(chan struct{}, 10)), engine.Options{OwnerAlive: func(string) bool { return tc.ownerAlive }})
			if tc.resume {
				if err := e.Resume(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.Cancel(context.Background(), "s")
			var busy *state.BusyError
			if tc.refused {
				if !errors.As(err, &busy) {
					t.Fatalf("Cancel of an operation a live engine runs: %v, want a *state.BusyError (409)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Cancel right after a restart: %v", err)
			}
			got := waitOn(e, op.ID)
			if got.Status != state.Failed || !strings.Contains(got.StatusReason+got.StackStatus, "ROLLBACK") && !strings.Contains(got.StatusReason, "cancel") {
				t.Errorf("after Cancel: %+v, want the operation failed by the cancel", got)
			}
			// Cancelled before its resumed run loaded, it still rolls back to the end: a stack is
			// never left *_IN_PROGRESS by an operation that ended.
			if strings.HasSuffix(got.StackStatus, "_IN_PROGRESS") || strings.Contains(got.StatusReason, "context canceled") {
				t.Errorf("after Cancel: %+v, want the rollback run to its end", got)
			}
		})
	}
}

// abandonedDeploy leaves a deploy of chain running in the store of the harness it returns:
// the engine that ran it was shut down while B blocked, and its lease has an hour left.
// TestDrainHandsOver: an engine that shuts down mid-operation hands its lease over, and
// another replica, running since before (its Resume found nothing), takes the operation at its
// next scan, long before the lease of an hour would have expired, though every holder looks
// alive (another machine's).
func TestDrainHandsOver(t *testing.T) {
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	other := engineOn(t, h.store, &providertest.Fake{}, engine.Options{LeaseTTL: time.Hour, ScanEvery: 50 * time.Millisecond,
		OwnerAlive: func(string) bool { return true }})
	if err := other.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := engineOn(t, h.store, blockingB(started), engine.Options{LeaseTTL: time.Hour, ScanEvery: -1,
		OwnerAlive: func(string) bool { return true }})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	start := time.Now()
	first.Shutdown(context.Background())
	if got := waitOn(other, op.ID); got.Status != state.Succeeded {
		t.Fatalf("the drained operation: %+v, want succeeded by the other engine", got)
	}
	t.Logf("handed over and finished in %v", time.Since(start))
}

func abandonedDeploy(t *testing.T) (*harness, api.Operation) {
	t.Helper()
	started := make(chan struct{}, 10)
	h := newHarness(t, blockingB(started))
	first := engineOn(t, h.store, blockingB(started), engine.Options{LeaseTTL: time.Hour})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	first.Shutdown(context.Background())
	return h, op
}

// waitOn waits (20 s at most) for operation id of e to end and returns it as it is then.
func waitOn(e *engine.Engine, id string) api.Operation {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, _ := e.Wait(ctx, id)
	return got
}

// TestFencedOutEngineLeavesTheOperationAlone: an engine whose operation another engine took
// over (its lease was lost while a provider call hung, ignoring the cancel) learns it when its
// call returns and its write is fenced out; it neither fails the operation nor sets the
// stack's status: the new holder finishes it.
func TestFencedOutEngineLeavesTheOperationAlone(t *testing.T) {
	started, release := make(chan struct{}, 10), make(chan struct{})
	stuck := &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == "B" {
			started <- struct{}{}
			<-release // deaf to the cancel
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-1", Outputs: req.Props}, nil
	}}
	h := newHarness(t, stuck)
	first := engineOn(t, h.store, stuck, engine.Options{LeaseTTL: time.Hour, ScanEvery: -1, Owner: "first:1:a",
		OwnerAlive: func(string) bool { return true }})
	op, err := first.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	// Another engine decides the first is dead and takes the operation over.
	second := engineOn(t, h.store, &providertest.Fake{}, engine.Options{LeaseTTL: time.Hour, ScanEvery: -1, Owner: "second:2:b",
		OwnerAlive: func(owner string) bool { return owner != "first:1:a" }})
	if err := h.store.TakeOverOperation(context.Background(), op.ID, "first:1:a", "second:2:b", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	close(release) // the first's call returns now, its end write is fenced out
	time.Sleep(200 * time.Millisecond)
	if got, _ := h.store.GetOperation(context.Background(), op.ID); got.Status != state.Running {
		t.Fatalf("after the fenced-out engine's call returned: operation %s (%s), want still running for the new holder", got.Status, got.StatusReason)
	}
	if err := second.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := waitOn(second, op.ID); got.Status != state.Succeeded || got.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("the new holder's run: %+v, want succeeded", got)
	}
}
