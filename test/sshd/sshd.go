// Package sshd starts a real OpenSSH server for tests of what cairn does over SSH (the file
// and remote-exec provisioners): sshd from Debian's openssh-server, run by the test as the
// current user on a loopback port, with its own host key, configuration and authorized key.
// A machine without sshd fails the test (CI installs openssh-server in .ci/run): the tests
// that need a peer must not pass by skipping.
package sshd

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running sshd.
type Server struct {
	Host string // 127.0.0.1
	Port int
	User string // the user the test runs as, who may log in
	// PrivateKey logs in as User (OpenSSH PEM); WrongKey is a key sshd does not accept.
	PrivateKey, WrongKey string
	// HostKey is the server's public host key ("ssh-ed25519 AAAA..."); WrongHostKey another.
	HostKey, WrongHostKey string
	Dir                   string // the server's files
}

// Start starts sshd for the test; it stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", User: u.Username, Dir: dir}
	keygen := func(name string) (private, public string) {
		path := filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		priv, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return string(priv), strings.TrimSpace(string(pub))
	}
	_, s.HostKey = keygen("host_key")
	_, s.WrongHostKey = keygen("other_host_key")
	var authorized string
	s.PrivateKey, authorized = keygen("client_key")
	s.WrongKey, _ = keygen("wrong_key")
	s.HostKey = withoutComment(s.HostKey)
	s.WrongHostKey = withoutComment(s.WrongHostKey)
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(authorized+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd started by root insists on its privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A free port can be taken between the probe and sshd's bind: try a few.
	var lastErr error
	for range 5 {
		if lastErr = s.start(t, bin); lastErr == nil {
			return s
		}
	}
	t.Fatalf("sshd did not start: %v", lastErr)
	return nil
}

func (s *Server) start(t testing.TB, bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	config := filepath.Join(s.Dir, "sshd_config")
	lines := []string{
		"Port " + strconv.Itoa(port),
		"ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(s.Dir, "host_key"),
		"AuthorizedKeysFile " + filepath.Join(s.Dir, "authorized_keys"),
		"PidFile " + filepath.Join(s.Dir, "sshd.pid"),
		"StrictModes no",
		"UsePAM no",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"AllowTcpForwarding yes",
		"LogLevel VERBOSE",
	}
	if err := os.WriteFile(config, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "-D", "-e", "-f", config)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("sshd exited: %v\n%s", err, logs.String())
		default:
		}
		if ready(s.Host, port) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("sshd did not listen on port %d within 10s\n%s", port, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", logs.String())
		}
	})
	return nil
}

// binary finds sshd; its absence fails the test.
func binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("sshd"); err == nil && filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err == nil {
		return "/usr/sbin/sshd" // sshd re-executes itself and wants an absolute path
	}
	t.Fatal("sshd is not installed: this test needs a real SSH server (apt-get install openssh-server; .ci/run installs it)")
	return ""
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ready reports whether an SSH server answers on host:port (its version banner).
func ready(host string, port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "SSH-"
}

func withoutComment(pub string) string {
	f := strings.Fields(pub)
	if len(f) < 2 {
		return pub
	}
	return f[0] + " " + f[1]
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
