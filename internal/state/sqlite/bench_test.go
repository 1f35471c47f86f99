package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// walBytes stops checkpoints on s, so that its WAL file grows by every byte written, and
// returns a function reporting the WAL's size.
func walBytes(tb testing.TB, s *Store) func() int64 {
	tb.Helper()
	if _, err := s.w.Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		tb.Fatalf("cannot stop checkpoints: %v", err)
	}
	if _, err := s.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatalf("cannot checkpoint: %v", err)
	}
	return func() int64 {
		fi, err := os.Stat(s.path + "-wal")
		if err != nil {
			tb.Fatalf("cannot stat the WAL: %v", err)
		}
		return fi.Size()
	}
}

// step writes what the engine writes for one resource step: a begin entry, an end entry with
// the resource's row, two events.
func step(ctx context.Context, s state.Store, stack string, i int) error {
	name := fmt.Sprintf("R%06d", i)
	now := time.Now()
	e := state.JournalEntry{Operation: "op-" + stack, Stack: stack, Step: "create/" + name, Phase: state.Begin,
		Token: "0123456789abcdef0123456789abcdef", At: now}
	if _, err := s.AppendEvent(ctx, state.Event{Stack: stack, Operation: e.Operation, LogicalID: name,
		Type: "Custom::Thing", Status: "CREATE_IN_PROGRESS", At: now}); err != nil {
		return err
	}
	if _, err := s.Append(ctx, e); err != nil {
		return err
	}
	r := state.Resource{Stack: stack, Name: name, Type: "Custom::Thing", ID: "phys-" + name, Status: "CREATE_COMPLETE",
		Props:   []byte(`{"ServiceToken":"arn:aws:lambda:eu-west-1:123456789012:function:handler","Size":"10"}`),
		Outputs: []byte(`{"Arn":"arn:thing:` + name + `"}`), Deps: []string{"Previous"}, DeletionPolicy: "Delete", UpdatedAt: now}
	e.Phase, e.Detail = state.End, []byte(`{"kind":"create","after":{"id":"phys-`+name+`"}}`)
	if _, err := s.Append(ctx, e, state.Write{Put: &r}); err != nil {
		return err
	}
	_, err := s.AppendEvent(ctx, state.Event{Stack: stack, Operation: e.Operation, LogicalID: name, PhysicalID: r.ID,
		Type: "Custom::Thing", Status: "CREATE_COMPLETE", At: now})
	return err
}

// TestStepWritesStayFlat: a resource step writes no more to a stack of 10,000 resources than to
// an empty one (state is rows, not a document).
func TestStepWritesStayFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 resources")
	}
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	const steps = 200
	perStep := func(stack string, from int) float64 {
		size := walBytes(t, s)
		before := size()
		for i := range steps {
			if err := step(ctx, s, stack, from+i); err != nil {
				t.Fatalf("step: %v", err)
			}
		}
		return float64(size()-before) / steps
	}
	small := perStep("small", 0)

	// Grow another stack to 10,000 rows in one Append, then step in it.
	big := make([]state.Write, 10_000)
	for i := range big {
		big[i].Put = &state.Resource{Stack: "big", Name: fmt.Sprintf("R%06d", 2*i+1), Props: make([]byte, 300)}
	}
	if _, err := s.Append(ctx, state.JournalEntry{Operation: "fill", Stack: "big"}, big...); err != nil {
		t.Fatalf("Append: %v", err)
	}
	large := perStep("big", 0) // even names: each lands between two existing rows
	t.Logf("WAL bytes per resource step: %.0f at 0 resources, %.0f at 10,000", small, large)
	if large > 1.5*small {
		t.Errorf("a step in a stack of 10,000 resources wrote %.0f bytes, %.1f times the %.0f bytes of one in an empty stack",
			large, large/small, small)
	}
}

// BenchmarkAppend measures an end entry with one resource Put, the engine's most frequent
// write, in a stack that grows with b.N.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	s := open(b, filepath.Join(b.TempDir(), "state.db"))
	size := walBytes(b, s)
	before := size()
	e := state.JournalEntry{Operation: "op", Stack: "s", Phase: state.End, Token: "0123456789abcdef", Detail: []byte(`{"kind":"create"}`)}
	r := state.Resource{Stack: "s", Type: "Custom::Thing", ID: "phys", Status: "CREATE_COMPLETE", Props: []byte(`{"Size":"10"}`),
		Deps: []string{"Other"}, DeletionPolicy: "Delete"}
	i := 0
	for b.Loop() {
		r.Name = fmt.Sprintf("R%07d", i)
		e.Step, e.At, r.UpdatedAt = "create/"+r.Name, time.Now(), time.Now()
		if _, err := s.Append(ctx, e, state.Write{Put: &r}); err != nil {
			b.Fatalf("Append: %v", err)
		}
		i++
	}
	b.ReportMetric(float64(size()-before)/float64(i), "walB/op")
}

// BenchmarkStep measures a whole resource step (two entries, a Put, two events) as the engine
// runs it, with SQLite's automatic checkpoints (TestStepWritesStayFlat counts its bytes).
func BenchmarkStep(b *testing.B) {
	ctx := context.Background()
	s := open(b, filepath.Join(b.TempDir(), "state.db"))
	i := 0
	for b.Loop() {
		if err := step(ctx, s, "s", i); err != nil {
			b.Fatalf("step: %v", err)
		}
		i++
	}
}
