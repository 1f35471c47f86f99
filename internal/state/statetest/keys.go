package statetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

// testKey: gen runs only when the key is absent, its error is returned and stores nothing.
func testKey(t *testing.T, s state.Store) {
	ctx := t.Context()
	var calls int
	gen := func(v string) func() ([]byte, error) {
		return func() ([]byte, error) { calls++; return []byte(v), nil }
	}
	errGen := errors.New("no entropy")
	failing := func() ([]byte, error) { calls++; return nil, errGen }

	steps := []struct {
		reason, name string
		gen          func() ([]byte, error)
		want         string
		wantErr      error
		wantCalls    int
	}{
		{"A failing gen's error is returned.", "signing", failing, "", errGen, 1},
		{"A failed gen stored nothing: the next call generates.", "signing", gen("first"), "first", nil, 1},
		{"The stored key wins; gen is not called.", "signing", gen("second"), "first", nil, 0},
		{"The stored key wins over a failing gen.", "signing", failing, "first", nil, 0},
		{"Another name is another key.", "other", gen("other"), "other", nil, 1},
	}
	for i, st := range steps {
		calls = 0
		got, err := s.Key(ctx, st.name, st.gen)
		if !errors.Is(err, st.wantErr) {
			t.Errorf("step %d: %s\nKey(%s): got error %v, want %v", i, st.reason, st.name, err, st.wantErr)
		}
		if string(got) != st.want || calls != st.wantCalls {
			t.Errorf("step %d: %s\nKey(%s) = %q with %d gen calls, want %q with %d", i, st.reason, st.name, got, calls,
				st.want, st.wantCalls)
		}
	}
}

// testKeyConcurrently: callers racing to create a key all get the one stored key.
func testKeyConcurrently(t *testing.T, s state.Store) {
	ctx := t.Context()
	const n = 16
	got := make([][]byte, n)
	var gens atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k, err := s.Key(ctx, "shared", func() ([]byte, error) {
				gens.Add(1)
				return fmt.Appendf(nil, "key-%02d", i), nil
			})
			if err != nil {
				t.Errorf("Key: %v", err)
			}
			got[i] = k
		})
	}
	wg.Wait()
	stored, err := s.Key(ctx, "shared", func() ([]byte, error) { return nil, errors.New("must not be called") })
	must(t, "Key", err)
	for i, k := range got {
		if string(k) != string(stored) {
			t.Errorf("Key from goroutine %d = %q, want the stored %q (gen ran %d times)", i, k, stored, gens.Load())
		}
	}
}

func testCustomRequests(t *testing.T, s state.Store) {
	ctx := t.Context()
	_, err := s.GetCustomRequest(ctx, "missing")
	wantNotFound(t, "GetCustomRequest(missing)", err)
	wantNotFound(t, "MarkCustomRequestSent(missing)", s.MarkCustomRequestSent(ctx, "missing"))
	first, err := s.SaveCustomResponse(ctx, "missing", []byte(`{}`), t0)
	wantNotFound(t, "SaveCustomResponse(missing)", err)
	if first {
		t.Errorf("SaveCustomResponse(missing) reported first = true")
	}

	r := state.CustomRequest{ID: "req-1", Stack: "s", LogicalID: "A", Body: []byte(`{"RequestType":"Create"}`),
		Expires: t0.Add(time.Hour)}
	stored, inserted, err := s.PutCustomRequest(ctx, r)
	must(t, "PutCustomRequest", err)
	if diff := cmp.Diff(r, stored, opts); diff != "" || !inserted {
		t.Errorf("PutCustomRequest of a new request: inserted = %v, want true; -want +got:\n%s", inserted, diff)
	}

	again := r
	again.Body, again.LogicalID = []byte(`{"RequestType":"Delete"}`), "B"
	stored, inserted, err = s.PutCustomRequest(ctx, again)
	must(t, "PutCustomRequest", err)
	if diff := cmp.Diff(r, stored, opts); diff != "" || inserted {
		t.Errorf("PutCustomRequest of a known ID must return the stored row: inserted = %v, want false; -want +got:\n%s",
			inserted, diff)
	}

	must(t, "MarkCustomRequestSent", s.MarkCustomRequestSent(ctx, "req-1"))
	must(t, "MarkCustomRequestSent again", s.MarkCustomRequestSent(ctx, "req-1"))
	r.Sent = true

	at := t0.Add(2 * time.Minute)
	for i, body := range []string{`{"Status":"SUCCESS"}`, `{"Status":"FAILED"}`} {
		first, err := s.SaveCustomResponse(ctx, "req-1", []byte(body), at.Add(time.Duration(i)*time.Minute))
		must(t, "SaveCustomResponse", err)
		if first != (i == 0) {
			t.Errorf("SaveCustomResponse #%d: first = %v, want %v", i+1, first, i == 0)
		}
	}
	r.Response, r.RespondedAt = []byte(`{"Status":"SUCCESS"}`), at
	got, err := s.GetCustomRequest(ctx, "req-1")
	must(t, "GetCustomRequest", err)
	if diff := cmp.Diff(r, got, opts); diff != "" {
		t.Errorf("GetCustomRequest must hold the first response only: -want +got:\n%s", diff)
	}
	wantUTC(t, "GetCustomRequest", got.Expires, got.RespondedAt)
	stored, inserted, err = s.PutCustomRequest(ctx, again)
	must(t, "PutCustomRequest", err)
	if diff := cmp.Diff(r, stored, opts); diff != "" || inserted {
		t.Errorf("PutCustomRequest after a response: inserted = %v, want false; -want +got:\n%s", inserted, diff)
	}
}

// testCustomResponseConcurrently: of responses racing in, exactly one is first and stays.
func testCustomResponseConcurrently(t *testing.T, s state.Store) {
	ctx := t.Context()
	_, _, err := s.PutCustomRequest(ctx, state.CustomRequest{ID: "req", Stack: "s", LogicalID: "A", Body: []byte(`{}`)})
	must(t, "PutCustomRequest", err)
	const n = 16
	firsts := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			first, err := s.SaveCustomResponse(ctx, "req", fmt.Appendf(nil, `{"n":%d}`, i), t0)
			if err != nil {
				t.Errorf("SaveCustomResponse: %v", err)
			}
			firsts[i] = first
		})
	}
	wg.Wait()
	winner := -1
	for i, first := range firsts {
		if first && winner >= 0 {
			t.Errorf("SaveCustomResponse: responses %d and %d were both first", winner, i)
		}
		if first {
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("SaveCustomResponse: none of %d responses was first", n)
	}
	got, err := s.GetCustomRequest(ctx, "req")
	must(t, "GetCustomRequest", err)
	if want := fmt.Sprintf(`{"n":%d}`, winner); string(got.Response) != want {
		t.Errorf("GetCustomRequest().Response = %s, want the first one, %s", got.Response, want)
	}
}
