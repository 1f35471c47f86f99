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

// TestReuseKillsInFlightCall: with Reuse, a session's process is reaped when its last
// call *started* more than sessionIdle ago, even while that call is still running. Here a
// time_sleep create (3 s) is in flight; its session's last is back-dated by 2 minutes (what a
// create running for 61 s looks like) and an unrelated session's request arrives: the sweep
// kills the process under the running create.
func TestReuseKillsInFlightCall(t *testing.T) {
	srv := NewServer(providerbin.Time(t), 0, nil)
	srv.Reuse = true
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := tfplugin.NewV5(NewConn(ts.URL, Options{}), tfplugin.Options{Name: "time"})
	if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal}); err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
	}
	s, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_sleep"})
	if err != nil {
		t.Fatal(err)
	}
	attrs := map[string]cty.Value{}
	for n, at := range s.ImpliedType.AttributeTypes() {
		attrs[n] = cty.NullVal(at)
	}
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
