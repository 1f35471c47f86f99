// Package test runs cairn's kube API as users meet it: `cairn server --kube-listen` with the
// real cairn-kube binary, reached by the real kubectl and a controller-runtime manager.
package test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bins holds the binaries TestMain builds: cairn (the parent module) and cairn-kube.
var bins string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-kube-test")
	if err != nil {
		panic(err)
	}
	bins = dir
	for _, b := range []struct{ dir, pkg, out string }{
		{"..", "./cmd/cairn", "cairn"},
		{".", "./cmd/cairn-kube", "cairn-kube"},
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg)
		cmd.Dir = filepath.Join("..", b.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "cannot build %s: %v\n%s", b.pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cairnServer is a running `cairn server --kube-listen`, with an admin token and two tenants.
type cairnServer struct {
	t        testing.TB
	dir      string
	url      string
	kubeURL  string
	adminTok string
	tenants  map[string]string // tenant -> token
	pid      int               // cairn server's
}

func startServer(t testing.TB, extra ...string) *cairnServer {
	t.Helper()
	dir := t.TempDir()
	s := &cairnServer{t: t, dir: dir, adminTok: "admin-token-0123456789",
		tenants: map[string]string{"alpha": "alpha-token-0123456789", "beta": "beta-token-0123456789"}}
	var lines []string
	for name, tok := range s.tenants {
		lines = append(lines, name+" "+tok)
	}
	tenantsFile := filepath.Join(dir, "tenants")
	if err := os.WriteFile(tenantsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"server", "--dir", filepath.Join(dir, "state"), "--token", s.adminTok, "--tenants", tenantsFile,
		"--listen", "127.0.0.1:0", "--kube-listen", "127.0.0.1:0"}, extra...)
	cmd := exec.CommandContext(ctx, filepath.Join(bins, "cairn"), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = cmd.Process.Pid
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("cairn server's log:\n%s", tail(stderr.String(), 6000))
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "cairn is serving on "); ok {
				ready <- u
			}
		}
	}()
	select {
	case s.url = <-ready:
	case <-time.After(3 * time.Minute):
		t.Fatalf("cairn server did not start:\n%s", tail(stderr.String(), 6000))
	}
	s.kubeconfig("admin", s.adminTok)
	for name, tok := range s.tenants {
		s.kubeconfig(name, tok)
	}
	return s
}

// kubeconfig writes DIR/NAME.kubeconfig by `cairn kube kubeconfig` with token.
func (s *cairnServer) kubeconfig(name, token string) string {
	path := filepath.Join(s.dir, name+".kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	cmd := exec.Command(filepath.Join(bins, "cairn"), "kube", "kubeconfig", "--server", s.url, "--token", token, "--context", name)
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("cairn kube kubeconfig: %v: %s", err, stderrOf(err))
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// kubectl runs kubectl as user (admin or a tenant) and returns its stdout; it fails the
// test if kubectl fails.
func (s *cairnServer) kubectl(user string, args ...string) string {
	s.t.Helper()
	out, err := s.kubectlErr(user, "", args...)
	if err != nil {
		s.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlErr runs kubectl with stdin and returns its combined output and error.
func (s *cairnServer) kubectlErr(user, stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", filepath.Join(s.dir, user+".kubeconfig")}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(s.dir, "kubecache-"+user))
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func requireKubectl(t testing.TB) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatal("these tests run the real kubectl (v1.32 here): install it and put it on PATH")
	}
}

// eventually retries check until it returns nil or timeout passes.
func eventually(t testing.TB, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer safe for a process to write while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
