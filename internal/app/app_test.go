package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/state"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func start(t *testing.T, cfg Config) *App {
	t.Helper()
	a, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return a
}

func get(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func TestStartServesHTTPAndHTTPS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	var logs syncBuffer
	a := start(t, Config{Dir: dir, Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	// The token was created in Dir/token, mode 0600.
	b, err := os.ReadFile(filepath.Join(dir, "token"))
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	if got := strings.TrimSpace(string(b)); got != a.Token() || len(got) != 64 {
		t.Errorf("token file holds %q, App.Token() = %q; want the same 64 hex digits", got, a.Token())
	}
	if st, _ := os.Stat(filepath.Join(dir, "token")); st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, want 0600", st.Mode().Perm())
	}

	type got struct {
		Status int
		Body   string
	}
	check := func(name string, c *http.Client, url, token string, want got) {
		t.Helper()
		status, body := get(t, c, url, token)
		if diff := cmp.Diff(want, got{status, body}); diff != "" {
			t.Errorf("%s: GET %s: -want +got:\n%s", name, url, diff)
		}
	}
	plain := &http.Client{}
	check("health", plain, a.URL()+"/healthz", "", got{200, "ok"})
	check("authed", plain, a.URL()+"/v1/stacks", a.Token(), got{200, `{"stacks":[]}`})
	check("unauthenticated", plain, a.URL()+"/v1/stacks", "", got{401, `{"code":"unauthorized","message":"missing or wrong bearer token"}`})

	// HTTPS with the self-made CA, trusted through CAFile only.
	if !filepath.IsAbs(a.CAFile()) || filepath.Dir(a.CAFile()) != mustAbs(t, filepath.Join(dir, "tls")) {
		t.Errorf("CAFile() = %q, want an absolute path in %s/tls", a.CAFile(), dir)
	}
	pem, err := os.ReadFile(a.CAFile())
	if err != nil {
		t.Fatalf("CA file: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer trusting.CloseIdleConnections()
	if !strings.HasPrefix(a.TLSURL(), "https://localhost:") {
		t.Errorf("TLSURL() = %q, want https://localhost:<port>", a.TLSURL())
	}
	check("https health", trusting, a.TLSURL()+"/healthz", "", got{200, "ok"})
	check("https authed", trusting, a.TLSURL()+"/v1/stacks", a.Token(), got{200, `{"stacks":[]}`})

	for _, want := range []string{"NODE_EXTRA_CA_CERTS=" + a.CAFile(), "SSL_CERT_FILE=" + a.CAFile()} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the start log lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), a.Token()) {
		t.Errorf("the log contains the token:\n%s", logs.String())
	}
}

func TestRestartKeepsTokenAndCA(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0"}
	a1, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	ca1, _ := os.ReadFile(a1.CAFile())
	tok1 := a1.Token()
	if err := a1.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := a1.Shutdown(context.Background()); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
	a2 := start(t, cfg)
	ca2, _ := os.ReadFile(a2.CAFile())
	if a2.Token() != tok1 {
		t.Errorf("the token changed across restarts")
	}
	if !bytes.Equal(ca1, ca2) {
		t.Errorf("the CA changed across restarts")
	}
}

func TestNoAuthOnLoopback(t *testing.T) {
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", NoAuth: true})
	if a.Token() != "" {
		t.Errorf("Token() = %q with NoAuth, want empty", a.Token())
	}
	if a.CAFile() != "" || a.TLSURL() != "" {
		t.Errorf("CAFile() = %q, TLSURL() = %q without TLS, want both empty", a.CAFile(), a.TLSURL())
	}
	if status, body := get(t, &http.Client{}, a.URL()+"/v1/stacks", ""); status != 200 {
		t.Errorf("GET /v1/stacks with NoAuth = %d %s, want 200", status, body)
	}
}

func TestStartRefuses(t *testing.T) {
	cases := map[string]struct {
		reason string
		cfg    Config
		want   string // part of the error
	}{
		"NoAuthOnEveryInterface": {
			reason: "The API must not be open to the network without a token.",
			cfg:    Config{Listen: "0.0.0.0:0", NoAuth: true},
			want:   "--no-auth needs loopback",
		},
		"NoAuthWithPublicTLS": {
			reason: "The TLS listener serves the same API, so it must be loopback too.",
			cfg:    Config{Listen: "127.0.0.1:0", TLSListen: ":0", NoAuth: true},
			want:   "cannot serve without auth on :0",
		},
		"CertWithoutKey": {
			reason: "A certificate needs its key.",
			cfg:    Config{Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0", TLSCert: "cert.pem"},
			want:   "give both a certificate and its key",
		},
		"BadPublicURL": {
			reason: "The public URL must be an absolute http(s) URL.",
			cfg:    Config{Listen: "127.0.0.1:0", PublicURL: "cairn.example:8080"},
			want:   `--public-url "cairn.example:8080"`,
		},
		"BadListen": {
			reason: "A listen address that cannot be bound is reported.",
			cfg:    Config{Listen: "127.0.0.1:notaport"},
			want:   "cannot listen on 127.0.0.1:notaport",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Dir = t.TempDir()
			a, err := Start(context.Background(), tc.cfg)
			if err == nil {
				a.Shutdown(context.Background())
				t.Fatalf("%s\nStart succeeded", tc.reason)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nStart: %v; want an error containing %q", tc.reason, err, tc.want)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"Plain":         {in: "https://cairn.example.com", want: "https://cairn.example.com"},
		"TrailingSlash": {in: "http://10.0.0.5:8080/", want: "http://10.0.0.5:8080"},
		"Prefix":        {in: "https://gw.example/cairn/", want: "https://gw.example/cairn"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := baseURL(tc.in, "--public-url")
			if err != nil || got != tc.want {
				t.Errorf("baseURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// notFoundStore answers every custom-request call with state.ErrNotFound.
type notFoundStore struct{ state.Store }

func (notFoundStore) PutCustomRequest(context.Context, state.CustomRequest) (state.CustomRequest, bool, error) {
	return state.CustomRequest{}, false, state.ErrNotFound
}
func (notFoundStore) MarkCustomRequestSent(context.Context, string) error { return state.ErrNotFound }
func (notFoundStore) GetCustomRequest(context.Context, string) (state.CustomRequest, error) {
	return state.CustomRequest{}, state.ErrNotFound
}
func (notFoundStore) SaveCustomResponse(context.Context, string, []byte, time.Time) (bool, error) {
	return false, state.ErrNotFound
}

func TestCustomResourceStoreMapsNotFound(t *testing.T) {
	s := crStore{notFoundStore{}}
	ctx := context.Background()
	_, _, err1 := s.PutRequest(ctx, customresource.Request{ID: "r"})
	err2 := s.MarkSent(ctx, "r")
	_, err3 := s.GetRequest(ctx, "r")
	_, err4 := s.SaveResponse(ctx, "r", nil, time.Now())
	for i, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, customresource.ErrNotFound) || !errors.Is(err, state.ErrNotFound) {
			t.Errorf("call %d: err = %v, want customresource.ErrNotFound wrapping state.ErrNotFound", i+1, err)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
