package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// freeAddr returns a loopback address nothing listens on (for now).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestRetryWhileServerStarts: a GET sent while nothing listens is tried again until the
// server comes up; the answer is then the server's.
func TestRetryWhileServerStarts(t *testing.T) {
	addr := freeAddr(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"stacks":[{"name":"web"}]}`))
	}))
	started := make(chan struct{})
	go func() {
		defer close(started)
		time.Sleep(300 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv.Listener = l
		srv.Start()
	}()
	defer func() { <-started; srv.Close() }()
	c := New("http://"+addr, "", nil, WithRetry(Retry{Attempts: 10, Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}))
	stacks, err := c.Stacks(context.Background())
	if err != nil || len(stacks) != 1 || stacks[0].Name != "web" {
		t.Fatalf("Stacks() = %v, %v; want [web] once the server is up", stacks, err)
	}
}

// TestRetryBounded: with nothing listening, a GET gives up after Attempts tries with an
// *UnreachableError that still is ECONNREFUSED; a POST (not idempotent) is sent once.
func TestRetryBounded(t *testing.T) {
	addr := freeAddr(t)
	c := New("http://"+addr, "", nil, WithRetry(Retry{Attempts: 3, Initial: 10 * time.Millisecond}))
	for name, call := range map[string]struct {
		fn   func() error
		want int
	}{
		"GET":  {func() error { _, err := c.Stack(context.Background(), "web"); return err }, 3},
		"POST": {func() error { _, err := c.Deploy(context.Background(), "web", api.DeployRequest{}); return err }, 1},
		"DELETE": {func() error {
			_, err := c.Delete(context.Background(), "web", api.DeleteRequest{})
			return err
		}, 1},
	} {
		err := call.fn()
		var ue *UnreachableError
		if !errors.As(err, &ue) || ue.Attempts != call.want || !errors.Is(err, syscall.ECONNREFUSED) || ue.URL != "http://"+addr {
			t.Errorf("%s: err = %#v (%v); want *UnreachableError after %d tries, ECONNREFUSED", name, err, err, call.want)
		}
	}
}

// TestNoRetryOnHTTPError: an HTTP error answer is the server talking; it is not retried.
func TestNoRetryOnHTTPError(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := New(srv.URL, "", nil, WithRetry(Retry{Attempts: 5, Initial: time.Millisecond}))
	_, err := c.Stacks(context.Background())
	var ae *api.Error
	if !errors.As(err, &ae) || n.Load() != 1 {
		t.Fatalf("Stacks() = %v after %d requests; want one request and an *api.Error", err, n.Load())
	}
}

// TestRetryStopsWithContext: a cancelled context ends the waiting at once, with its error.
func TestRetryStopsWithContext(t *testing.T) {
	c := New("http://"+freeAddr(t), "", nil, WithRetry(Retry{Attempts: 100, Initial: time.Second}))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Stacks(ctx)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("Stacks() = %v after %s; want an error within the context's 100ms", err, time.Since(start))
	}
}

func TestRetryWait(t *testing.T) {
	r := Retry{Initial: 100 * time.Millisecond, Max: time.Second}
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, r.wait(n))
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("wait = %v; want %v ms", got, want)
		}
	}
}
