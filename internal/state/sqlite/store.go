package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
)

// Store is a state.Store in one SQLite file. It is safe for concurrent use.
type Store struct {
	path string
	w    *sql.DB // the one writer connection; its transactions BEGIN IMMEDIATE
	r    *sql.DB // query-only readers
	st   stmts
	c    *committer                      // batches the writes of concurrent callers (batch.go)
	ring atomic.Pointer[secrets.Keyring] // seals the columns of state.SealedTables
}

var _ state.Store = (*Store)(nil)

// stmts are the statements every resource step runs, prepared once on the writer so SQLite
// does not parse them again on every call.
type stmts struct {
	journal, putResource, delResource, event, fence *sql.Stmt
}

// pragmas apply to every connection. synchronous=NORMAL in WAL mode loses no committed
// transaction when the process dies (only, possibly, the last ones when the machine does).
// secure_delete zeroes what a write frees, so that no free page keeps an overwritten value.
var pragmas = []string{"journal_mode(WAL)", "synchronous(NORMAL)", defaultBusy, "foreign_keys(ON)", "secure_delete(ON)"}

const defaultBusy, exclusiveBusy = "busy_timeout(5000)", "busy_timeout(1000)"

// Options configures Open.
type Options struct {
	// Keyring seals the columns that may hold secrets; required. A database is bound to the
	// keys that sealed it: Open fails with a ring that cannot open it.
	Keyring *secrets.Keyring
	// Exclusive holds the database's lock from Open to Close, with one connection: Open
	// fails with ErrInUse when another process has the file open, and no other can open it
	// meanwhile (cairn secrets rotate-key).
	Exclusive bool
}

// ErrInUse is returned by an Exclusive Open of a database another process has open.
var ErrInUse = errors.New("the state database is in use by another process")

// Open opens the database at path, creating it (mode 0600, in a directory created with mode
// 0700) when absent, brings its schema up to date and seals any plaintext an older cairn
// left in the sealed columns.
func Open(path string, opts Options) (*Store, error) {
	if opts.Keyring == nil {
		return nil, errors.New("cannot open state db: no secrets key ring")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot create state directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	wextra := []string{"_txlock=immediate"}
	if opts.Exclusive {
		// Waiting out a running server's lock is pointless: fail after a second.
		wextra = append(wextra, "_pragma=locking_mode(EXCLUSIVE)", "_pragma="+exclusiveBusy)
	}
	w, err := sql.Open("sqlite", dsn(path, wextra...))
	if err != nil {
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, err := sql.Open("sqlite", dsn(path, "_pragma=query_only(1)"))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	if opts.Exclusive {
		_ = r.Close()
		r = w // a second connection would wait for the first's lock
	}
	s := &Store{path: path, w: w, r: r}
	s.ring.Store(opts.Keyring)
	if err := s.migrate(); err != nil {
		_ = s.Close()
		if isBusy(err) && opts.Exclusive {
			err = ErrInUse
		}
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	if err := s.sealAtOpen(context.Background()); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	if err := s.prepare(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	s.startCommitter()
	return s, nil
}

// dsn is the modernc.org/sqlite data source name of path. The path is a plain file name, not
// a URI, so that no character in it is taken for URI syntax.
func dsn(path string, extra ...string) string {
	q := url.Values{}
	for _, p := range pragmas {
		if p == defaultBusy && slices.Contains(extra, "_pragma="+exclusiveBusy) {
			continue // the driver runs busy_timeout pragmas first, in no set order
		}
		q.Add("_pragma", p)
	}
	s := path + "?" + q.Encode()
	for _, e := range extra {
		s += "&" + e
	}
	return s
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database. Calls after the first do nothing.
func (s *Store) Close() error {
	s.stopCommitter()
	var errs []error
	for _, st := range []*sql.Stmt{s.st.journal, s.st.putResource, s.st.delResource, s.st.event, s.st.fence} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	errs = append(errs, s.r.Close(), s.w.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cannot close state db %q: %w", s.path, err)
	}
	return nil
}

// migrate applies the migrations the file lacks, all in one write transaction, so that two
// processes opening a new file at once do not both apply them.
func (s *Store) migrate() error {
	ctx := context.Background()
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("cannot create schema_version: %w", err)
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
		}
		if err != nil {
			return fmt.Errorf("cannot read schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("cannot use schema version %d: this cairn knows versions up to %d", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("cannot migrate to schema version %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
			return fmt.Errorf("cannot record schema version: %w", err)
		}
		return nil
	})
}

func (s *Store) prepare() error {
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		if st, err = s.w.Prepare(q); err != nil {
			err = fmt.Errorf("cannot prepare %q: %w", q, err)
		}
		return st
	}
	s.st = stmts{
		journal: prep(`INSERT INTO journal (operation, stack, step, phase, token, failed, detail, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		putResource: prep(`INSERT INTO resources (` + resourceCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (stack, name) DO UPDATE SET type = excluded.type, id = excluded.id, status = excluded.status,
			status_reason = excluded.status_reason, props = excluded.props, outputs = excluded.outputs,
			deps = excluded.deps, deletion_policy = excluded.deletion_policy, updated_at = excluded.updated_at,
			private = excluded.private, provider = excluded.provider, protect = excluded.protect`),
		delResource: prep(`DELETE FROM resources WHERE stack = ? AND name = ?`),
		event: prep(`INSERT INTO events (stack, operation, logical_id, physical_id, type, status, reason, at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		fence: prep(fenceQuery),
	}
	return err
}

// tx runs fn in one write transaction, committed when fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// isBusy reports whether err is SQLite's SQLITE_BUSY: another connection holds the lock.
func isBusy(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == 5 // SQLITE_BUSY and its extended codes
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// list runs a query on the readers and scans every row with scan.
func list[T any](ctx context.Context, db *sql.DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ms is t in unix milliseconds, 0 for the zero time.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// tm is the UTC time of unix milliseconds v, the zero time for 0.
func tm(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// noRow turns sql.ErrNoRows into state.ErrNotFound.
func noRow(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return state.ErrNotFound
	}
	return err
}

// DB is the database's writer connection pool, for reading it whole (a migration to another
// backend). Close the Store, not it.
func (s *Store) DB() *sql.DB { return s.w }
