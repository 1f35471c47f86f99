package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/state"
)

// The sealing of this file is the SQLite backend's (internal/state/sqlite/seal.go): the same
// columns, bound to their rows by the same associated data, so that a sealed blob copied from
// one backend's row to the other's opens there. ad, sealedTables and the check row are
// duplicated rather than shared, to leave the SQLite package as it is; TestSealedLikeSQLite
// copies blobs from a SQLite database into this one and fails if the two ever drift apart.

// sealedTable lists a table's columns that may hold a user's secret values and the key
// columns that bind their blobs to the row.
type sealedTable struct {
	table string
	key   []string // TEXT columns naming the row, in the order seal and open pass them
	cols  []string
}

var sealedTables = []sealedTable{
	{"stacks", []string{"name"}, []string{"parameters", "outputs", "template", "providers"}},
	{"resources", []string{"stack", "name"}, []string{"props", "outputs", "private"}},
	{"journal", []string{"operation", "stack", "step", "phase", "token"}, []string{"detail"}},
	{"operations", []string{"id"}, []string{"request"}},
	{"custom_requests", []string{"id"}, []string{"body", "response"}},
	{"keys", []string{"name"}, []string{"value"}},
	{"functions", []string{"name"}, []string{"env"}},
	// Not sealed, as in SQLite: the functions' other columns, the registry, events, accounts
	// (tokens are stored as hashes).
}

// checkKey is a keys row sealed with the ring; opening it proves, at Open, that the ring is
// the database's. A PostgreSQL database is sealed from its first Open, so it has the row from
// then on.
const checkKey = "secrets-check"

var checkValue = []byte("cairn sealed state")

// ad is the associated data of a blob of table.col in the row named by key.
func ad(table, col string, key ...string) []byte {
	b := make([]byte, 0, 64)
	for _, p := range append([]string{table, col}, key...) {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

// seal seals b for table.col of the row key; nil stays nil (NULL).
func (s *Store) seal(b []byte, table, col string, key ...string) []byte {
	if b == nil {
		return nil
	}
	return s.ring.Seal(b, ad(table, col, key...))
}

// open replaces the sealed *b of table.col of the row key by its plaintext; nil stays nil.
func (s *Store) open(b *[]byte, table, col string, key ...string) error {
	if *b == nil {
		return nil
	}
	pt, err := s.ring.Open(*b, ad(table, col, key...))
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

// checkRing opens the database's check row with the ring, or writes the row into a database
// that has none (a new one). It runs in migrate's transaction, under its lock.
func (s *Store) checkRing(ctx context.Context, tx pgx.Tx) error {
	var check []byte
	err := tx.QueryRow(ctx, `SELECT value FROM keys WHERE name = $1`, checkKey).Scan(&check)
	if errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, `INSERT INTO keys (name, value) VALUES ($1, $2)`, checkKey,
			s.ring.Seal(checkValue, ad("keys", "value", checkKey)))
		if err != nil {
			return fmt.Errorf("cannot seal secrets: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot seal secrets: %w", err)
	}
	if _, err := s.ring.Open(check, ad("keys", "value", checkKey)); err != nil {
		return fmt.Errorf("cannot seal secrets: the secrets key does not open this database (%w): give the key it was sealed with", err)
	}
	return nil
}
