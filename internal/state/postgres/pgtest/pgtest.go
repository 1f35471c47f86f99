// Package pgtest runs real PostgreSQL servers for tests, from the initdb and postgres binaries
// on PATH (PostgreSQL 15 in CI). Start gives a test a database of its own on a server shared
// by the test binary; StartServer gives a test a server of its own, which it may stop and
// restart to test faults.
//
// Without initdb on PATH, tests that call either skip, unless CAIRN_REQUIRE_POSTGRES=1 (CI),
// which makes them fail: `go test ./...` passes on a machine with Go alone.
//
// A server runs in a directory under os.TempDir(), listens on a free loopback port with trust
// authentication and fsync off, and as an unprivileged user ("postgres", else "nobody") when
// the test runs as root, which PostgreSQL refuses. The shared server is stopped when the test
// binary exits: call Main from TestMain to stop it and remove its directory; should the binary
// die first, the server still shuts down (it gets SIGINT when its parent goes) and a later run
// removes the directory. The package imports only pgx's pgconn.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// RequireEnv names the variable that turns a missing PostgreSQL into a failure.
const RequireEnv = "CAIRN_REQUIRE_POSTGRES"

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Start returns the URL of a new, empty database on the test binary's shared server (started
// on first use), dropped when t ends.
func Start(t testing.TB) string {
	t.Helper()
	requirePostgres(t)
	shared.once.Do(func() { shared.srv, shared.err = newServer() })
	if shared.err != nil {
		t.Fatalf("cannot start PostgreSQL: %v", shared.err)
	}
	return shared.srv.NewDatabase(t)
}

// Main runs the tests and then stops the shared server and removes its directory. Call it
// from TestMain in packages that use Start:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.remove(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		}
	}
	os.Exit(code)
}

// requirePostgres skips t (or fails it, under RequireEnv=1) unless initdb and postgres are on
// PATH.
func requirePostgres(t testing.TB) {
	t.Helper()
	var missing []string
	for _, bin := range []string{"initdb", "postgres"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("PostgreSQL is not installed: %s not on PATH", strings.Join(missing, " and "))
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s (and %s=1)", msg, RequireEnv)
	}
	t.Skip(msg)
}

// Server is one PostgreSQL server (a postmaster and its data directory). Its methods are safe
// for concurrent use.
type Server struct {
	dir  string // removed by remove: data/, sock/, postgres.log, owner
	port int
	cred *credential // nil: run as ourselves

	mu     sync.Mutex
	proc   *os.Process   // nil while stopped
	exited chan struct{} // closed when proc exits
	dbs    atomic.Int64
}

// StartServer starts a server for t alone, stopped and removed when t ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	requirePostgres(t)
	s, err := newServer()
	if err != nil {
		t.Fatalf("cannot start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := s.remove(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s
}

// URL is the URL of the server's "postgres" database, as its superuser "postgres".
func (s *Server) URL() string { return s.url("postgres") }

func (s *Server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// notName matches what a database name made of a test's name leaves out.
var notName = regexp.MustCompile(`[^a-z0-9_]+`)

// NewDatabase creates an empty database for t and returns its URL; it is dropped (with the
// sessions still on it) when t ends, if the server is running then.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%s", s.dbs.Add(1), notName.ReplaceAllString(strings.ToLower(t.Name()), "_"))
	if len(name) > 63 {
		name = name[:63] // PostgreSQL's limit on names
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// FILE_COPY (PostgreSQL 15) copies the template's files: twice as fast as WAL_LOG here.
	err := s.exec(ctx, `CREATE DATABASE "`+name+`" STRATEGY FILE_COPY`)
	if err != nil && strings.Contains(err.Error(), "STRATEGY") {
		err = s.exec(ctx, `CREATE DATABASE "`+name+`"`) // before 15
	}
	if err != nil {
		t.Fatalf("cannot create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !s.running() {
			return // a test that stopped the server has it removed with the server
		}
		if err := s.exec(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			t.Logf("pgtest: cannot drop database %s: %v", name, err)
		}
	})
	return s.url(name)
}

// exec runs sql on the postgres database.
func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgconn.Connect(ctx, s.URL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}

func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil
}

// Stop shuts the server down (fast shutdown: sessions are ended, as when PostgreSQL is
// restarted under a client) and waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

// Start starts a stopped server again, on the same port with the same data, and waits until
// it accepts connections. Starting a running server does nothing.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	return s.startLocked()
}

// Restart stops the server and starts it again.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopLocked(); err != nil {
		return err
	}
	return s.startLocked()
}

// newServer makes a data directory with initdb and starts a server on it.
func newServer() (*Server, error) {
	sweep()
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	dir, err := makeDir(cred)
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, cred: cred}
	if err := s.initdb(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	// Another process may take the free port before the server binds it: try a few.
	for range 5 {
		if s.port, err = freePort(); err != nil {
			break
		}
		s.mu.Lock()
		err = s.startLocked()
		s.mu.Unlock()
		if err == nil || !errors.Is(err, errPortTaken) {
			break
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// remove stops the server and removes its directory.
func (s *Server) remove() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}
