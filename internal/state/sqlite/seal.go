package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
)

// seal seals b for table.col of the row key; nil stays nil (NULL).
func (s *Store) seal(b []byte, table, col string, key ...string) []byte {
	if b == nil {
		return nil
	}
	return s.ring.Load().Seal(b, state.SealAD(table, col, key...))
}

// open replaces the sealed *b of table.col of the row key by its plaintext; nil stays nil.
func (s *Store) open(b *[]byte, table, col string, key ...string) error {
	if *b == nil {
		return nil
	}
	pt, err := s.ring.Load().Open(*b, state.SealAD(table, col, key...))
	if err != nil {
		return fmt.Errorf("cannot open %s.%s of %s: %w", table, col, strings.Join(key, " "), err)
	}
	*b = pt
	return nil
}

func (s *Store) openStack(st *state.Stack) error {
	key := state.StackKey(st.Tenant, st.Name)
	return errors.Join(s.open(&st.Parameters, "stacks", "parameters", key), s.open(&st.Outputs, "stacks", "outputs", key),
		s.open(&st.Template, "stacks", "template", key), s.open(&st.Providers, "stacks", "providers", key))
}

func (s *Store) openResource(r *state.Resource) error {
	return errors.Join(s.open(&r.Props, "resources", "props", r.Stack, r.Name),
		s.open(&r.Outputs, "resources", "outputs", r.Stack, r.Name), s.open(&r.Private, "resources", "private", r.Stack, r.Name))
}

func (s *Store) openEntry(e *state.JournalEntry) error {
	return s.open(&e.Detail, "journal", "detail", e.Operation, e.Stack, e.Step, e.Phase, e.Token)
}

func (s *Store) openOp(op *state.Operation) error {
	return s.open(&op.Request, "operations", "request", op.ID)
}

func (s *Store) openCR(r *state.CustomRequest) error {
	return errors.Join(s.open(&r.Body, "custom_requests", "body", r.ID), s.open(&r.Response, "custom_requests", "response", r.ID))
}

// openAll opens every element of vs.
func openAll[T any](vs []T, open func(*T) error) error {
	for i := range vs {
		if err := open(&vs[i]); err != nil {
			return err
		}
	}
	return nil
}

// sealAtOpen checks that the ring opens the database's check row or, in a database that has
// none (new, or written before cairn sealed secrets), seals every plaintext value in one
// transaction and writes the row. After sealing plaintext it VACUUMs and truncates the WAL,
// so that no page of the file or the WAL keeps the plaintext.
func (s *Store) sealAtOpen(ctx context.Context) error {
	ring := s.ring.Load()
	var sealed int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var check []byte
		err := tx.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, state.SecretsCheckKey).Scan(&check)
		if err == nil {
			if _, err := ring.Open(check, state.SealAD("keys", "value", state.SecretsCheckKey)); err != nil {
				return fmt.Errorf("the secrets key does not open this database (%w): give the key it was sealed with", err)
			}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if sealed, err = reseal(ctx, tx, ring, true); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO keys (name, value) VALUES (?, ?)`, state.SecretsCheckKey,
			ring.Seal(state.SecretsCheckValue, state.SealAD("keys", "value", state.SecretsCheckKey)))
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot seal secrets: %w", err)
	}
	if sealed > 0 {
		return s.scrub(ctx)
	}
	return nil
}

// scrub rewrites the file without its free pages (VACUUM) and empties the WAL, so that values
// overwritten or re-sealed leave no copy in either.
func (s *Store) scrub(ctx context.Context) error {
	for _, q := range []string{`VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("cannot scrub the database (%s): %w", q, err)
		}
	}
	return nil
}

// Reseal re-seals every sealed value with ring's first key, in one transaction, then scrubs
// the file and the WAL of the blobs it replaced; from then on the store seals with ring. ring
// must also hold the key the values are sealed with (secrets.Keyring.Rotate). It returns how
// many values it re-sealed. Run it on a store opened with Options.Exclusive: another process
// holding the old ring would go on sealing with the old key.
func (s *Store) Reseal(ctx context.Context, ring *secrets.Keyring) (int, error) {
	var n int
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = reseal(ctx, tx, ring, false)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cannot re-seal secrets: %w", err)
	}
	s.ring.Store(ring)
	return n, s.scrub(ctx)
}

// reseal seals every value of the sealed columns with ring's first key, unless it is sealed
// with it already. With plain, a value that does not open is taken for plaintext (a database
// sealed for the first time); without, it is an error.
func reseal(ctx context.Context, tx *sql.Tx, ring *secrets.Keyring, plain bool) (int, error) {
	n := 0
	for _, t := range state.SealedTables {
		m, err := resealTable(ctx, tx, ring, t, plain)
		if err != nil {
			return n, fmt.Errorf("table %s: %w", t.Table, err)
		}
		n += m
	}
	return n, nil
}

// resealTable reseals one table in batches of rows, so that memory stays bounded and no row is
// updated while the query that read it is still open.
func resealTable(ctx context.Context, tx *sql.Tx, ring *secrets.Keyring, t state.SealedTable, plain bool) (int, error) {
	const batch = 256
	type update struct {
		rowid int64
		col   string
		blob  []byte
	}
	query := `SELECT rowid, ` + strings.Join(t.Key, ", ") + `, ` + strings.Join(t.Cols, ", ") + ` FROM ` + t.Table +
		` WHERE rowid > ? ORDER BY rowid LIMIT ?`
	n := 0
	for last := int64(-1 << 63); ; {
		var ups []update
		rows, err := tx.QueryContext(ctx, query, last, batch)
		if err != nil {
			return n, err
		}
		count := 0
		for rows.Next() {
			count++
			key := make([]string, len(t.Key))
			blobs := make([][]byte, len(t.Cols))
			dest := []any{&last}
			for i := range key {
				dest = append(dest, &key[i])
			}
			for i := range blobs {
				dest = append(dest, &blobs[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return n, err
			}
			for i, b := range blobs {
				if b == nil {
					continue
				}
				a := state.SealAD(t.Table, t.Cols[i], key...)
				pt, err := ring.Open(b, a)
				switch id, _ := secrets.KeyID(b); {
				case err == nil && id == ring.PrimaryID():
					continue
				case err != nil && !plain:
					rows.Close()
					return n, fmt.Errorf("cannot open %s of %s: %w", t.Cols[i], strings.Join(key, " "), err)
				case err != nil:
					pt = b
				}
				ups = append(ups, update{last, t.Cols[i], ring.Seal(pt, a)})
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return n, err
		}
		for _, u := range ups {
			if _, err := tx.ExecContext(ctx, `UPDATE `+t.Table+` SET `+u.col+` = ? WHERE rowid = ?`, u.blob, u.rowid); err != nil {
				return n, err
			}
		}
		n += len(ups)
		if count < batch {
			return n, nil
		}
	}
}
