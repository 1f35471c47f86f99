package httpfunc

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/tfplugin"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestReuse: with Reuse, the calls of one session share one configured process, and another
// session gets its own.
func TestReuse(t *testing.T) {
	srv, ts := reuseServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := func() {
		p, attrs := configuredTime(ctx, t, ts.URL, "time_static")
		cr, err := p.Create(ctx, provider.CreateRequest{Resource: provider.Resource{Type: "time_static"}, Props: cty.ObjectVal(attrs)})
		if err != nil || cr.Diagnostics.HasErrors() || cr.ID == "" {
			t.Fatalf("Create: %+v %v", cr, err)
		}
	}
	sessions := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.sessions)
	}
	create()
	// Schema and validation calls carry no configuration: one session key without, one with.
	if n := sessions(); n != 2 {
		t.Errorf("%d sessions after one provider's calls, want 2 (unconfigured and configured)", n)
	}
	create()
	if n := sessions(); n != 4 {
		t.Errorf("%d sessions after a second provider's calls, want 4", n)
	}
}

// TestReuseKeepsInFlightCall: the idle sweep never ends a session with a call running. A
// time_sleep create (3 s) is in flight; its session's last use is back-dated by 2 minutes
// (what a create running for 61 s would look like) and another session's request arrives,
// which runs the sweep: the create still finishes.
func TestReuseKeepsInFlightCall(t *testing.T) {
	srv, ts := reuseServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, attrs := configuredTime(ctx, t, ts.URL, "time_sleep")
	attrs["create_duration"] = cty.StringVal("3s")
	done := make(chan error, 1)
	go func() {
		cr, err := p.Create(ctx, provider.CreateRequest{Resource: provider.Resource{Type: "time_sleep"}, Props: cty.ObjectVal(attrs)})
		if err == nil && cr.Diagnostics.HasErrors() {
			err = cr.Diagnostics.Err()
		}
		done <- err
	}()
	time.Sleep(time.Second) // the create is sleeping in the provider
	srv.mu.Lock()
	for _, ss := range srv.sessions {
		ss.last = ss.last.Add(-2 * time.Minute)
	}
	srv.mu.Unlock()
	other := tfplugin.NewV5(NewConn(ts.URL, Options{}), tfplugin.Options{Name: "time"})
	if _, err := other.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_static"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("an in-flight create was killed by another session's idle sweep: %v", err)
	}
}

// reuseServer serves the time provider with Reuse.
func reuseServer(t *testing.T) (*Server, *httptest.Server) {
	srv := NewServer(providerbin.Time(t), 0, nil)
	srv.Reuse = true
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, ts
}

// configuredTime is a time provider client over ts, configured, with the null configuration
// of typ to fill in.
func configuredTime(ctx context.Context, t *testing.T, url, typ string) (*tfplugin.Provider, map[string]cty.Value) {
	t.Helper()
	p := tfplugin.NewV5(NewConn(url, Options{}), tfplugin.Options{Name: "time"})
	if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal}); err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
	}
	s, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	for n, at := range s.ImpliedType.AttributeTypes() {
		attrs[n] = cty.NullVal(at)
	}
	return p, attrs
}
