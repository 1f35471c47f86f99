package cli

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/app"
	"github.com/cairn-dev/cairn/internal/client"
)

// runEnv runs the CLI with env as its whole environment.
func runEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
		Getenv: func(k string) string { return env[k] }})
	return result{code, stdout.String(), stderr.String()}
}

// shortRetry makes the client give up after three quick tries, for the length of t.
func shortRetry(t *testing.T) {
	old := retry
	retry = client.Retry{Attempts: 3, Initial: 10 * time.Millisecond}
	t.Cleanup(func() { retry = old })
}

// TestServerDown: nothing listens at --server: the message names the URL, the cause and
// what to do, and exit 1.
func TestServerDown(t *testing.T) {
	shortRetry(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	got := runEnv(t, nil, "stacks", "--server", url)
	want := "error: cannot reach the cairn server at " + url + ": connection refused (tried 3 times) — " +
		"is `cairn server` running? set --server or CAIRN_SERVER\n"
	if got.Code != 1 || got.Stderr != want {
		t.Errorf("stacks against a closed port: exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", got.Code, got.Stderr, want)
	}
}

// TestServerURLWithoutScheme: host:port alone is a usage error that shows the form wanted.
func TestServerURLWithoutScheme(t *testing.T) {
	for _, server := range []string{"localhost:8443", "cairn.example.com", "ftp://host"} {
		got := runEnv(t, map[string]string{"CAIRN_SERVER": server}, "stacks")
		if got.Code != 2 || !strings.Contains(got.Stderr, "error: --server must be a URL such as https://host:8443, not \""+server+"\"") {
			t.Errorf("CAIRN_SERVER=%s: exit %d, stderr:\n%s", server, got.Code, got.Stderr)
		}
	}
}

// TestUntrustedCA: an https server whose CA the machine does not trust: the message suggests
// --ca-file, and with --ca-file (or CAIRN_CA_FILE) naming the CA's PEM the command works.
func TestUntrustedCA(t *testing.T) {
	shortRetry(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"stacks":[{"name":"web","status":"CREATE_COMPLETE"}]}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	got := runEnv(t, nil, "stacks", "--server", srv.URL)
	if got.Code != 1 || !strings.Contains(got.Stderr, "cannot reach the cairn server at "+srv.URL+": its TLS certificate is signed by an authority this machine does not trust") ||
		!strings.Contains(got.Stderr, "--ca-file FILE (or CAIRN_CA_FILE)") {
		t.Errorf("without --ca-file: exit %d, stderr:\n%s", got.Code, got.Stderr)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]result{
		"flag": runEnv(t, nil, "stacks", "--server", srv.URL, "--ca-file", ca),
		"env":  runEnv(t, map[string]string{"CAIRN_SERVER": srv.URL, "CAIRN_CA_FILE": ca}, "stacks"),
	} {
		if got.Code != 0 || !strings.Contains(got.Stdout, "web") {
			t.Errorf("with the CA (%s): exit %d, stdout:\n%s\nstderr:\n%s", name, got.Code, got.Stdout, got.Stderr)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not a certificate"), 0o600)
	if got := runEnv(t, nil, "stacks", "--server", srv.URL, "--ca-file", bad); got.Code != 1 || !strings.Contains(got.Stderr, "holds no PEM certificate") {
		t.Errorf("--ca-file without a certificate: exit %d, stderr:\n%s", got.Code, got.Stderr)
	}
}

// TestUnknownStack: every command reading a stack that does not exist, against a real cairn
// (in-process), says so in one stable sentence.
func TestUnknownStack(t *testing.T) {
	env := map[string]string{"CAIRN_DIR": filepath.Join(t.TempDir(), ".cairn")}
	want := "error: stack \"nope\" does not exist (`cairn stacks` lists the stacks)\n"
	for _, cmd := range []string{"describe", "events", "outputs", "delete", "state pull"} {
		args := append(strings.Fields(cmd), "--stack", "nope")
		got := runEnv(t, env, args...)
		if got.Code != 1 || got.Stderr != want {
			t.Errorf("cairn %s: exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", strings.Join(args, " "), got.Code, got.Stderr, want)
		}
	}
}

func TestMissingStack(t *testing.T) {
	for msg, want := range map[string]string{
		"cannot find stack web: not found": "web",
		"cannot find stack a-b":            "a-b",
		"no operation op1":                 "",
		"cannot find stack ":               "",
	} {
		if got, ok := missingStack(msg); got != want || ok != (want != "") {
			t.Errorf("missingStack(%q) = %q, %v; want %q", msg, got, ok, want)
		}
	}
}
