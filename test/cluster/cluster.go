// Package cluster runs cairn as a team runs it, for tests and benchmarks: several `cairn
// server` processes (replicas) on one PostgreSQL database, or one on SQLite, behind a
// round-robin load balancer on loopback, with custom-resource handlers that answer through
// the load balancer and retry until their answer is taken. Replicas can be SIGKILLed and
// started again on the same port and directory; the database can be restarted.
package cluster

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// Token is every replica's admin token.
const Token = "cluster-admin-token"

// secretsKey is every replica's secrets key (base64 of 32 bytes): they share one database.
var secretsKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds cmd/cairn once per process and returns its path.
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-cluster-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cairn")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/cairn")
		cmd.Dir = providerbin.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// Config says what to run.
type Config struct {
	Replicas int    // default 1
	Database string // PostgreSQL URL; "": SQLite (one replica only)
	// Env is added to every replica's environment (TF_CLI_CONFIG_FILE for plugins).
	Env []string
}

// Cluster is the replicas and their load balancer.
type Cluster struct {
	tb       testing.TB
	URL      string // the load balancer: clients and handlers use it
	Replicas []*Replica
	lb       *httptest.Server
	next     atomic.Uint64
}

// Replica is one `cairn server` process.
type Replica struct {
	Index int
	Port  string
	Dir   string
	bin   string
	args  []string
	env   []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	up      bool
	peakRSS int64 // bytes, of the processes that ended

	logMu sync.Mutex
	log   bytes.Buffer // what its processes printed, all of them
}

// Start starts the replicas and the load balancer; they stop when tb ends.
func Start(tb testing.TB, cfg Config) *Cluster {
	tb.Helper()
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Database == "" && cfg.Replicas > 1 {
		tb.Fatal("cluster: replicas need a PostgreSQL database")
	}
	bin := Binary(tb)
	c := &Cluster{tb: tb}
	c.lb = httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "lb" },
		Transport: roundRobin{c},
		// Long polls and events stream through it.
		FlushInterval: -1,
		// A replica killed mid-request is what the tests do: its 502 is expected, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	})
	tb.Cleanup(c.lb.Close)
	c.URL = c.lb.URL
	for i := range cfg.Replicas {
		r := &Replica{Index: i, Port: freePort(tb), Dir: tb.TempDir(), bin: bin}
		r.args = []string{"server", "--listen", "127.0.0.1:" + r.Port, "--public-url", c.URL, "--dir", r.Dir, "--token", Token}
		r.env = append(append(os.Environ(), "CAIRN_SECRETS_KEY="+secretsKey), cfg.Env...)
		if cfg.Database != "" {
			r.env = append(r.env, "CAIRN_DATABASE="+cfg.Database)
		}
		c.Replicas = append(c.Replicas, r)
	}
	for _, r := range c.Replicas {
		if err := r.Start(); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() {
		for _, r := range c.Replicas {
			r.Kill()
			if tb.Failed() {
				tb.Logf("replica %d log (tail):\n%s", r.Index, tail(r.Log(), 4000))
			}
		}
	})
	return c
}

// roundRobin sends each request to the next replica that is up, and to the one after when a
// replica cannot be reached (it died): the request never arrived, so sending it again is safe.
type roundRobin struct{ c *Cluster }

func (rr roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	n := len(rr.c.Replicas)
	var body []byte
	if req.Body != nil {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		body = buf.Bytes()
	}
	var lastErr error
	for attempt := 0; attempt < 4*n; attempt++ {
		r := rr.c.Replicas[int(rr.c.next.Add(1))%n]
		if !r.Up() {
			if attempt >= n { // every replica down: wait for one
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		out := req.Clone(req.Context())
		out.URL.Host = "127.0.0.1:" + r.Port
		out.Host = out.URL.Host
		if body != nil {
			out.Body = readCloser{bytes.NewReader(body)}
			out.ContentLength = int64(len(body))
		}
		resp, err := transport.RoundTrip(out)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			return nil, err // it may have arrived: not sent again
		}
	}
	return nil, fmt.Errorf("no replica answered: %w", lastErr)
}

var transport = &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// Start runs the replica's process and waits until it answers /healthz.
func (r *Replica) Start() error {
	r.mu.Lock()
	if r.cmd != nil {
		r.mu.Unlock()
		return nil
	}
	cmd := exec.Command(r.bin, r.args...)
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = syncWriter{&r.logMu, &r.log}, syncWriter{&r.logMu, &r.log}
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		return err
	}
	r.cmd = cmd
	r.mu.Unlock()
	base := "http://127.0.0.1:" + r.Port
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				r.mu.Lock()
				r.up = true
				r.mu.Unlock()
				return nil
			}
		}
	}
	r.Kill()
	return fmt.Errorf("replica %d did not come up:\n%s", r.Index, tail(r.Log(), 4000))
}

// Kill SIGKILLs the replica (no shutdown, no flush) and waits for it to be gone.
func (r *Replica) Kill() {
	r.signal(syscall.SIGKILL)
}

// Stop sends SIGTERM and waits for the replica to drain and exit.
func (r *Replica) Stop() {
	r.signal(syscall.SIGTERM)
}

func (r *Replica) signal(sig syscall.Signal) {
	r.mu.Lock()
	cmd := r.cmd
	r.up = false
	r.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	rss := peakRSS(cmd.Process.Pid)
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
	r.mu.Lock()
	r.cmd = nil
	r.peakRSS = max(r.peakRSS, rss)
	r.mu.Unlock()
}

// Up reports whether the replica runs.
func (r *Replica) Up() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.up
}

// PID is the running process's id, 0 when down.
func (r *Replica) PID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// PeakRSS is the largest resident set any of the replica's processes reached, in bytes.
func (r *Replica) PeakRSS() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	rss := r.peakRSS
	if r.cmd != nil && r.cmd.Process != nil {
		rss = max(rss, peakRSS(r.cmd.Process.Pid))
	}
	return rss
}

// Log is what the replica's processes printed.
func (r *Replica) Log() string {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	return r.log.String()
}

// peakRSS reads VmHWM of a process (Linux), 0 when unknown.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

type syncWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func freePort(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
