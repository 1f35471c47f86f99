package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
)

// syncBuffer is a strings.Builder safe to read while the CLI writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// TestRunServer serves with the real app until the context ends, as on SIGINT.
func TestRunServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
		Getenv: func(k string) string { return map[string]string{"CAIRN_LISTEN": "127.0.0.1:0"}[k] }}
	done := make(chan int)
	go func() { done <- Run(ctx, []string{"server", "--dir", t.TempDir(), "--token", "secret"}, env) }()

	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; {
		select {
		case code := <-done:
			t.Fatalf("server ended early: exit %d, stderr:\n%s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if s, ok := strings.CutPrefix(stdout.String(), "cairn is serving on "); ok && strings.HasSuffix(s, "\n") {
			url = strings.TrimSpace(s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving line; stdout %q, stderr:\n%s", stdout.String(), stderr.String())
		}
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/stacks", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /v1/stacks with --token: %s", resp.Status)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after the context ended, stderr:\n%s", code, stderr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("server did not stop")
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Errorf("stderr line is not JSON: %q", line)
		}
	}
}

func TestRunServerFlags(t *testing.T) {
	var got app.Config
	env := Env{Stderr: new(strings.Builder),
		Getenv: func(k string) string {
			return map[string]string{"CAIRN_PUBLIC_URL": "http://env", "CAIRN_REGION": "env-region", "CAIRN_TOKEN": "tok"}[k]
		},
		Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
			got = cfg
			return nil, context.DeadlineExceeded
		}}
	code := Run(context.Background(), []string{"server", "--region", "flag-region", "--no-auth", "--tls-listen", ":8443",
		"--tls-cert", "c.pem", "--tls-key", "k.pem", "--account-id", "42", "--dir", "/d"}, env)
	want := app.Config{Dir: "/d", Listen: "127.0.0.1:8080", PublicURL: "http://env", TLSListen: ":8443", TLSCert: "c.pem",
		TLSKey: "k.pem", Token: "tok", NoAuth: true, Region: "flag-region", AccountID: "42", ResponseNotice: time.Minute}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Logger" }, cmp.Ignore())); diff != "" {
		t.Errorf("flags win over the environment, which wins over defaults: -want +got:\n%s", diff)
	}
	if code != 1 {
		t.Errorf("a failed start: exit %d, want 1", code)
	}

	env.Stderr = new(strings.Builder)
	code = Run(context.Background(), []string{"server", "--tls-cert", "c.pem"}, env)
	if want := "error: --tls-cert and --tls-key go together\nRun 'cairn --help' for usage.\n"; code != 2 || env.Stderr.(*strings.Builder).String() != want {
		t.Errorf("exit %d, stderr %q", code, env.Stderr)
	}
}
