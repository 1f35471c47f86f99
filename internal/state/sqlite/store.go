package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/cairn-dev/cairn/internal/state"
)

// Store is a state.Store in one SQLite file.
type Store struct {
	path string
	w    *sql.DB // the one writer connection
	r    *sql.DB // readers
	st   stmts   // hot statements, prepared once on the writer
}

// stmts are the statements every resource step runs; preparing them once saves SQLite from
// parsing them again on every call.
type stmts struct {
	journal, putResource, delResource, event *sql.Stmt
}

func (s *Store) prepare() error {
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = s.w.Prepare(q)
		return st
	}
	s.st = stmts{
		journal:     prep(`INSERT INTO journal (operation, stack, step, phase, token, failed, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		putResource: prep(`INSERT OR REPLACE INTO resources (` + resourceCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		delResource: prep(`DELETE FROM resources WHERE stack = ? AND name = ?`),
		event: prep(`INSERT INTO events (stack, operation, logical_id, physical_id, type, status, reason, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
	}
	if err != nil {
		return fmt.Errorf("cannot prepare statements: %w", err)
	}
	return nil
}

var _ state.Store = (*Store)(nil)

// Open opens (creating if needed, with mode 0600 in a 0700 directory) the database at path
// and brings its schema up to date.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cannot create state directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)"
	w, err := sql.Open("sqlite", dsn+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("cannot open state db %q: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{path: path, w: w, r: r}
	if err := s.migrate(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.prepare(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return errors.Join(s.r.Close(), s.w.Close()) }

func (s *Store) migrate() error {
	ctx := context.Background()
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("cannot create schema table: %w", err)
	}
	var v int
	err := s.w.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO schema_version VALUES (0)`); err != nil {
			return fmt.Errorf("cannot init schema version: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("cannot read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("state db %q has schema version %d, newer than this cairn (%d)", s.path, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.Exec(migrations[i]); err != nil {
				return err
			}
			_, err := tx.Exec(`UPDATE schema_version SET version = ?`, i+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("cannot migrate state db to version %d: %w", i+1, err)
		}
	}
	return nil
}

// tx runs fn in one write transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func tm(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, state.ErrNotFound)
	}
	return err
}

// Stacks

func (s *Store) PutStack(ctx context.Context, st state.Stack) error {
	_, err := s.w.ExecContext(ctx, `INSERT OR REPLACE INTO stacks
		(name, id, dialect, status, status_reason, description, parameters, outputs, operation, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, COALESCE((SELECT operation FROM stacks WHERE name = ?), ''), ?, ?)`,
		st.Name, st.ID, st.Dialect, st.Status, st.StatusReason, st.Description, st.Parameters, st.Outputs,
		st.Name, ms(st.CreatedAt), ms(st.UpdatedAt))
	if err != nil {
		return fmt.Errorf("cannot put stack %s: %w", st.Name, err)
	}
	return nil
}

const stackCols = `name, id, dialect, status, status_reason, description, parameters, outputs, operation, created_at, updated_at`

func scanStack(sc interface{ Scan(...any) error }) (state.Stack, error) {
	var st state.Stack
	var c, u int64
	err := sc.Scan(&st.Name, &st.ID, &st.Dialect, &st.Status, &st.StatusReason, &st.Description, &st.Parameters,
		&st.Outputs, &st.Operation, &c, &u)
	st.CreatedAt, st.UpdatedAt = tm(c), tm(u)
	return st, err
}

func (s *Store) GetStack(ctx context.Context, name string) (state.Stack, error) {
	st, err := scanStack(s.r.QueryRowContext(ctx, `SELECT `+stackCols+` FROM stacks WHERE name = ?`, name))
	if err != nil {
		return state.Stack{}, notFound(err, "stack "+name)
	}
	return st, nil
}

func (s *Store) ListStacks(ctx context.Context) ([]state.Stack, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+stackCols+` FROM stacks ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("cannot list stacks: %w", err)
	}
	defer rows.Close()
	var out []state.Stack
	for rows.Next() {
		st, err := scanStack(rows)
		if err != nil {
			return nil, fmt.Errorf("cannot list stacks: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

func (s *Store) DeleteStack(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM stacks WHERE name = ?`, name)
		if err != nil {
			return fmt.Errorf("cannot delete stack %s: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("stack %s: %w", name, state.ErrNotFound)
		}
		for _, q := range []string{`DELETE FROM resources WHERE stack = ?`, `DELETE FROM journal WHERE stack = ?`,
			`DELETE FROM operations WHERE stack = ?`, `DELETE FROM events WHERE stack = ?`, `DELETE FROM custom_requests WHERE stack = ?`} {
			if _, err := tx.Exec(q, name); err != nil {
				return fmt.Errorf("cannot delete stack %s: %w", name, err)
			}
		}
		return nil
	})
}

// Resources

const resourceCols = `stack, name, type, id, status, status_reason, props, outputs, deps, deletion_policy, updated_at`

func scanResource(sc interface{ Scan(...any) error }) (state.Resource, error) {
	var r state.Resource
	var deps string
	var u int64
	if err := sc.Scan(&r.Stack, &r.Name, &r.Type, &r.ID, &r.Status, &r.StatusReason, &r.Props, &r.Outputs, &deps,
		&r.DeletionPolicy, &u); err != nil {
		return r, err
	}
	r.UpdatedAt = tm(u)
	if err := json.Unmarshal([]byte(deps), &r.Deps); err != nil {
		return r, fmt.Errorf("cannot decode deps of %s: %w", r.Name, err)
	}
	return r, nil
}

func (s *Store) ListResources(ctx context.Context, stack string) ([]state.Resource, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+resourceCols+` FROM resources WHERE stack = ? ORDER BY name`, stack)
	if err != nil {
		return nil, fmt.Errorf("cannot list resources: %w", err)
	}
	defer rows.Close()
	var out []state.Resource
	for rows.Next() {
		r, err := scanResource(rows)
		if err != nil {
			return nil, fmt.Errorf("cannot list resources: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) GetResource(ctx context.Context, stack, name string) (state.Resource, error) {
	r, err := scanResource(s.r.QueryRowContext(ctx, `SELECT `+resourceCols+` FROM resources WHERE stack = ? AND name = ?`, stack, name))
	if err != nil {
		return state.Resource{}, notFound(err, "resource "+stack+"/"+name)
	}
	return r, nil
}

// Journal

func (s *Store) Append(ctx context.Context, e state.JournalEntry, writes ...state.Write) (int64, error) {
	var seq int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.Stmt(s.st.journal).Exec(e.Operation, e.Stack, e.Step, e.Phase, e.Token, e.Failed, e.Detail, ms(e.At))
		if err != nil {
			return err
		}
		if seq, err = res.LastInsertId(); err != nil {
			return err
		}
		for _, w := range writes {
			if r := w.Put; r != nil {
				deps, err := json.Marshal(r.Deps)
				if err != nil {
					return err
				}
				if r.Deps == nil {
					deps = []byte("[]")
				}
				if _, err := tx.Stmt(s.st.putResource).Exec(r.Stack, r.Name, r.Type, r.ID, r.Status, r.StatusReason, r.Props, r.Outputs, string(deps), r.DeletionPolicy, ms(r.UpdatedAt)); err != nil {
					return err
				}
			}
			if w.Delete != "" {
				if _, err := tx.Stmt(s.st.delResource).Exec(e.Stack, w.Delete); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cannot append journal entry %s/%s: %w", e.Step, e.Phase, err)
	}
	return seq, nil
}

func (s *Store) ListJournal(ctx context.Context, operation string) ([]state.JournalEntry, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, operation, stack, step, phase, token, failed, detail, at FROM journal
		WHERE operation = ? ORDER BY seq`, operation)
	if err != nil {
		return nil, fmt.Errorf("cannot read journal: %w", err)
	}
	defer rows.Close()
	var out []state.JournalEntry
	for rows.Next() {
		var e state.JournalEntry
		var at int64
		if err := rows.Scan(&e.Seq, &e.Operation, &e.Stack, &e.Step, &e.Phase, &e.Token, &e.Failed, &e.Detail, &at); err != nil {
			return nil, fmt.Errorf("cannot read journal: %w", err)
		}
		e.At = tm(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
