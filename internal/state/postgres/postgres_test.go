package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
	"github.com/cairn-dev/cairn/internal/state/statetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.Store { return newStore(t) })
}

func TestRegistryConformance(t *testing.T) {
	statetest.RunRegistry(t, func(t *testing.T) state.Registry { return newStore(t) })
}

func TestAccountsConformance(t *testing.T) {
	statetest.RunAccounts(t, func(t *testing.T) state.Accounts { return newStore(t) })
}

func TestFunctions(t *testing.T) {
	statetest.RunFunctions(t, newStore(t))
}

// testOpts open every store of the tests with one fixed key.
var testOpts = Options{Keyring: must(secrets.New(secrets.Key{1, 2, 3}))}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// newStore opens a store on a new database, closed when the test ends.
func newStore(t testing.TB) *Store { return open(t, pgtest.Start(t)) }

// open opens the database at url and closes it when the test ends.
func open(t testing.TB, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, testOpts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConcurrentOpens: replicas that open a new database at once apply the migrations once,
// and all of them open it.
func TestConcurrentOpens(t *testing.T) {
	url := pgtest.Start(t)
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(t.Context(), url, testOpts) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d: %v", i, err)
			continue
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	if t.Failed() {
		return
	}
	var rows, version int
	err := stores[0].pool.QueryRow(t.Context(), `SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&rows, &version)
	if err != nil || rows != 1 || version != len(migrations) {
		t.Errorf("schema_version: %d rows, version %d (%v); want one row, version %d", rows, version, err, len(migrations))
	}
	var checks int
	if err := stores[0].pool.QueryRow(t.Context(), `SELECT COUNT(*) FROM keys WHERE name = $1`, state.SecretsCheckKey).Scan(&checks); err != nil || checks != 1 {
		t.Errorf("check rows: %d (%v), want 1", checks, err)
	}
}

// TestNewerSchemaIsRefused: a database a newer cairn migrated is not used.
func TestNewerSchemaIsRefused(t *testing.T) {
	url := pgtest.Start(t)
	s := open(t, url)
	if _, err := s.pool.Exec(t.Context(), `UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	x, err := Open(t.Context(), url, testOpts)
	if err == nil {
		x.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "cannot use schema version 99") {
		t.Errorf("Open of a database at schema version 99: %v, want a refusal", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(t.Context(), "postgres://localhost/x", Options{}); err == nil {
		t.Errorf("Open without a key ring: no error")
	}
	if _, err := Open(t.Context(), "postgres://user:hunter2@localhost:bad/x", testOpts); err == nil ||
		strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open of a bad URL: %v, want an error without the password", err)
	}
	// Nothing listens on port 1: Open fails, and says so.
	_, err := Open(t.Context(), "postgres://user:hunter2@127.0.0.1:1/x?connect_timeout=2", testOpts)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open of an unreachable server: %v, want an error without the password", err)
	}
}

// TestNULInKeys: a key that state.StackKey marks as never a stack's (a name with '/') is a
// miss, as in SQLite, although PostgreSQL refuses NUL bytes in text.
func TestNULInKeys(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	key := state.StackKey("", "a/b")
	if _, err := s.GetStack(ctx, key); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("GetStack(%q): %v, want ErrNotFound", key, err)
	}
	if _, err := s.StackStatus(ctx, key); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("StackStatus(%q): %v, want ErrNotFound", key, err)
	}
	if err := s.DeleteStack(ctx, key); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("DeleteStack(%q): %v, want ErrNotFound", key, err)
	}
	if _, err := s.GetFunction(ctx, "", "a/b"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("GetFunction(a/b): %v, want ErrNotFound", err)
	}
	if rs, err := s.ListResources(ctx, key); err != nil || len(rs) != 0 {
		t.Errorf("ListResources(%q) = %v, %v; want none", key, rs, err)
	}
}
