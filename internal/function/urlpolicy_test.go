package function

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/cairn-dev/cairn/internal/egress"
)

func newPolicyManager(t *testing.T, allow []string, multiTenant bool) *Manager {
	t.Helper()
	pol, err := egress.New(allow, multiTenant)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Store: &memStore{m: map[string]Definition{}}, Dir: t.TempDir(), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestURLFunctionPolicy: url functions reach only what the service-token policy allows: a
// URL refused by its host alone is a 400 at create, one refused once resolved fails the
// invocation without reaching the endpoint, and a listed one works.
func TestURLFunctionPolicy(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	ctx := context.Background()

	t.Run("TenantsRefuseAtCreate", func(t *testing.T) {
		m := newPolicyManager(t, nil, true)
		for url, want := range map[string]string{
			"http://169.254.169.254/latest/meta-data/": "link-local",
			srv.URL + "/":                      "loopback",
			"http://metadata.google.internal/": "metadata",
		} {
			_, err := m.Create(ctx, Definition{Name: "probe", Kind: KindURL, URL: url}, nil)
			var ie *InvalidError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
				t.Errorf("Create(%s) = %v, want an InvalidError containing %q", url, err, want)
			}
		}
	})
	t.Run("RefusedWhenDialled", func(t *testing.T) {
		m := newPolicyManager(t, []string{"10.0.0.0/8"}, false)
		if _, err := m.Create(ctx, Definition{Name: "rebound", Kind: KindURL, URL: "http://localhost:" + port + "/"}, nil); err != nil {
			t.Fatalf("Create: %v (a name may resolve into the listed CIDR: it is decided when dialling)", err)
		}
		before := hits.Load()
		r, err := m.Invoke(ctx, "rebound", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Error == nil || r.Error.Type != "Http.Refused" || strings.Contains(r.Error.Message, "127.0.0.1") {
			t.Errorf("invoke: %+v, want Http.Refused without the resolved address", r.Error)
		}
		if hits.Load() != before {
			t.Error("the endpoint was reached")
		}
	})
	t.Run("Listed", func(t *testing.T) {
		m := newPolicyManager(t, []string{"127.0.0.1"}, true)
		if _, err := m.Create(ctx, Definition{Name: "ok", Kind: KindURL, URL: srv.URL + "/"}, nil); err != nil {
			t.Fatal(err)
		}
		r, err := m.Invoke(ctx, "ok", []byte(`{}`))
		if err != nil || r.Error != nil || string(r.Payload) != `{"ok":true}` {
			t.Errorf("invoke: %s %+v %v", r.Payload, r.Error, err)
		}
	})
}

// TestURLFunctionErrorExcerpt: a failing endpoint's 1 MB answer full of control characters is
// quoted as a short, clean excerpt.
func TestURLFunctionErrorExcerpt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(strings.Repeat("\x1b]0;pwned\x07\x00\u202e", 1<<20/14)))
	}))
	defer srv.Close()
	m := newManager(t)
	if _, err := m.Create(context.Background(), Definition{Name: "bad", Kind: KindURL, URL: srv.URL}, nil); err != nil {
		t.Fatal(err)
	}
	r, err := m.Invoke(context.Background(), "bad", []byte(`{}`))
	if err != nil || r.Error == nil || r.Error.Type != "Http.Status" {
		t.Fatalf("invoke: %+v, %v", r.Error, err)
	}
	msg := r.Error.Message
	if !strings.HasPrefix(msg, "the endpoint answered 502 Bad Gateway: ") || !strings.HasSuffix(msg, `…"`) ||
		len(msg) > len("the endpoint answered 502 Bad Gateway: ")+egress.ExcerptBytes+len(`"…"`) {
		t.Errorf("message is %d bytes: %q", len(msg), msg)
	}
	for _, c := range msg {
		if unicode.IsControl(c) || c == '\u202e' {
			t.Fatalf("message %q keeps control character %U", msg, c)
		}
	}
}
