package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/app"
)

// serveForTest runs `cairn server` with args until the test ends and returns its URL.
func serveForTest(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
		Getenv: func(k string) string { return map[string]string{"CAIRN_LISTEN": "127.0.0.1:0"}[k] }}
	done := make(chan int)
	go func() { done <- Run(ctx, append([]string{"server"}, args...), env) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case code := <-done:
			t.Fatalf("server ended early: exit %d, stderr:\n%s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if s, ok := strings.CutPrefix(stdout.String(), "cairn is serving on "); ok && strings.HasSuffix(s, "\n") {
			return strings.TrimSpace(s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving line; stderr:\n%s", stderr.String())
		}
	}
}

// cairnAt runs one CLI command against a server and returns its exit code and output.
func cairnAt(t *testing.T, url, token string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), append(args, "--server", url, "--token", token), env)
	return code, stdout.String(), stderr.String()
}

// TestTokensAndAudit: the server's admin creates a tenant admin, which creates a viewer; the
// viewer reads but cannot cancel or make tokens; revoked, it is refused; `cairn audit` lists
// the changes and refusals.
func TestTokensAndAudit(t *testing.T) {
	dir := t.TempDir()
	url := serveForTest(t, "--dir", dir, "--token", "root-secret")
	code, admin, stderr := cairnAt(t, url, "root-secret", "token", "create", "--tenant", "alpha", "--role", "admin", "--name", "alpha admin")
	admin = strings.TrimSpace(admin)
	if code != 0 || !strings.HasPrefix(admin, "cairn_") || !strings.Contains(stderr, "role admin") {
		t.Fatalf("token create: exit %d, stdout %q, stderr %q", code, admin, stderr)
	}
	code, viewer, _ := cairnAt(t, url, admin, "token", "create", "--role", "viewer")
	viewer = strings.TrimSpace(viewer)
	if code != 0 {
		t.Fatalf("a tenant admin's token create: exit %d", code)
	}
	if code, out, errOut := cairnAt(t, url, viewer, "stacks"); code != 0 {
		t.Errorf("a viewer's stacks: exit %d, %s %s", code, out, errOut)
	}
	if code, _, errOut := cairnAt(t, url, viewer, "cancel", "--stack", "web"); code == 0 || !strings.Contains(errOut, "needs the role deployer") {
		t.Errorf("a viewer's cancel: exit %d, stderr %q; want refused, naming the role", code, errOut)
	}
	if code, _, errOut := cairnAt(t, url, viewer, "token", "create", "--role", "viewer"); code == 0 || !strings.Contains(errOut, "needs the role admin") {
		t.Errorf("a viewer's token create: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := cairnAt(t, url, admin, "token", "create", "--tenant", "beta", "--role", "viewer"); code == 0 || !strings.Contains(errOut, "another tenant") {
		t.Errorf("alpha's admin making beta's token: exit %d, stderr %q", code, errOut)
	}
	code, list, _ := cairnAt(t, url, admin, "token", "list")
	var viewerID string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == "viewer" {
			viewerID = f[0]
		}
	}
	if code != 0 || viewerID == "" || strings.Contains(list, viewer) {
		t.Fatalf("token list: exit %d, no viewer row or a secret in:\n%s", code, list)
	}
	if code, _, errOut := cairnAt(t, url, admin, "token", "revoke", viewerID); code != 0 {
		t.Fatalf("revoke: exit %d %s", code, errOut)
	}
	if code, _, errOut := cairnAt(t, url, viewer, "stacks"); code == 0 || !strings.Contains(errOut, "token") {
		t.Errorf("a revoked token: exit %d, stderr %q; want refused", code, errOut)
	}
	code, audit, _ := cairnAt(t, url, "root-secret", "audit")
	for _, want := range []string{"POST /v1/tokens", "server", "POST /v1/stacks/{name}/cancel", "web", "403", "DELETE /v1/tokens/{id}", viewerID, "alpha"} {
		if !strings.Contains(audit, want) {
			t.Errorf("cairn audit lacks %q:\n%s", want, audit)
		}
	}
	// A tenant's admin reads its own tenant's log only.
	if code, out, _ := cairnAt(t, url, admin, "audit"); code != 0 || strings.Contains(out, "default") {
		t.Errorf("alpha's audit: exit %d, or another tenant's entries:\n%s", code, out)
	}

	// cairn backup copies the running server's state; the copy opens and holds the tokens.
	var stdout, stderr2 syncBuffer
	env := Env{Stdout: &stdout, Stderr: &stderr2, Start: app.Start, Getenv: func(string) string { return "" }}
	to := filepath.Join(t.TempDir(), "backup")
	if code := Run(context.Background(), []string{"backup", "--dir", dir, "--to", to}, env); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, stderr2.String())
	}
	if _, err := os.Stat(filepath.Join(to, "state.db")); err != nil || !strings.Contains(stdout.String(), "state.db") {
		t.Fatalf("backup wrote %q: %v", stdout.String(), err)
	}
	if _, err := os.Stat(filepath.Join(to, "token")); err == nil {
		t.Error("the backup holds the server's token without --include-credentials")
	}
	if code := Run(context.Background(), []string{"backup", "--dir", dir, "--to", filepath.Join(dir, "bk")}, env); code == 0 {
		t.Error("a backup into the directory it copies: want refused")
	}
	// Restored (the backup beside the same secrets key), the tokens and the audit log are there.
	restored := filepath.Join(filepath.Dir(dir), "restored")
	if err := os.Rename(to, restored); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(dir + ".secrets.key"); err == nil {
		_ = os.WriteFile(restored+".secrets.key", data, 0o600)
	}
	url2 := serveForTest(t, "--dir", restored, "--token", "root-secret")
	if code, out, errOut := cairnAt(t, url2, admin, "token", "list"); code != 0 || !strings.Contains(out, viewerID) {
		t.Errorf("the restored server's tokens: exit %d %s %s", code, out, errOut)
	}
}
