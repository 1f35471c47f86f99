package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// These tests use generous deadlines only to fail instead of hanging; they assert order of
// events, never timing.

func TestEventsLongPollWakesOnNotify(t *testing.T) {
	eng := &fakeEngine{}
	var calls atomic.Int32
	queried := make(chan struct{}, 10)
	eng.EventsFn = func(_ context.Context, stack string, after int64, _ int) ([]api.Event, error) {
		n := calls.Add(1)
		queried <- struct{}{}
		if n < 2 {
			return nil, nil // nothing yet
		}
		return []api.Event{{Seq: after + 1, Stack: stack, Status: "CREATE_IN_PROGRESS", Timestamp: t0}}, nil
	}
	h := New(Config{Engine: eng}).Handler()

	got := make(chan answer, 1)
	go func() {
		a, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?after=5&wait=60s"})
		got <- a
	}()
	<-queried // the first, empty query happened; the handler now waits for a notification
	select {
	case a := <-got:
		t.Fatalf("the long poll answered before any event: %v", a)
	default:
	}
	eng.fire()
	select {
	case a := <-got:
		want := answer{Status: 200, Body: js(t, `{"events":[{"seq":6,"stack":"demo","logicalId":"","type":"","status":"CREATE_IN_PROGRESS","timestamp":"2026-01-02T03:04:05Z"}]}`)}
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("events after a notification: -want +got:\n%s", diff)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the long poll did not answer after a notification")
	}
}

func TestEventsLongPollTimesOut(t *testing.T) {
	eng := &fakeEngine{EventsFn: func(context.Context, string, int64, int) ([]api.Event, error) { return nil, nil }}
	h := New(Config{Engine: eng}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?after=5&wait=10ms"})
	want := answer{Status: 200, Body: js(t, `{"events":[]}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a long poll that times out answers an empty list: -want +got:\n%s", diff)
	}
}

func TestEventsLongPollEndsWithRequest(t *testing.T) {
	eng := &fakeEngine{EventsFn: func(context.Context, string, int64, int) ([]api.Event, error) { return nil, nil }}
	h := New(Config{Engine: eng}).Handler()
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, "GET", "/v1/stacks/demo/events?wait=60s", nil)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { h.ServeHTTP(rec, req); close(done) }()
	cancel() // a client going away or the server shutting down
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the long poll outlived its request")
	}
}

func TestEventsWithoutWaitAnswersAtOnce(t *testing.T) {
	eng := &fakeEngine{EventsFn: func(context.Context, string, int64, int) ([]api.Event, error) { return nil, nil }}
	h := New(Config{Engine: eng}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo/events"})
	if diff := cmp.Diff(answer{Status: 200, Body: js(t, `{"events":[]}`)}, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestOperationLongPoll(t *testing.T) {
	finish := make(chan struct{})
	var gotDeadline atomic.Bool
	eng := &fakeEngine{WaitFn: func(ctx context.Context, id string) (api.Operation, error) {
		_, ok := ctx.Deadline()
		gotDeadline.Store(ok)
		select {
		case <-finish:
			return api.Operation{ID: id, Status: "succeeded", StartedAt: t0, EndedAt: t0}, nil
		case <-ctx.Done():
			return api.Operation{ID: id, Status: "running", StartedAt: t0}, nil
		}
	}}
	h := New(Config{Engine: eng}).Handler()

	t.Run("TimesOutRunning", func(t *testing.T) {
		got, _ := do(t, h, call{method: "GET", path: "/v1/operations/op-1?wait=10ms"})
		want := answer{Status: 200, Body: js(t, `{"id":"op-1","stack":"","kind":"","status":"running","startedAt":"2026-01-02T03:04:05Z"}`)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("-want +got:\n%s", diff)
		}
		if !gotDeadline.Load() {
			t.Error("Engine.Wait got a context without deadline")
		}
	})
	t.Run("AnswersWhenFinished", func(t *testing.T) {
		got := make(chan answer, 1)
		go func() {
			a, _ := do(t, h, call{method: "GET", path: "/v1/operations/op-1?wait=60s"})
			got <- a
		}()
		close(finish)
		select {
		case a := <-got:
			want := answer{Status: 200, Body: js(t, `{"id":"op-1","stack":"","kind":"","status":"succeeded","startedAt":"2026-01-02T03:04:05Z","endedAt":"2026-01-02T03:04:05Z"}`)}
			if diff := cmp.Diff(want, a); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the long poll did not answer when the operation finished")
		}
	})
}

func TestOperationLongPollStoreCallCutShort(t *testing.T) {
	// Engine.Wait can fail with the context's error when the wait ends inside a store call;
	// the server then answers with the operation as it is.
	eng := &fakeEngine{
		WaitFn: func(ctx context.Context, _ string) (api.Operation, error) {
			<-ctx.Done()
			return api.Operation{}, ctx.Err()
		},
		OperationFn: func(_ context.Context, id string) (api.Operation, error) {
			return api.Operation{ID: id, Status: "running", StartedAt: t0}, nil
		},
	}
	h := New(Config{Engine: eng}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/operations/op-1?wait=5ms"})
	want := answer{Status: http.StatusOK, Body: js(t, `{"id":"op-1","stack":"","kind":"","status":"running","startedAt":"2026-01-02T03:04:05Z"}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

func TestParseWait(t *testing.T) {
	cases := map[string]struct {
		in   string
		want time.Duration
	}{
		"Duration": {in: "30s", want: 30 * time.Second},
		"Seconds":  {in: "15", want: 15 * time.Second},
		"Zero":     {in: "0", want: 0},
		"Capped":   {in: "10m", want: MaxWait},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseWait(tc.in)
			if err != nil {
				t.Fatalf("parseWait(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("parseWait(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestCloseEndsLongPolls(t *testing.T) {
	eng := &fakeEngine{
		EventsFn: func(context.Context, string, int64, int) ([]api.Event, error) { return nil, nil },
		WaitFn: func(ctx context.Context, id string) (api.Operation, error) {
			<-ctx.Done()
			return api.Operation{ID: id, Status: "running", StartedAt: t0}, nil
		},
	}
	srv := New(Config{Engine: eng})
	h := srv.Handler()
	got := make(chan answer, 2)
	for _, path := range []string{"/v1/stacks/demo/events?wait=60s", "/v1/operations/op-1?wait=60s"} {
		go func() {
			a, _ := do(t, h, call{method: "GET", path: path})
			got <- a
		}()
	}
	srv.Close()
	for range 2 {
		select {
		case a := <-got:
			if a.Status != http.StatusOK {
				t.Errorf("a long poll ended by Close answered %v, want 200", a)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Close did not end a long poll")
		}
	}
}

// TestEventsLatest: events?latest=true answers only the newest event (a follower's starting
// point, without the stack's whole history), [] when there is none, and refuses after or wait.
func TestEventsLatest(t *testing.T) {
	var evs []api.Event
	eng := &fakeEngine{EventsFn: func(context.Context, string, int64, int) ([]api.Event, error) { return evs, nil }}
	h := New(Config{Engine: eng}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?latest=true"})
	if diff := cmp.Diff(answer{Status: 200, Body: js(t, `{"events":[]}`)}, got); diff != "" {
		t.Errorf("no events: -want +got:\n%s", diff)
	}
	evs = []api.Event{{Seq: 3, Stack: "demo", Status: "CREATE_IN_PROGRESS", Timestamp: t0},
		{Seq: 9, Stack: "demo", Status: "CREATE_COMPLETE", Timestamp: t0}}
	got, _ = do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?latest=true"})
	want := answer{Status: 200, Body: js(t, `{"events":[{"seq":9,"stack":"demo","logicalId":"","type":"","status":"CREATE_COMPLETE","timestamp":"2026-01-02T03:04:05Z"}]}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latest: -want +got:\n%s", diff)
	}
	for _, q := range []string{"latest=true&after=3", "latest=true&wait=5s", "latest=yes"} {
		if got, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?" + q}); got.Status != 400 {
			t.Errorf("events?%s: status %d, want 400", q, got.Status)
		}
	}
}

// TestStackAttributesFalse: stacks/{name}?attributes=false answers the stack with its
// resources but without their attributes; any value but true or false is refused.
func TestStackAttributesFalse(t *testing.T) {
	eng := &fakeEngine{StackFn: func(context.Context, string) (api.Stack, error) {
		return api.Stack{Name: "demo", Status: "CREATE_COMPLETE", Resources: []api.Resource{
			{LogicalID: "a", Type: "t", Attributes: map[string]any{"id": "x"}}}}, nil
	}}
	h := New(Config{Engine: eng}).Handler()
	resource := func(a answer) map[string]any {
		t.Helper()
		body, _ := a.Body.(map[string]any)
		list, _ := body["resources"].([]any)
		if a.Status != 200 || len(list) != 1 {
			t.Fatalf("answer %+v: want 200 and one resource", a)
		}
		r, _ := list[0].(map[string]any)
		return r
	}
	full, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo"})
	brief, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo?attributes=false"})
	if r := resource(full); r["attributes"] == nil {
		t.Errorf("full: %v, want its attributes", r)
	}
	if r := resource(brief); r["attributes"] != nil || r["logicalId"] != "a" {
		t.Errorf("attributes=false: %v, want resource a without attributes", r)
	}
	if got, _ := do(t, h, call{method: "GET", path: "/v1/stacks/demo?attributes=no"}); got.Status != 400 {
		t.Errorf("attributes=no: status %d, want 400", got.Status)
	}
}
