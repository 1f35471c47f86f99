package postgres

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// TestGroupCommitIsolatesFenced: appends of many callers at once, one of them fenced out,
// commit together; the fenced one fails alone with ErrFenced and writes nothing, every other
// one is stored with its resource row, and their events too.
func TestGroupCommitIsolatesFenced(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if err := s.StartOperation(ctx, state.Operation{ID: "op", Stack: "s", Kind: "deploy", Owner: "me",
		LeaseExpires: time.Now().Add(time.Hour), StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const n = 64
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	for i := range n + 1 {
		wg.Go(func() {
			fence := "me"
			if i == n {
				fence = "someone-else"
			}
			name := fmt.Sprintf("R%d", i)
			_, errs[i] = s.Append(ctx, state.JournalEntry{Operation: "op", Stack: "s", Step: "create/" + name, Phase: state.End,
				Fence: fence, At: time.Now()}, state.Write{Put: &state.Resource{Stack: "s", Name: name, Type: "T", Status: "CREATE_COMPLETE"}})
			if errs[i] == nil {
				_, errs[i] = s.AppendEvent(ctx, state.Event{Stack: "s", Operation: "op", LogicalID: name, Status: "CREATE_COMPLETE", At: time.Now()})
			}
		})
	}
	wg.Wait()
	for i, err := range errs[:n] {
		if err != nil {
			t.Errorf("append %d: %v", i, err)
		}
	}
	if !errors.Is(errs[n], state.ErrFenced) {
		t.Errorf("the fenced append: %v, want ErrFenced", errs[n])
	}
	rows, err := s.ListResources(ctx, "s")
	if err != nil || len(rows) != n {
		t.Errorf("resources: %d, %v; want %d (none of the fenced append)", len(rows), err, n)
	}
	evs, err := s.ListEvents(ctx, "s", 0, 0)
	if err != nil || len(evs) != n {
		t.Errorf("events: %d, %v; want %d", len(evs), err, n)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq {
			t.Fatalf("events out of order: %d after %d", evs[i].Seq, evs[i-1].Seq)
		}
	}
}
