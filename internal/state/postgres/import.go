package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/state"
)

// importOrder lists the tables Import copies, a table before those that reference it.
var importOrder = []string{"stacks", "resources", "journal", "operations", "events", "keys", "custom_requests",
	"private_providers", "private_provider_versions", "functions", "tokens", "grants", "audit"}

// ErrNotEmpty is returned by Import into a database that holds state already.
var ErrNotEmpty = errors.New("the PostgreSQL database holds cairn state already")

// Import copies every row of cairn's SQLite state database src (read through database/sql,
// at the schema version this cairn writes: open it with the sqlite backend first) into the
// store's database, which must hold no state yet. Sealed columns are copied as they are: both
// backends bind a sealed value to the same table, column and key, so the same keyring opens
// them. Identity sequences go on after SQLite's, so no seq is handed out twice. It runs in one
// transaction: all or nothing. It returns the rows copied per table.
func (s *Store) Import(ctx context.Context, src *sql.DB) (map[string]int64, error) {
	counts := map[string]int64{}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for _, table := range importOrder {
			var n int64
			q := `SELECT count(*) FROM ` + table
			if table == "keys" {
				q += ` WHERE name <> '` + state.SecretsCheckKey + `'` // Open wrote its own check
			}
			if err := tx.QueryRow(ctx, q).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return fmt.Errorf("%w (table %s has %d rows): import into an empty database", ErrNotEmpty, table, n)
			}
		}
		// The source's check key, sealed with the same ring, replaces the one Open wrote.
		if _, err := tx.Exec(ctx, `DELETE FROM keys`); err != nil {
			return err
		}
		for _, table := range importOrder {
			n, err := copyTable(ctx, tx, src, table)
			if err != nil {
				return fmt.Errorf("cannot import table %s: %w", table, err)
			}
			counts[table] = n
		}
		return continueSequences(ctx, tx, src)
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}

// copyTable copies table's rows, column by column as PostgreSQL names them, converting
// SQLite's integers to booleans and its text to bytea where the column says so.
func copyTable(ctx context.Context, tx pgx.Tx, src *sql.DB, table string) (int64, error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return 0, err
	}
	var cols, types []string
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			rows.Close()
			return 0, err
		}
		cols, types = append(cols, c), append(types, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	q := `SELECT `
	for i, c := range cols {
		if i > 0 {
			q += ", "
		}
		q += `"` + c + `"`
	}
	srows, err := src.QueryContext(ctx, q+` FROM `+table)
	if err != nil {
		return 0, fmt.Errorf("cannot read SQLite (is it at this cairn's schema version?): %w", err)
	}
	defer srows.Close()
	var out [][]any
	for srows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := srows.Scan(ptrs...); err != nil {
			return 0, err
		}
		for i, v := range vals {
			vals[i] = convert(v, types[i])
		}
		out = append(out, vals)
	}
	if err := srows.Err(); err != nil {
		return 0, err
	}
	return tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(out))
}

// convert turns a value database/sql read from SQLite into one of PostgreSQL type typ.
func convert(v any, typ string) any {
	switch typ {
	case "boolean":
		if n, ok := v.(int64); ok {
			return n != 0
		}
	case "bytea":
		if s, ok := v.(string); ok {
			return []byte(s)
		}
	case "text":
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	}
	return v
}

// continueSequences sets each identity's next value past SQLite's AUTOINCREMENT counter
// (which remembers rows deleted since) and past every seq copied.
func continueSequences(ctx context.Context, tx pgx.Tx, src *sql.DB) error {
	last := map[string]int64{}
	rows, err := src.QueryContext(ctx, `SELECT name, seq FROM sqlite_sequence`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		var seq int64
		if err := rows.Scan(&name, &seq); err != nil {
			rows.Close()
			return err
		}
		last[name] = seq
	}
	rows.Close()
	for _, table := range []string{"journal", "events", "private_providers", "private_provider_versions", "audit"} {
		var top int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM `+table).Scan(&top); err != nil {
			return err
		}
		if n := max(top, last[table]); n > 0 {
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'seq'), $2)`, table, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// Tables lists the tables Import copies.
func Tables() []string { return slices.Clone(importOrder) }

// Count returns the rows of table (one of Tables).
func (s *Store) Count(ctx context.Context, table string) (int64, error) {
	if !slices.Contains(importOrder, table) {
		return 0, fmt.Errorf("no table %q", table)
	}
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n)
	return n, err
}
