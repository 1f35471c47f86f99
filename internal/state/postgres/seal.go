package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/state"
)

// seal seals b for table.col of the row key; nil stays nil (NULL).
func (s *Store) seal(b []byte, table, col string, key ...string) []byte {
	if b == nil {
		return nil
	}
	return s.ring.Seal(b, state.SealAD(table, col, key...))
}

// open replaces the sealed *b of table.col of the row key by its plaintext; nil stays nil.
func (s *Store) open(b *[]byte, table, col string, key ...string) error {
	if *b == nil {
		return nil
	}
	pt, err := s.ring.Open(*b, state.SealAD(table, col, key...))
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
	err := tx.QueryRow(ctx, `SELECT value FROM keys WHERE name = $1`, state.SecretsCheckKey).Scan(&check)
	if errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, `INSERT INTO keys (name, value) VALUES ($1, $2)`, state.SecretsCheckKey,
			s.ring.Seal(state.SecretsCheckValue, state.SealAD("keys", "value", state.SecretsCheckKey)))
		if err != nil {
			return fmt.Errorf("cannot seal secrets: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot seal secrets: %w", err)
	}
	if _, err := s.ring.Open(check, state.SealAD("keys", "value", state.SecretsCheckKey)); err != nil {
		return fmt.Errorf("cannot seal secrets: the secrets key does not open this database (%w): give the key it was sealed with", err)
	}
	return nil
}
