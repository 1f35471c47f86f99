package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

const opCols = `id, stack, kind, status, status_reason, request, owner, lease_expires, started_at, ended_at`

func scanOp(sc interface{ Scan(...any) error }) (state.Operation, error) {
	var op state.Operation
	var l, s, e int64
	err := sc.Scan(&op.ID, &op.Stack, &op.Kind, &op.Status, &op.StatusReason, &op.Request, &op.Owner, &l, &s, &e)
	op.LeaseExpires, op.StartedAt, op.EndedAt = tm(l), tm(s), tm(e)
	return op, err
}

func busy(op state.Operation) *state.BusyError {
	return &state.BusyError{Stack: op.Stack, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
}

func (s *Store) StartOperation(ctx context.Context, op state.Operation) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanOp(tx.QueryRow(`SELECT `+opCols+` FROM operations WHERE stack = ? AND status = 'running'`, op.Stack))
		switch {
		case err == nil:
			return busy(cur)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("cannot start operation: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO operations (`+opCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			op.ID, op.Stack, op.Kind, state.Running, op.StatusReason, op.Request, op.Owner, ms(op.LeaseExpires), ms(op.StartedAt), 0); err != nil {
			return fmt.Errorf("cannot start operation: %w", err)
		}
		if _, err := tx.Exec(`UPDATE stacks SET operation = ? WHERE name = ?`, op.ID, op.Stack); err != nil {
			return fmt.Errorf("cannot start operation: %w", err)
		}
		return nil
	})
}

func (s *Store) ClaimOperation(ctx context.Context, id, owner string, leaseExpires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		op, err := scanOp(tx.QueryRow(`SELECT `+opCols+` FROM operations WHERE id = ?`, id))
		if err != nil {
			return notFound(err, "operation "+id)
		}
		if op.Status != state.Running {
			return fmt.Errorf("operation %s is %s: %w", id, op.Status, state.ErrNotFound)
		}
		if op.Owner != owner && time.Now().Before(op.LeaseExpires) {
			return busy(op)
		}
		_, err = tx.Exec(`UPDATE operations SET owner = ?, lease_expires = ? WHERE id = ?`, owner, ms(leaseExpires), id)
		return err
	})
}

func (s *Store) FinishOperation(ctx context.Context, id, status, reason string, at time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var stack string
		if err := tx.QueryRow(`SELECT stack FROM operations WHERE id = ?`, id).Scan(&stack); err != nil {
			return notFound(err, "operation "+id)
		}
		if _, err := tx.Exec(`UPDATE operations SET status = ?, status_reason = ?, ended_at = ? WHERE id = ?`, status, reason, ms(at), id); err != nil {
			return fmt.Errorf("cannot finish operation %s: %w", id, err)
		}
		_, err := tx.Exec(`UPDATE stacks SET operation = '' WHERE name = ? AND operation = ?`, stack, id)
		return err
	})
}

func (s *Store) GetOperation(ctx context.Context, id string) (state.Operation, error) {
	op, err := scanOp(s.r.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE id = ?`, id))
	if err != nil {
		return state.Operation{}, notFound(err, "operation "+id)
	}
	return op, nil
}

func (s *Store) ListRunningOperations(ctx context.Context) ([]state.Operation, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+opCols+` FROM operations WHERE status = 'running' ORDER BY started_at`)
	if err != nil {
		return nil, fmt.Errorf("cannot list operations: %w", err)
	}
	defer rows.Close()
	var out []state.Operation
	for rows.Next() {
		op, err := scanOp(rows)
		if err != nil {
			return nil, fmt.Errorf("cannot list operations: %w", err)
		}
		out = append(out, op)
	}
	return out, rows.Err()
}

// Events

func (s *Store) AppendEvent(ctx context.Context, e state.Event) (int64, error) {
	res, err := s.st.event.ExecContext(ctx, e.Stack, e.Operation, e.LogicalID, e.PhysicalID, e.Type, e.Status, e.Reason, ms(e.At))
	if err != nil {
		return 0, fmt.Errorf("cannot append event: %w", err)
	}
	return res.LastInsertId()
}

func (s *Store) ListEvents(ctx context.Context, stack string, after int64, limit int) ([]state.Event, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, stack, operation, logical_id, physical_id, type, status, reason, at FROM events
		WHERE stack = ? AND seq > ? ORDER BY seq LIMIT ?`, stack, after, limit)
	if err != nil {
		return nil, fmt.Errorf("cannot list events: %w", err)
	}
	defer rows.Close()
	var out []state.Event
	for rows.Next() {
		var e state.Event
		var at int64
		if err := rows.Scan(&e.Seq, &e.Stack, &e.Operation, &e.LogicalID, &e.PhysicalID, &e.Type, &e.Status, &e.Reason, &at); err != nil {
			return nil, fmt.Errorf("cannot list events: %w", err)
		}
		e.At = tm(at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Keys

func (s *Store) Key(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var k []byte
	err := s.r.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, name).Scan(&k)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("cannot read key %s: %w", name, err)
	}
	fresh, err := gen()
	if err != nil {
		return nil, fmt.Errorf("cannot generate key %s: %w", name, err)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR IGNORE INTO keys (name, value) VALUES (?, ?)`, name, fresh); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT value FROM keys WHERE name = ?`, name).Scan(&k)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot store key %s: %w", name, err)
	}
	return k, nil
}

// Custom-resource requests

const crCols = `id, stack, logical_id, body, expires, sent, response, responded_at`

func scanCR(sc interface{ Scan(...any) error }) (state.CustomRequest, error) {
	var r state.CustomRequest
	var e, at int64
	err := sc.Scan(&r.ID, &r.Stack, &r.LogicalID, &r.Body, &e, &r.Sent, &r.Response, &at)
	r.Expires, r.RespondedAt = tm(e), tm(at)
	return r, err
}

func (s *Store) PutCustomRequest(ctx context.Context, r state.CustomRequest) (state.CustomRequest, bool, error) {
	var stored state.CustomRequest
	var inserted bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT OR IGNORE INTO custom_requests (`+crCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Stack, r.LogicalID, r.Body, ms(r.Expires), r.Sent, r.Response, ms(r.RespondedAt))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		inserted = n == 1
		stored, err = scanCR(tx.QueryRow(`SELECT `+crCols+` FROM custom_requests WHERE id = ?`, r.ID))
		return err
	})
	if err != nil {
		return state.CustomRequest{}, false, fmt.Errorf("cannot put custom request %s: %w", r.ID, err)
	}
	return stored, inserted, nil
}

func (s *Store) MarkCustomRequestSent(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, `UPDATE custom_requests SET sent = 1 WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("cannot mark custom request %s sent: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("custom request %s: %w", id, state.ErrNotFound)
	}
	return nil
}

func (s *Store) GetCustomRequest(ctx context.Context, id string) (state.CustomRequest, error) {
	r, err := scanCR(s.r.QueryRowContext(ctx, `SELECT `+crCols+` FROM custom_requests WHERE id = ?`, id))
	if err != nil {
		return state.CustomRequest{}, notFound(err, "custom request "+id)
	}
	return r, nil
}

func (s *Store) SaveCustomResponse(ctx context.Context, id string, body []byte, at time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE custom_requests SET response = ?, responded_at = ? WHERE id = ? AND response IS NULL`,
		body, ms(at), id)
	if err != nil {
		return false, fmt.Errorf("cannot save response of %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	if _, err := s.GetCustomRequest(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}
