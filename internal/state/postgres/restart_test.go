package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
)

// TestSurvivesRestart: a store keeps working across a restart of PostgreSQL without being
// opened again (a call may fail while the server is away, with an error, not a panic), and
// what it wrote before is there after.
func TestSurvivesRestart(t *testing.T) {
	ctx := t.Context()
	srv := pgtest.StartServer(t)
	s := open(t, srv.NewDatabase(t))
	if err := s.PutStack(ctx, state.Stack{Name: "s", Status: "CREATE_COMPLETE"}); err != nil {
		t.Fatal(err)
	}
	// Fill the pool with connections that the restart will break.
	fillPool(t, s, 8)

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// While the server is down, a call with a deadline fails at it; one without waits for the
	// server to come back (an operation's journal write rides out a restart).
	short, cancel := context.WithTimeout(ctx, time.Second)
	if _, err := s.StackStatus(short, "s"); err == nil {
		t.Errorf("StackStatus with the server down: no error")
	}
	cancel()
	waited := make(chan error, 1)
	go func() {
		_, err := s.AppendEvent(ctx, state.Event{Stack: "s", Status: "DURING_THE_RESTART"})
		waited <- err
	}()
	time.Sleep(time.Second)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Errorf("an append made while the server was down, which came back within a second: %v", err)
	}
	// The first calls may meet connections that died; within a few, the pool has new ones.
	deadline := time.Now().Add(10 * time.Second)
	failures := 0
	for {
		status, err := s.StackStatus(ctx, "s")
		if err == nil && status == "CREATE_COMPLETE" {
			break
		}
		failures++
		if time.Now().After(deadline) {
			t.Fatalf("StackStatus after the restart: %q, %v", status, err)
		}
	}
	t.Logf("%d calls failed after the restart", failures)
	// From then on, every call succeeds, on every connection of the pool.
	fillPool(t, s, 8)
	if _, err := s.AppendEvent(ctx, state.Event{Stack: "s"}); err != nil {
		t.Errorf("AppendEvent after the restart: %v", err)
	}

	// A restart with no pause: the same again.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := s.ListStacks(ctx, ""); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("ListStacks after the second restart: %v", err)
		}
	}
	fillPool(t, s, 8)
}

// fillPool runs n calls at once, so that the pool holds n connections, and fails on any error.
func fillPool(t *testing.T, s *Store, n int) {
	t.Helper()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := s.pool.Exec(context.Background(), `SELECT pg_sleep(0.05)`)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("a call on the pool: %v", err)
		}
	}
}
