package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// credential is the user the server runs as when we are root.
type credential struct {
	name     string
	uid, gid uint32
}

// unprivileged returns the user to run PostgreSQL as: nil when we are not root, else
// "postgres" or, without one, "nobody".
func unprivileged() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &credential{name, uint32(uid), uint32(gid)}, nil
		}
	}
	return nil, errors.New("running as root, and there is no postgres or nobody user to run PostgreSQL as")
}

// dirPrefix starts the name of every server directory, for sweep.
const dirPrefix = "cairn-pgtest-"

// makeDir makes the server's directory (mode 0755, under the world-traversable temporary
// directory), owned by cred's user, and records our pid in it for sweep.
func makeDir(cred *credential) (string, error) {
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", fmt.Errorf("cannot make a directory for PostgreSQL: %w", err)
	}
	err = errors.Join(os.Chmod(dir, 0o755), os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o644))
	if err == nil && cred != nil {
		err = os.Chown(dir, int(cred.uid), int(cred.gid))
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("cannot make a directory for PostgreSQL: %w", err)
	}
	return dir, nil
}

// command is bin with args, run as s's user, with no PG* variable of ours in its environment
// and its output appended to postgres.log.
func (s *Server) command(bin string, args ...string) (*exec.Cmd, *os.File, error) {
	log, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.SysProcAttr = sysProcAttr()
	if s.cred != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: s.cred.uid, Gid: s.cred.gid}
		cmd.Env = append(cmd.Env, "HOME="+s.dir, "USER="+s.cred.name)
	}
	return cmd, log, nil
}

func (s *Server) initdb() error {
	cmd, log, err := s.command("initdb", "-D", filepath.Join(s.dir, "data"), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions")
	if err != nil {
		return err
	}
	defer log.Close()
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("cannot run initdb: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, s.logTail())
	}
	return os.MkdirAll(filepath.Join(s.dir, "sock"), 0o755)
}

// errPortTaken says another process listens on the server's port.
var errPortTaken = errors.New("port taken")

// startLocked starts the postmaster and waits until it accepts connections.
func (s *Server) startLocked() error {
	sock := filepath.Join(s.dir, "sock")
	if s.cred != nil {
		if err := os.Chown(sock, int(s.cred.uid), int(s.cred.gid)); err != nil {
			return err
		}
	}
	cmd, log, err := s.command("postgres", "-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+sock,
		// A test server: speed over durability, room for several pools.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c", "log_min_messages=warning")
	if err != nil {
		return err
	}
	defer log.Close()
	if err := spawn(cmd); err != nil {
		return fmt.Errorf("cannot run postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.proc, s.exited = cmd.Process, exited

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgconn.Connect(cctx, s.URL())
		ccancel()
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-exited:
			s.proc = nil
			tail := s.logTail()
			if strings.Contains(tail, "could not bind") || strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("postgres on port %d: %w\n%s", s.port, errPortTaken, tail)
			}
			return fmt.Errorf("postgres exited at start: %s", tail)
		case <-ctx.Done():
			_ = s.stopLocked()
			return fmt.Errorf("postgres did not accept connections in a minute: %v\n%s", err, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stopLocked sends SIGINT (fast shutdown) and waits; after a minute, SIGKILL.
func (s *Server) stopLocked() error {
	if s.proc == nil {
		return nil
	}
	proc, exited := s.proc, s.exited
	s.proc = nil
	if err := proc.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cannot stop postgres: %w", err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(time.Minute):
		_ = syscall.Kill(-proc.Pid, syscall.SIGKILL) // its process group: the backends too
		<-exited
		return fmt.Errorf("postgres did not stop in a minute; killed it\n%s", s.logTail())
	}
}

// logTail is the end of postgres.log, for error messages.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// freePort returns a loopback TCP port no one listened on a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// spawner starts processes from one goroutine locked to its OS thread for the life of the
// test binary: Pdeathsig fires when the thread that started a process exits, and this one
// exits only with the process.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func spawn(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must outlive every child
			for r := range spawner.reqs {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := spawnReq{cmd, make(chan error, 1)}
	spawner.reqs <- r
	return <-r.err
}

// sweep removes the directories of servers whose test binary is gone and whose postmaster has
// exited: those of runs that died before Main or a cleanup could remove them.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, dir := range dirs {
		owner, err := pidIn(filepath.Join(dir, "owner"))
		if err != nil {
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > time.Hour {
				_ = os.RemoveAll(dir) // half made, long ago
			}
			continue
		}
		if alive(owner) {
			continue
		}
		if pm, err := pidIn(filepath.Join(dir, "data", "postmaster.pid")); err == nil && alive(pm) {
			continue // still shutting down
		}
		_ = os.RemoveAll(dir)
	}
}

// pidIn reads the pid on the first line of a file.
func pidIn(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
