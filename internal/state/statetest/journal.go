package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

// testAppend: an entry's writes are applied with it; Put inserts or replaces the row of
// (stack, name), Delete removes the logical id from the entry's stack and is a no-op when the
// row is absent; Seq increases.
func testAppend(t *testing.T, s state.Store) {
	ctx := t.Context()
	a2 := resource("s", "A")
	a2.ID, a2.Status, a2.Deps = "phys-A-2", "UPDATE_COMPLETE", nil
	steps := []struct {
		reason string
		writes []state.Write
		want   []state.Resource
	}{
		{"An entry without writes changes no row.", nil, nil},
		{"Put inserts.", []state.Write{{Put: ptr(resource("s", "A"))}}, []state.Resource{resource("s", "A")}},
		{"Several writes apply together; Put replaces; Delete of an absent row is no error.",
			[]state.Write{{Put: ptr(resource("s", "B"))}, {Put: &a2}, {Delete: "C"}},
			[]state.Resource{a2, resource("s", "B")}},
		{"Delete removes the row of the entry's stack only.", []state.Write{{Delete: "A"}}, []state.Resource{resource("s", "B")}},
		{"Put and Delete of one name in one Append apply in order.",
			[]state.Write{{Put: ptr(resource("s", "D"))}, {Delete: "D"}, {Put: ptr(resource("s", "E"))}},
			[]state.Resource{resource("s", "B"), resource("s", "E")}},
	}
	// A row of the same name in another stack must survive the Delete above.
	_, err := s.Append(ctx, entry("other", "t", "create/A", state.End), state.Write{Put: ptr(resource("t", "A"))})
	must(t, "Append", err)

	var last int64
	for i, st := range steps {
		seq, err := s.Append(ctx, entry("op", "s", "step", state.End), st.writes...)
		must(t, "Append", err)
		if seq <= last {
			t.Errorf("step %d: Append returned Seq %d after %d, want it to increase", i, seq, last)
		}
		last = seq
		got, err := s.ListResources(ctx, "s")
		must(t, "ListResources", err)
		if diff := cmp.Diff(st.want, got, opts); diff != "" {
			t.Errorf("step %d: %s\nListResources: -want +got:\n%s", i, st.reason, diff)
		}
	}
	_, err = s.GetResource(ctx, "s", "A")
	wantNotFound(t, "GetResource of a deleted row", err)
	if _, err := s.GetResource(ctx, "t", "A"); err != nil {
		t.Errorf("GetResource(t, A): Delete of s/A removed another stack's row: %v", err)
	}
}

// testAppendIsAtomic: an Append that fails writes neither its entry nor any of its writes. A
// write is invalid when it sets not exactly one of Put, Delete and Stack, or when its Put or
// Stack names another stack than the entry (an empty Resource.Stack means the entry's stack).
func testAppendIsAtomic(t *testing.T, s state.Store) {
	ctx := t.Context()
	cases := map[string]struct {
		reason string
		writes []state.Write
	}{
		"PutOfAnotherStack": {
			reason: "A Put must belong to the entry's stack; the valid Put before it must be undone.",
			writes: []state.Write{{Put: ptr(resource("s", "Good"))}, {Put: ptr(resource("elsewhere", "Bad"))}},
		},
		"EmptyWrite": {
			reason: "A Write with neither Put nor Delete is a caller's bug.",
			writes: []state.Write{{Put: ptr(resource("s", "Good"))}, {Delete: "Keep"}, {}},
		},
		"PutAndDelete": {
			reason: "A Write with both Put and Delete is ambiguous.",
			writes: []state.Write{{Put: ptr(resource("s", "Good"))}, {Put: ptr(resource("s", "Other")), Delete: "Keep"}},
		},
		"StackOfAnotherStack": {
			reason: "A Stack must be the entry's stack; the valid Stack and Put before it must be undone.",
			writes: []state.Write{{Stack: ptr(changed(stack("s")))}, {Put: ptr(resource("s", "Good"))}, {Stack: ptr(stack("elsewhere"))}},
		},
		"StackAndPut": {
			reason: "A Write with both Stack and Put is ambiguous.",
			writes: []state.Write{{Stack: ptr(changed(stack("s"))), Put: ptr(resource("s", "Good"))}},
		},
	}
	keep := resource("s", "Keep")
	must(t, "PutStack", s.PutStack(ctx, stack("s")))
	_, err := s.Append(ctx, entry("setup", "s", "create/Keep", state.End), state.Write{Put: &keep})
	must(t, "Append", err)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Append(ctx, entry("op-"+name, "s", "create/Good", state.End), tc.writes...); err == nil {
				t.Fatalf("%s\nAppend: got no error", tc.reason)
			}
			j, err := s.ListJournal(ctx, "op-"+name)
			must(t, "ListJournal", err)
			if len(j) != 0 {
				t.Errorf("%s\nListJournal after a failed Append: got %d entries, want none", tc.reason, len(j))
			}
			got, err := s.ListResources(ctx, "s")
			must(t, "ListResources", err)
			if diff := cmp.Diff([]state.Resource{keep}, got, opts); diff != "" {
				t.Errorf("%s\nListResources after a failed Append: -want +got:\n%s", tc.reason, diff)
			}
			st, err := s.GetStack(ctx, "s")
			must(t, "GetStack", err)
			if diff := cmp.Diff(stack("s"), st, opts); diff != "" {
				t.Errorf("%s\nGetStack after a failed Append: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
	// A Stack write replaces the stack's row with the entry, as PutStack does.
	next := changed(stack("s"))
	_, err = s.Append(ctx, entry("op", "s", "push/state", state.End), state.Write{Put: ptr(resource("s", "New"))}, state.Write{Stack: &next})
	must(t, "Append of a Stack", err)
	if st, err := s.GetStack(ctx, "s"); err != nil || !cmp.Equal(next, st, opts) {
		t.Errorf("GetStack after an Append with a Stack: %v, -want +got:\n%s", err, cmp.Diff(next, st, opts))
	}
	// An empty Resource.Stack is the entry's stack.
	bare := resource("", "Bare")
	_, err = s.Append(ctx, entry("op", "s", "create/Bare", state.End), state.Write{Put: &bare})
	must(t, "Append of a Put with an empty Stack", err)
	got, err := s.GetResource(ctx, "s", "Bare")
	must(t, "GetResource", err)
	if got.Stack != "s" {
		t.Errorf("GetResource().Stack = %q, want the entry's stack %q", got.Stack, "s")
	}
}

func testListJournal(t *testing.T, s state.Store) {
	ctx := t.Context()
	e1 := entry("op1", "s", "create/A", state.Begin)
	e2 := entry("op2", "s2", "create/A", state.Begin) // another operation, interleaved
	e3 := entry("op1", "s", "create/A", state.End)
	e3.Failed, e3.Detail, e3.Token, e3.At = true, []byte(`{"error":"boom"}`), "tok-A", t0.Add(1500*time.Millisecond)
	e4 := entry("op1", "s", "delete/B", state.Begin)
	e4.Detail = []byte{}
	var want1, want2 []state.JournalEntry
	for _, e := range []state.JournalEntry{e1, e2, e3, e4} {
		e.Seq = 999 // ignored: Append assigns it
		seq, err := s.Append(ctx, e)
		must(t, "Append", err)
		e.Seq = seq
		if e.Operation == "op1" {
			want1 = append(want1, e)
		} else {
			want2 = append(want2, e)
		}
	}
	got, err := s.ListJournal(ctx, "op1")
	must(t, "ListJournal", err)
	if diff := cmp.Diff(want1, got, opts); diff != "" {
		t.Errorf("ListJournal(op1) must hold the operation's entries by Seq: -want +got:\n%s", diff)
	}
	for _, e := range got {
		wantUTC(t, "ListJournal", e.At)
	}
	got, err = s.ListJournal(ctx, "op2")
	must(t, "ListJournal", err)
	if diff := cmp.Diff(want2, got, opts); diff != "" {
		t.Errorf("ListJournal(op2): -want +got:\n%s", diff)
	}
	got, err = s.ListJournal(ctx, "none")
	must(t, "ListJournal", err)
	if len(got) != 0 {
		t.Errorf("ListJournal of an unknown operation: got %d entries, want none", len(got))
	}
}

// changed is st with other contents.
func changed(st state.Stack) state.Stack {
	st.Status, st.StatusReason, st.Template, st.TFState = "IMPORT_COMPLETE", "", []byte(`{"new":true}`), []byte(`{"lineage":"l","serial":9}`)
	st.UpdatedAt = st.UpdatedAt.Add(time.Hour)
	return st
}

// testFencedAppend: an entry with a Fence is written, with its writes, only while its
// operation is running and held by the Fence; otherwise Append fails with an error wrapping
// state.ErrFenced and writes nothing. An entry without a Fence is not checked.
func testFencedAppend(t *testing.T, s state.Store) {
	ctx := t.Context()
	op := operation("op", "s") // held by server-1
	must(t, "StartOperation", s.StartOperation(ctx, op))
	fenced := func(owner, name string) error {
		e := entry("op", "s", "create/"+name, state.End)
		e.Fence = owner
		_, err := s.Append(ctx, e, state.Write{Put: ptr(resource("s", name))})
		return err
	}
	wantFenced := func(call string, err error, name string) {
		t.Helper()
		if !errors.Is(err, state.ErrFenced) {
			t.Errorf("%s: got error %v, want one wrapping state.ErrFenced", call, err)
		}
		_, gerr := s.GetResource(ctx, "s", name)
		wantNotFound(t, call+": the fenced Append's write", gerr)
		entries, lerr := s.ListJournal(ctx, "op")
		must(t, "ListJournal", lerr)
		for _, je := range entries {
			if je.Step == "create/"+name {
				t.Errorf("%s: the fenced Append's entry was written", call)
			}
		}
	}
	must(t, "Append fenced by the holder", fenced("server-1", "Held"))
	if _, err := s.GetResource(ctx, "s", "Held"); err != nil {
		t.Errorf("GetResource after an Append fenced by the holder: %v", err)
	}
	wantFenced("Append fenced by another engine", fenced("server-2", "Other"), "Other")

	e := entry("missing", "s", "create/Missing", state.End)
	e.Fence = "server-1"
	_, err := s.Append(ctx, e, state.Write{Put: ptr(resource("s", "Missing"))})
	wantFenced("Append fenced on an unknown operation", err, "Missing")

	// Another engine takes the operation over: its old holder may not write any more.
	must(t, "TakeOverOperation", s.TakeOverOperation(ctx, "op", "server-1", "server-2", time.Now().Add(time.Hour)))
	wantFenced("Append fenced by the holder that lost the operation", fenced("server-1", "Lost"), "Lost")
	must(t, "Append fenced by the new holder", fenced("server-2", "Taken"))

	must(t, "FinishOperation", s.FinishOperation(ctx, "op", state.Failed, "stopped", t0))
	wantFenced("Append fenced on a finished operation", fenced("server-2", "Late"), "Late")
	if _, err := s.Append(ctx, entry("op", "s", "create/Unfenced", state.End)); err != nil {
		t.Errorf("Append without a Fence on a finished operation: %v", err)
	}
}
