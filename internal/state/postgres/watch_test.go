package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
)

// watch runs s.Watch until the test ends and returns a channel that receives on every wake.
func watch(t *testing.T, s *Store) (wakes <-chan struct{}, stopped <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	ch, done := make(chan struct{}, 1024), make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, func() { ch <- struct{}{} })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return ch, done
}

// wantWake fails unless a wake arrives within 10s.
func wantWake(t *testing.T, wakes <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-wakes:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake after %s", after)
	}
}

// drain empties wakes.
func drain(wakes <-chan struct{}) {
	for {
		select {
		case <-wakes:
		default:
			return
		}
	}
}

// TestWatch: a replica's Watch wakes on the events, stack rows and operation changes the other
// replica writes.
func TestWatch(t *testing.T) {
	ctx := t.Context()
	a, b := replicas(t)
	wakes, _ := watch(t, b)
	wantWake(t, wakes, "listening started")

	steps := []struct {
		what  string
		write func() error
	}{
		{"AppendEvent", func() error {
			_, err := a.AppendEvent(ctx, state.Event{Stack: "s", Status: "CREATE_IN_PROGRESS"})
			return err
		}},
		{"PutStack", func() error { return a.PutStack(ctx, state.Stack{Name: "s", Status: "CREATE_IN_PROGRESS"}) }},
		{"StartOperation", func() error {
			return a.StartOperation(ctx, state.Operation{ID: "op", Stack: "s", Owner: "a", LeaseExpires: time.Now().Add(time.Hour)})
		}},
		{"Append with a Stack", func() error {
			_, err := a.Append(ctx, state.JournalEntry{Operation: "op", Stack: "s", Step: "x", Fence: "a"},
				state.Write{Stack: &state.Stack{Name: "s", Status: "UPDATE_IN_PROGRESS"}})
			return err
		}},
		{"FinishOperation", func() error { return a.FinishOperation(ctx, "op", state.Succeeded, "", time.Now()) }},
		{"DeleteStack", func() error { return a.DeleteStack(ctx, "s") }},
	}
	for _, st := range steps {
		drain(wakes)
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		wantWake(t, wakes, st.what)
	}
}

// TestWatchEnds: Watch returns when its context ends, and when its store is closed.
func TestWatchEnds(t *testing.T) {
	url := pgtest.Start(t)
	s := open(t, url)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Watch(ctx, func() {}); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}

	s2, err := Open(t.Context(), url, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	_, stopped := watch(t, s2)
	s2.Close()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after Close")
	}
}

// TestWatchReconnects: when PostgreSQL restarts under a Watch, it connects again, wakes (events
// may have been missed), and goes on waking on the other replica's events.
func TestWatchReconnects(t *testing.T) {
	ctx := t.Context()
	srv := pgtest.StartServer(t)
	url := srv.NewDatabase(t)
	a, b := open(t, url), open(t, url)
	wakes, _ := watch(t, b)
	wantWake(t, wakes, "listening started")

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	wantWake(t, wakes, "the restart")
	// The writer's pooled connections died with the server: a write may fail once.
	deadline := time.Now().Add(10 * time.Second)
	for {
		drain(wakes)
		_, err := a.AppendEvent(ctx, state.Event{Stack: "s", Status: "CREATE_IN_PROGRESS"})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("AppendEvent after the restart: %v", err)
		}
		t.Logf("AppendEvent right after the restart: %v", err)
	}
	wantWake(t, wakes, "an event appended after the restart")
}

// TestListenResponses: a replica hears, with its RequestId, the first response another saved,
// and not a second one (it stored nothing).
func TestListenResponses(t *testing.T) {
	ctx := t.Context()
	a, b := replicas(t)
	got := make(chan string, 16)
	lctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	started := make(chan struct{}, 16)
	go func() {
		defer close(done)
		b.Listen(lctx, Listeners{Events: func() { started <- struct{}{} }, Response: func(id string) { got <- id }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-started
	if _, _, err := a.PutCustomRequest(ctx, state.CustomRequest{ID: "req-1", Stack: "s", LogicalID: "R", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if first, err := a.SaveCustomResponse(ctx, "req-1", []byte(`{"Status":"SUCCESS"}`), time.Now()); err != nil || !first {
		t.Fatalf("SaveCustomResponse: %v %v", first, err)
	}
	select {
	case id := <-got:
		if id != "req-1" {
			t.Errorf("heard response %q, want req-1", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica did not hear the response")
	}
	if first, _ := a.SaveCustomResponse(ctx, "req-1", []byte(`{"Status":"FAILED"}`), time.Now()); first {
		t.Fatal("a second response was stored")
	}
	select {
	case id := <-got:
		t.Errorf("heard %q for a response that was not stored", id)
	case <-time.After(300 * time.Millisecond):
	}
}
