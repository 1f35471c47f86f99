package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
)

// Store is a state.Store in one PostgreSQL database. It is safe for concurrent use, and
// several Stores (in several processes) may share one database.
type Store struct {
	name      string // host and database, for messages: never the URL, which may hold a password
	pool      *pgxpool.Pool
	ring      *secrets.Keyring
	closed    chan struct{} // closed by Close: ends Watch
	closeOnce sync.Once
	events    *announcer // announces events, at most every announceEvery per stack
	// appends queue the journal and event appends of the group committer (group.go).
	appends       chan *appendReq
	committerDone chan struct{}
}

var _ state.Store = (*Store)(nil)

// Options configures Open.
type Options struct {
	// Keyring seals the columns that may hold secrets; required. A database is bound to the
	// keys that sealed it: Open fails with a ring that cannot open it.
	Keyring *secrets.Keyring
}

// DefaultMaxConns bounds the pool when the URL has no pool_max_conns: enough for a server's
// concurrent steps and requests, small enough that a few replicas fit PostgreSQL's default
// max_connections of 100.
const DefaultMaxConns = 16

// Open connects to the database at url (a postgres:// URL or a keyword/value string, as pgx
// takes them, with pgxpool's pool_* parameters), brings its schema up to date and checks that
// opts.Keyring opens it. Several replicas may Open one database at once.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Keyring == nil {
		return nil, errors.New("cannot open state db: no secrets key ring")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("cannot open state db: %w", err) // pgx redacts the password
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A database that does not answer fails a call rather than hanging it.
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "cairn"
	}
	s := &Store{name: fmt.Sprintf("%s/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Database), ring: opts.Keyring,
		closed: make(chan struct{})}
	s.events = &announcer{s: s, last: map[string]time.Time{}, pending: map[string]bool{}}
	s.appends, s.committerDone = make(chan *appendReq), make(chan struct{})
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("cannot open state db %s: %w", s.name, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("cannot open state db %s: %w", s.name, err)
	}
	go s.committer()
	return s, nil
}

// Close closes the pool, waiting for connections in use to be released, and ends Watch.
// Calls after the first do nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.committerDone != nil {
			<-s.committerDone // the group in flight ends before the pool closes
		}
		s.pool.Close()
	})
	return nil
}

// Calls that fail in a way that running them again cures are retried, up to maxAttempts
// times, when running them again cannot apply them twice: a deadlock or serialization
// failure (the transaction was rolled back), a statement that was never sent, a session the
// server ended (restart, shutdown, crash: SQLSTATE class 57P) before anything of the call
// succeeded. A read is retried after any failure of its connection. When the server ended a
// session, the pool's other connections are likely dead as well: the pool is reset, so that
// the retry and later calls connect afresh instead of meeting them one failure at a time.
const maxAttempts = 3

// retry runs attempt until it succeeds or says that running it again is not safe, or
// maxAttempts ran. attempt must build its statements anew on each call. A call that never
// reached the server (it is restarting, or away for a moment) is tried again with a growing
// wait for up to outageWait: an operation's journal write waits out a database restart
// instead of failing the operation.
func (s *Store) retry(ctx context.Context, attempt func() (err error, again bool)) error {
	start, wait := time.Now(), 50*time.Millisecond
	for i := 1; ; i++ {
		err, again := attempt()
		if err == nil {
			return nil
		}
		if terminated(err) {
			s.pool.Reset()
		}
		if !again || ctx.Err() != nil {
			return err
		}
		if !unsent(err) || time.Since(start) > outageWait {
			if i >= maxAttempts {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return err
		case <-s.closed:
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// outageWait bounds how long a call waits for a database that cannot be reached.
const outageWait = 30 * time.Second

// unsent reports whether err says the call could not reach the server at all (a dial
// refused, a session ended before it was sent): nothing of it ran.
func unsent(err error) bool {
	var ce *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || terminated(err) || errors.As(err, &ce)
}

// rolledBack reports whether err is a deadlock or a serialization failure: PostgreSQL rolled
// the transaction back, and running it again may succeed.
func rolledBack(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// terminated reports whether err says the server ended the session: admin_shutdown (a fast
// shutdown, pg_terminate_backend), crash_shutdown, cannot_connect_now (starting up).
func terminated(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03")
}

// lostConn reports whether err is a failure of the connection rather than of the statement.
func lostConn(err error) bool {
	var ne net.Error
	return terminated(err) || pgconn.SafeToRetry(err) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// tx runs fn in one transaction, committed when fn returns nil. It runs again when it was
// rolled back, or the session failed before the commit was sent.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.retry(ctx, func() (error, bool) {
		tx, err := s.pool.Begin(ctx)
		if err != nil {
			return err, lostConn(err)
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback(ctx)
			return err, rolledBack(err) || terminated(err) || pgconn.SafeToRetry(err)
		}
		err = tx.Commit(ctx)
		return err, rolledBack(err) || pgconn.SafeToRetry(err) // a lost commit may have committed
	})
}

// batch sends the statements add queues as one pipeline, which PostgreSQL runs in one
// implicit transaction: all of them or none. read reads the results in order; the batch is
// closed after it. It runs again when it was rolled back, or the session failed before any
// of its results was read (so none committed).
func (s *Store) batch(ctx context.Context, add func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	return s.retry(ctx, func() (error, bool) {
		b := &pgx.Batch{}
		add(b)
		br := &countingResults{BatchResults: s.pool.SendBatch(ctx, b)}
		err := read(br)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		return err, rolledBack(err) || (br.ok == 0 && unsent(err))
	})
}

// countingResults counts the results read without error.
type countingResults struct {
	pgx.BatchResults
	ok int
}

func (c *countingResults) Exec() (pgconn.CommandTag, error) {
	tag, err := c.BatchResults.Exec()
	if err == nil {
		c.ok++
	}
	return tag, err
}

func (c *countingResults) QueryRow() pgx.Row { return countingRow{c.BatchResults.QueryRow(), c} }

type countingRow struct {
	pgx.Row
	c *countingResults
}

func (r countingRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if err == nil || errors.Is(err, pgx.ErrNoRows) {
		r.c.ok++
	}
	return err
}

// exec runs one statement that returns no rows, retried as batch says.
func (s *Store) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := s.batch(ctx, func(b *pgx.Batch) { b.Queue(sql, args...) }, func(br pgx.BatchResults) error {
		var err error
		tag, err = br.Exec()
		return err
	})
	return tag, err
}

// queryRow is a query of one row that only reads: its Scan runs the query, again when the
// connection failed.
func (s *Store) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return readRow{s, ctx, sql, args}
}

type readRow struct {
	s    *Store
	ctx  context.Context
	sql  string
	args []any
}

func (r readRow) Scan(dest ...any) error {
	return r.s.retry(r.ctx, func() (error, bool) {
		err := r.s.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
		return err, lostConn(err)
	})
}

// scanner is a pgx.Row or pgx.Rows.
type scanner interface{ Scan(...any) error }

// list runs a query that only reads and scans every row with scan; it runs the query again
// when the connection failed.
func list[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	var out []T
	err := s.retry(ctx, func() (error, bool) {
		out = nil
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err, lostConn(err)
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err, false
			}
			out = append(out, v)
		}
		err = rows.Err()
		return err, lostConn(err)
	})
	return out, err
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

// noRow turns pgx.ErrNoRows into state.ErrNotFound.
func noRow(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return state.ErrNotFound
	}
	return err
}

// affected is state.ErrNotFound when tag changed no row.
func affected(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return state.ErrNotFound
	}
	return nil
}

// isUnique reports whether err is a unique violation, of constraint when it is not empty.
func isUnique(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && (constraint == "" || pe.ConstraintName == constraint)
}

// uniqueIs turns a unique violation into sentinel.
func uniqueIs(err, sentinel error) error {
	if isUnique(err, "") {
		return sentinel
	}
	return err
}

// badKey reports whether key cannot be stored in a TEXT column: state.StackKey marks a name
// that holds '/' with a NUL byte, which PostgreSQL refuses in text. Such a key is never
// stored, so looking it up is a miss.
func badKey(key string) bool { return strings.IndexByte(key, 0) >= 0 }

// tenantOf names the default tenant explicitly, as rows store it.
func tenantOf(t string) string {
	if t == "" {
		return state.DefaultTenant
	}
	return t
}
