package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
)

// replicas opens two stores on one new database: two cairn servers sharing it.
func replicas(t *testing.T) (a, b *Store) {
	url := pgtest.Start(t)
	return open(t, url), open(t, url)
}

// TestReplicasStartOperation: of starts on one stack racing in from two replicas, one wins and
// every other is a *state.BusyError naming it.
func TestReplicasStartOperation(t *testing.T) {
	ctx := t.Context()
	a, b := replicas(t)
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			errs[i] = s.StartOperation(ctx, state.Operation{ID: fmt.Sprintf("op%02d", i), Stack: "s", Kind: "deploy",
				Owner: fmt.Sprintf("server-%d", i%2), LeaseExpires: time.Now().Add(time.Hour), StartedAt: time.Now()})
		})
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Errorf("op%02d and %s both started", i, winner)
			}
			winner = fmt.Sprintf("op%02d", i)
		}
	}
	if winner == "" {
		t.Fatalf("no start won: %v", errs)
	}
	for i, err := range errs {
		var busy *state.BusyError
		if err != nil && (!errors.As(err, &busy) || busy.Operation != winner) {
			t.Errorf("StartOperation(op%02d): %v, want a *state.BusyError naming %s", i, err, winner)
		}
	}
	for _, s := range []*Store{a, b} {
		running, err := s.ListRunningOperations(ctx)
		if err != nil || len(running) != 1 || running[0].ID != winner {
			t.Errorf("ListRunningOperations = %+v, %v; want %s alone", running, err, winner)
		}
	}
}

// TestReplicasLeases: a live lease holds against the other replica; a dead holder's operation
// is taken over, after which its fenced appends fail; an expired lease claimed by both
// replicas at once goes to one.
func TestReplicasLeases(t *testing.T) {
	ctx := t.Context()
	a, b := replicas(t)
	op := state.Operation{ID: "op", Stack: "s", Kind: "deploy", Owner: "server-a", LeaseExpires: time.Now().Add(time.Hour),
		StartedAt: time.Now()}
	if err := a.StartOperation(ctx, op); err != nil {
		t.Fatal(err)
	}
	var busy *state.BusyError
	if err := b.ClaimOperation(ctx, "op", "server-b", time.Now().Add(time.Hour)); !errors.As(err, &busy) || busy.Owner != "server-a" {
		t.Fatalf("ClaimOperation of a live lease from the other replica: %v, want a *BusyError naming server-a", err)
	}
	appendAs := func(s *Store, owner, name string) error {
		_, err := s.Append(ctx, state.JournalEntry{Operation: "op", Stack: "s", Step: "create/" + name, Phase: state.End, Fence: owner},
			state.Write{Put: &state.Resource{Name: name}})
		return err
	}
	if err := appendAs(a, "server-a", "A"); err != nil {
		t.Fatalf("Append fenced by the holder: %v", err)
	}
	if err := b.TakeOverOperation(ctx, "op", "server-a", "server-b", time.Now().Add(-time.Second)); err != nil {
		t.Fatalf("TakeOverOperation: %v", err)
	}
	if err := appendAs(a, "server-a", "Lost"); !errors.Is(err, state.ErrFenced) {
		t.Errorf("Append by the replica that lost the operation: %v, want ErrFenced", err)
	}
	if err := appendAs(b, "server-b", "B"); err != nil {
		t.Errorf("Append by the new holder: %v", err)
	}

	// server-b's lease has expired (it took over with a lease in the past): both claim it.
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s := []*Store{a, b}[i%2]
		wg.Go(func() { errs[i] = s.ClaimOperation(ctx, "op", fmt.Sprintf("claimer-%d", i), time.Now().Add(time.Hour)) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.As(err, &busy):
			t.Errorf("ClaimOperation #%d: %v, want nil or a *BusyError", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent claims of an expired lease won, want 1", won, n)
	}
}

// TestFollowEventsAcrossReplicas: a client that pages a stack's events by Seq, while two
// replicas append to it, misses none: a stack's events commit in Seq order.
func TestFollowEventsAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	a, b := replicas(t)
	const writers, each = 6, 40
	var wg sync.WaitGroup
	for w := range writers {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				if _, err := s.AppendEvent(ctx, state.Event{Stack: "s", LogicalID: fmt.Sprintf("R%d-%d", w, i), Status: "CREATE_COMPLETE"}); err != nil {
					t.Errorf("AppendEvent: %v", err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []state.Event
	var after int64
	follow := func() {
		es, err := b.ListEvents(ctx, "s", after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			after = e.Seq
		}
		seen = append(seen, es...)
	}
	for following := true; following; {
		select {
		case <-done:
			following = false
		default:
		}
		follow()
	}
	follow()
	if len(seen) != writers*each {
		t.Errorf("the follower saw %d events, want %d", len(seen), writers*each)
	}
}
