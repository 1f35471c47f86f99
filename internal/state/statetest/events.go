package statetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

func testEvents(t *testing.T, s state.Store) {
	ctx := t.Context()
	var all []state.Event
	var last int64
	for _, e := range []state.Event{event("a", "A", "CREATE_IN_PROGRESS"), event("b", "B", "CREATE_IN_PROGRESS"),
		event("a", "A", "CREATE_COMPLETE"), event("a", "a", "CREATE_COMPLETE"), event("b", "B", "CREATE_FAILED")} {
		e.Seq = 999 // ignored: AppendEvent assigns it
		seq, err := s.AppendEvent(ctx, e)
		must(t, "AppendEvent", err)
		if seq <= last {
			t.Errorf("AppendEvent returned Seq %d after %d, want it to increase across stacks", seq, last)
		}
		e.Seq, last = seq, seq
		all = append(all, e)
	}
	a1, b1, a2, a3, b2 := all[0], all[1], all[2], all[3], all[4]
	for stk, want := range map[string]int64{"a": a3.Seq, "b": b2.Seq, "none": 0} {
		if got, err := s.LastEventSeq(ctx, stk); err != nil || got != want {
			t.Errorf("LastEventSeq(%s) = %d, %v; want %d", stk, got, err, want)
		}
	}
	cases := map[string]struct {
		stack        string
		after, limit int
		want         []state.Event
	}{
		"All":            {stack: "a", want: []state.Event{a1, a2, a3}},
		"OtherStack":     {stack: "b", want: []state.Event{b1, b2}},
		"After":          {stack: "a", after: 1, want: []state.Event{a2, a3}},
		"AfterOtherSeq":  {stack: "a", after: 2, want: []state.Event{a2, a3}},
		"Limit":          {stack: "a", limit: 2, want: []state.Event{a1, a2}},
		"AfterAndLimit":  {stack: "a", after: 3, limit: 1, want: []state.Event{a3}},
		"AfterTheLast":   {stack: "a", after: 5},
		"UnknownStack":   {stack: "none"},
		"LimitAboveSize": {stack: "b", limit: 10, want: []state.Event{b1, b2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// after counts events in append order (1 is the first event's Seq).
			after := int64(0)
			if tc.after > 0 {
				after = all[tc.after-1].Seq
			}
			got, err := s.ListEvents(ctx, tc.stack, after, tc.limit)
			must(t, "ListEvents", err)
			if diff := cmp.Diff(tc.want, got, opts); diff != "" {
				t.Errorf("ListEvents(%s, after event %d, limit %d): -want +got:\n%s", tc.stack, tc.after, tc.limit, diff)
			}
			for _, e := range got {
				wantUTC(t, "ListEvents", e.At)
			}
		})
	}
}

// testEventSeqNeverReused: clients follow a stack's events with ListEvents(after = the last
// Seq they saw), so a Seq is never handed out twice, not even after DeleteStack removed the
// newest events.
func testEventSeqNeverReused(t *testing.T, s state.Store) {
	ctx := t.Context()
	must(t, "PutStack", s.PutStack(ctx, stack("gone")))
	_, err := s.AppendEvent(ctx, event("kept", "A", "CREATE_COMPLETE"))
	must(t, "AppendEvent", err)
	var last int64
	for range 3 {
		last, err = s.AppendEvent(ctx, event("gone", "B", "CREATE_COMPLETE"))
		must(t, "AppendEvent", err)
	}
	must(t, "DeleteStack", s.DeleteStack(ctx, "gone"))
	seq, err := s.AppendEvent(ctx, event("gone", "gone", "CREATE_IN_PROGRESS"))
	must(t, "AppendEvent", err)
	if seq <= last {
		t.Errorf("AppendEvent after DeleteStack returned Seq %d, want more than %d, the last Seq handed out", seq, last)
	}
}

// testConcurrentWrites runs what the engine runs for each resource step (a begin entry, an end
// entry with a Put, two events) from many goroutines at once, with readers alongside.
func testConcurrentWrites(t *testing.T, s state.Store) {
	ctx := t.Context()
	const workers, steps = 8, 25
	stackOf := func(w int) string { return fmt.Sprintf("s%d", w%3) }
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			op, stk := fmt.Sprintf("op%d", w), stackOf(w)
			for i := range steps {
				name := fmt.Sprintf("R%d-%03d", w, i)
				if _, err := s.Append(ctx, entry(op, stk, "create/"+name, state.Begin)); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				if _, err := s.AppendEvent(ctx, event(stk, name, "CREATE_IN_PROGRESS")); err != nil {
					t.Errorf("AppendEvent: %v", err)
					return
				}
				if _, err := s.Append(ctx, entry(op, stk, "create/"+name, state.End),
					state.Write{Put: ptr(resource(stk, name))}); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				if _, err := s.AppendEvent(ctx, event(stk, name, "CREATE_COMPLETE")); err != nil {
					t.Errorf("AppendEvent: %v", err)
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 20 {
				if _, err := s.ListResources(ctx, "s0"); err != nil {
					t.Errorf("ListResources: %v", err)
				}
				if _, err := s.ListEvents(ctx, "s1", 0, 10); err != nil {
					t.Errorf("ListEvents: %v", err)
				}
			}
		})
	}
	wg.Wait()

	journalSeqs := map[int64]bool{}
	rows := map[string]int{}
	for w := range workers {
		j, err := s.ListJournal(ctx, fmt.Sprintf("op%d", w))
		must(t, "ListJournal", err)
		if len(j) != 2*steps {
			t.Errorf("ListJournal(op%d): got %d entries, want %d", w, len(j), 2*steps)
		}
		for i, e := range j {
			if journalSeqs[e.Seq] || (i > 0 && e.Seq <= j[i-1].Seq) {
				t.Errorf("ListJournal(op%d): Seq %d repeated or out of order", w, e.Seq)
			}
			journalSeqs[e.Seq] = true
		}
		rows[stackOf(w)] += steps
	}
	var events int
	for stk, want := range rows {
		res, err := s.ListResources(ctx, stk)
		must(t, "ListResources", err)
		if len(res) != want {
			t.Errorf("ListResources(%s): got %d rows, want %d", stk, len(res), want)
		}
		ev, err := s.ListEvents(ctx, stk, 0, 0)
		must(t, "ListEvents", err)
		if len(ev) != 2*want {
			t.Errorf("ListEvents(%s): got %d events, want %d", stk, len(ev), 2*want)
		}
		for i := 1; i < len(ev); i++ {
			if ev[i].Seq <= ev[i-1].Seq {
				t.Errorf("ListEvents(%s): Seq %d after %d", stk, ev[i].Seq, ev[i-1].Seq)
			}
		}
		events += len(ev)
	}
	if events != 2*workers*steps {
		t.Errorf("got %d events in all, want %d", events, 2*workers*steps)
	}
}
