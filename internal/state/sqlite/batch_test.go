package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// holdWriter takes the writer connection until the returned func is called, so that the
// writes submitted meanwhile queue up for the committer.
func holdWriter(t *testing.T, s *Store) func() {
	t.Helper()
	tx, err := s.w.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("BeginTx: %v", err)
	}
	return func() { _ = tx.Rollback() }
}

// TestGroupCommitIsolatesFailures: writes that wait together share one transaction, and one
// that fails (a fenced Append, an Append whose write SQLite refuses) fails alone: every other
// write of its batch is stored, and each caller gets its own answer.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	ctx := t.Context()
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	if err := s.StartOperation(ctx, state.Operation{ID: "op", Stack: "s", Kind: "deploy", Owner: "me",
		LeaseExpires: time.Now().Add(time.Hour), StartedAt: time.Now()}); err != nil {
		t.Fatalf("StartOperation: %v", err)
	}
	if _, err := s.w.ExecContext(ctx, `CREATE TRIGGER boom BEFORE INSERT ON resources WHEN NEW.name = 'Boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatalf("cannot create trigger: %v", err)
	}
	release := holdWriter(t, s)
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := state.JournalEntry{Operation: "op", Stack: "s", Step: fmt.Sprintf("create/R%d", i), Phase: state.End, Fence: "me"}
			name := fmt.Sprintf("R%d", i)
			switch i % 10 {
			case 3:
				e.Fence = "someone else"
			case 7:
				name = "Boom"
			}
			_, errs[i] = s.Append(ctx, e, state.Write{Put: &state.Resource{Name: name, Type: "T"}})
			if i%5 == 0 {
				_, _ = s.AppendEvent(ctx, state.Event{Stack: "s", Operation: "op", LogicalID: name, Status: "CREATE_COMPLETE"})
			}
		})
	}
	// Let the writers queue up behind the held connection, then let them go.
	deadline := time.Now().Add(30 * time.Second)
	for s.c.queued() < n/2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	release()
	wg.Wait()

	res, err := s.ListResources(ctx, "s")
	if err != nil {
		t.Fatalf("ListResources: %v", err)
	}
	stored := map[string]bool{}
	for _, r := range res {
		stored[r.Name] = true
	}
	for i, err := range errs {
		name := fmt.Sprintf("R%d", i)
		switch i % 10 {
		case 3:
			if !errors.Is(err, state.ErrFenced) || stored[name] {
				t.Errorf("fenced Append %d: err %v, stored %v; want ErrFenced and nothing stored", i, err, stored[name])
			}
		case 7:
			if err == nil || !strings.Contains(err.Error(), "boom") {
				t.Errorf("Append %d refused by SQLite: err %v, want boom", i, err)
			}
		default:
			if err != nil || !stored[name] {
				t.Errorf("Append %d: err %v, stored %v; want it stored", i, err, stored[name])
			}
		}
	}
	if stored["Boom"] {
		t.Error("the refused write was stored")
	}
	j, err := s.ListJournal(ctx, "op")
	if err != nil {
		t.Fatalf("ListJournal: %v", err)
	}
	if want := n - 2*n/10; len(j) != want {
		t.Errorf("journal holds %d entries, want %d", len(j), want)
	}
	evs, err := s.ListEvents(ctx, "s", 0, 0)
	if err != nil || len(evs) != n/5 {
		t.Errorf("ListEvents: %d events, %v; want %d", len(evs), err, n/5)
	}
	if got := s.c.transactions.Load(); got >= n {
		t.Errorf("%d writes took %d transactions: they were not grouped", n+n/5, got)
	}
}

// TestGroupCommitCancelled: a write whose context ends while it waits is not run, and its
// caller learns so; Close answers writes submitted after it.
func TestGroupCommitCancelled(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	release := holdWriter(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := s.AppendEvent(ctx, state.Event{Stack: "s", LogicalID: "first"}) // taken, waits for the writer
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for s.c.queued() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	go func() {
		_, err := s.AppendEvent(ctx, state.Event{Stack: "s", LogicalID: "second"}) // queued behind it
		done <- err
	}()
	cancel()
	release()
	for range 2 {
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled AppendEvent: %v", err)
		}
	}
	evs, err := s.ListEvents(t.Context(), "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.LogicalID == "second" {
			t.Error("a write cancelled while it waited was stored")
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendEvent(t.Context(), state.Event{Stack: "s"}); !errors.Is(err, errClosed) {
		t.Errorf("AppendEvent after Close: %v, want errClosed", err)
	}
}

// TestGroupCommitSurvivesKill: a child process appends from many goroutines and prints each
// step once its Append returned, then dies by SIGKILL mid-stream. On re-Open every step it
// printed is there, with its resource row; nothing is there twice; and no journal entry is
// there without its row, nor a row without its entry.
func TestGroupCommitSurvivesKill(t *testing.T) {
	if path := os.Getenv("CAIRN_SQLITE_GROUP_KILL_CHILD"); path != "" {
		s, err := Open(path, testOpts)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		var mu sync.Mutex
		for w := range 16 {
			go func() {
				for i := 0; ; i++ {
					name := fmt.Sprintf("W%dI%d", w, i)
					e := state.JournalEntry{Operation: "op", Stack: "s", Step: "create/" + name, Phase: state.End}
					if _, err := s.Append(context.Background(), e, state.Write{Put: &state.Resource{Name: name, Type: "T"}}); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(2)
					}
					mu.Lock()
					fmt.Println(name)
					mu.Unlock()
				}
			}()
		}
		select {}
	}
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestGroupCommitSurvivesKill$")
	cmd.Env = append(os.Environ(), "CAIRN_SQLITE_GROUP_KILL_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < 2000 {
		acked[sc.Text()] = true
	}
	_ = cmd.Process.Kill() // while the writers are still writing
	for sc.Scan() {        // what the child had printed before it died was acknowledged too
		acked[sc.Text()] = true
	}
	_ = cmd.Wait()
	if len(acked) < 2000 {
		t.Fatalf("the child acknowledged only %d appends", len(acked))
	}
	s := open(t, path)
	j, err := s.ListJournal(t.Context(), "op")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ListResources(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	entries, rows := map[string]int{}, map[string]bool{}
	for _, e := range j {
		entries[strings.TrimPrefix(e.Step, "create/")]++
	}
	for _, r := range res {
		rows[r.Name] = true
	}
	for name := range acked {
		if entries[name] != 1 || !rows[name] {
			t.Errorf("acknowledged %s: %d journal entries, row %v; want 1 and a row", name, entries[name], rows[name])
		}
	}
	for name, n := range entries {
		if n != 1 || !rows[name] {
			t.Errorf("stored %s: %d journal entries, row %v; want 1 and a row", name, n, rows[name])
		}
	}
	if len(rows) != len(entries) {
		t.Errorf("%d rows for %d journal entries", len(rows), len(entries))
	}
	t.Logf("%d appends acknowledged, %d stored", len(acked), len(entries))
}
