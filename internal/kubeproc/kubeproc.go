// Package kubeproc starts and supervises cairn-kube, the separate binary that serves cairn's
// Kubernetes API (docs/design/005-kube.md says why it is separate). It finds the binary, waits
// for it to be ready, restarts it if it dies, and stops it with cairn.
package kubeproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BinaryName is the kube API's binary, looked for beside cairn's own and then on PATH.
const BinaryName = "cairn-kube"

// Config says how to run cairn-kube.
type Config struct {
	Binary   string // path; "" looks for BinaryName
	Listen   string // HTTPS address
	Dir      string // its store and certificate
	CairnURL string // the cairn API it checks tokens with
	Hosts    []string
	// Database is cairn's PostgreSQL URL, which cairn-kube then keeps its objects and
	// namespace claims in, shared by every replica; "": SQLite in Dir.
	Database string
	Logger   *slog.Logger
}

// Proc is a supervised cairn-kube.
type Proc struct {
	cfg      Config
	url      string // https://host:port as this machine reaches it
	certFile string

	mu      sync.Mutex
	cmd     *exec.Cmd
	stopped bool
	stop    chan struct{} // closed by Stop: ends a restart's wait at once
	exited  chan struct{} // closed when the supervisor stops restarting
}

// Start runs cairn-kube and returns once it serves (or fails to).
func Start(ctx context.Context, cfg Config) (*Proc, error) {
	bin, err := FindBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	cfg.Binary = bin
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Proc{cfg: cfg, stop: make(chan struct{}), exited: make(chan struct{})}
	wait, err := p.launch(ctx)
	if err != nil {
		return nil, err
	}
	go p.supervise(wait)
	return p, nil
}

// URL is the kube API's address.
func (p *Proc) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// CertFile is the kube API's serving certificate, which is its own CA.
func (p *Proc) CertFile() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.certFile
}

// FindBinary is given when set, else cairn-kube beside cairn's own binary, else on PATH.
func FindBinary(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), BinaryName)
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(BinaryName); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("cannot find %s beside cairn or on PATH: build it with `go build -o DIR/%s ./kube/cmd/%s` "+
		"in cairn's source (its own module), or name it with --kube-binary", BinaryName, BinaryName, BinaryName)
}

// launch starts one cairn-kube and waits for its ready line; wait reports its exit.
func (p *Proc) launch(ctx context.Context) (wait func() error, err error) {
	listen := p.cfg.Listen
	if p.url != "" {
		listen = strings.TrimPrefix(p.url, "https://") // a restart keeps a picked port
	}
	args := []string{"--listen", listen, "--dir", p.cfg.Dir, "--cairn-url", p.cfg.CairnURL}
	if len(p.cfg.Hosts) > 0 {
		args = append(args, "--hosts", strings.Join(p.cfg.Hosts, ","))
	}
	cmd := exec.Command(p.cfg.Binary, args...)
	if p.cfg.Database != "" {
		cmd.Env = append(os.Environ(), EnvDatabase+"="+p.cfg.Database)
	}
	setPdeathsig(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &tailWriter{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", p.cfg.Binary, err)
	}
	waitErr := make(chan error, 1)
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "cairn-kube: serving "); ok {
				select {
				case ready <- line:
				default: // only the first counts; never block the wait below
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		waitErr <- cmd.Wait()
	}()
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	select {
	case line := <-ready:
		url, cert, _ := strings.Cut(line, " cert ")
		url = reachable(url)
		p.mu.Lock()
		p.url, p.certFile, p.cmd = url, cert, cmd
		stopped := p.stopped
		p.mu.Unlock()
		if stopped { // Stop came while this one started: it signalled the one before
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		return func() error { return <-waitErr }, nil
	case err := <-waitErr:
		return nil, fmt.Errorf("the kube API (%s) exited before serving: %v: %s", p.cfg.Binary, err, stderr.tail())
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, ctx.Err()
	case <-timeout.C:
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("the kube API (%s) was not ready after 2 minutes: %s", p.cfg.Binary, stderr.tail())
	}
}

// supervise restarts cairn-kube whenever it exits until Stop, waiting longer after each
// quick failure (1 s doubling to 30 s).
func (p *Proc) supervise(wait func() error) {
	defer close(p.exited)
	backoff := time.Second
	for {
		started := time.Now()
		err := wait()
		p.mu.Lock()
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			return
		}
		p.cfg.Logger.Error("the kube API exited; restarting it", "err", err, "in", backoff)
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		for {
			select {
			case <-p.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			var lerr error
			if wait, lerr = p.launch(context.Background()); lerr == nil {
				break
			}
			p.cfg.Logger.Error("cannot restart the kube API", "err", lerr)
		}
	}
}

// Stop ends cairn-kube: SIGTERM, then SIGKILL when ctx ends.
func (p *Proc) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.stopped {
		close(p.stop)
	}
	p.stopped = true
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-p.exited
		return errors.New("the kube API did not stop in time and was killed")
	}
}

// tailWriter keeps the last 4 KiB written, for an error that says why the child failed.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func (t *tailWriter) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// The environment through which cairn names its own kube API to cairn-kube serving as the
// Kubernetes provider plugin: its URL, its CA file, the token to call it with and the user
// to act as (the stack's tenant, by impersonation). kube/provider reads the same names.
const (
	EnvServer = "CAIRNKUBE_SERVER"
	// EnvDatabase gives cairn-kube cairn's PostgreSQL URL (kube/server.EnvDatabase).
	EnvDatabase = "CAIRNKUBE_DATABASE"
	EnvCA       = "CAIRNKUBE_CA_FILE"
	EnvToken    = "CAIRNKUBE_TOKEN"
	EnvAs       = "CAIRNKUBE_AS"
	EnvGuard    = "CAIRNKUBE_GUARD" // "1": kubeconfig endpoints on loopback or link-local refused
)

// reachable is url with an unspecified listen address (0.0.0.0, ::) as 127.0.0.1, the address
// this machine reaches it at and its certificate names.
func reachable(url string) string {
	hostport := strings.TrimPrefix(url, "https://")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return url
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "https://" + net.JoinHostPort("127.0.0.1", port)
	}
	return url
}
