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
	srv := NewServer(providerbin.Time(t), 0, nil)
	srv.Reuse = true
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create := func() {
		p := tfplugin.NewV5(NewConn(ts.URL, Options{}), tfplugin.Options{Name: "time"})
		if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal}); err != nil || resp.Diagnostics.HasErrors() {
			t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
		}
		s, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_static"})
		if err != nil {
			t.Fatal(err)
		}
		attrs := map[string]cty.Value{}
		for n, at := range s.ImpliedType.AttributeTypes() {
			attrs[n] = cty.NullVal(at)
		}
		cr, err := p.Create(ctx, provider.CreateRequest{Resource: provider.Resource{Type: "time_static"}, Props: cty.ObjectVal(attrs)})
		if err != nil || cr.Diagnostics.HasErrors() || cr.ID == "" {
			t.Fatalf("Create: %+v %v", cr, err)
		}
	}
	create()
	srv.mu.Lock()
	n := len(srv.sessions)
	srv.mu.Unlock()
	// Schema and validation calls carry no configuration: one session key without, one with.
	if n != 2 {
		t.Errorf("%d sessions after one provider's calls, want 2 (unconfigured and configured)", n)
	}
	create()
	srv.mu.Lock()
	n = len(srv.sessions)
	srv.mu.Unlock()
	if n != 4 {
		t.Errorf("%d sessions after a second provider's calls, want 4", n)
	}
}
