package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

const opCols = `id, stack, kind, status, status_reason, request, owner, lease_expires, started_at, ended_at`

func scanOp(sc scanner) (state.Operation, error) {
	var op state.Operation
	var l, s, e int64
	err := sc.Scan(&op.ID, &op.Stack, &op.Kind, &op.Status, &op.StatusReason, &op.Request, &op.Owner, &l, &s, &e)
	op.LeaseExpires, op.StartedAt, op.EndedAt = tm(l), tm(s), tm(e)
	return op, err
}

func busy(op state.Operation) *state.BusyError {
	_, name := state.SplitStackKey(op.Stack)
	return &state.BusyError{Stack: name, Owner: op.Owner, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
}

// StartOperation inserts op as Running. The check for a running operation and the insert
// share one write transaction, and one_running_operation_per_stack backs them up.
func (s *Store) StartOperation(ctx context.Context, op state.Operation) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		cur, err := scanOp(tx.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE stack = ? AND status = 'running'`,
			op.Stack))
		switch {
		case err == nil:
			return busy(cur)
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO operations (`+opCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
			op.ID, op.Stack, op.Kind, state.Running, op.StatusReason, s.seal(op.Request, "operations", "request", op.ID), op.Owner, ms(op.LeaseExpires),
			ms(op.StartedAt))
		return err
	})
	var b *state.BusyError
	if err != nil && !errors.As(err, &b) {
		return fmt.Errorf("cannot start operation %s on stack %s: %w", op.ID, op.Stack, err)
	}
	return err
}

// ClaimOperation compares the lease with time.Now. Claiming an operation that is no longer
// running fails with an error that is not a *state.BusyError.
func (s *Store) ClaimOperation(ctx context.Context, id, owner string, leaseExpires time.Time) error {
	return s.setOwner(ctx, "claim", id, owner, leaseExpires, func(op state.Operation) bool {
		return op.Owner == owner || !time.Now().Before(op.LeaseExpires)
	})
}

// TakeOverOperation takes a running operation from prev, a dead holder.
func (s *Store) TakeOverOperation(ctx context.Context, id, prev, owner string, leaseExpires time.Time) error {
	return s.setOwner(ctx, "take over", id, owner, leaseExpires, func(op state.Operation) bool {
		return op.Owner == prev || op.Owner == owner
	})
}

// setOwner makes owner the holder of running operation id when may allows it, in one write
// transaction; otherwise it returns a *state.BusyError naming the holder.
func (s *Store) setOwner(ctx context.Context, verb, id, owner string, leaseExpires time.Time, may func(state.Operation) bool) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		op, err := scanOp(tx.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE id = ?`, id))
		if err != nil {
			return noRow(err)
		}
		if op.Status != state.Running {
			return fmt.Errorf("it is %s", op.Status)
		}
		if !may(op) {
			return busy(op)
		}
		_, err = tx.ExecContext(ctx, `UPDATE operations SET owner = ?, lease_expires = ? WHERE id = ?`,
			owner, ms(leaseExpires), id)
		return err
	})
	var b *state.BusyError
	if err != nil && !errors.As(err, &b) {
		return fmt.Errorf("cannot %s operation %s: %w", verb, id, err)
	}
	return err
}

// FinishOperation ends a running operation; status must be Succeeded or Failed. Finishing an
// operation that already ended is an error and changes nothing.
func (s *Store) FinishOperation(ctx context.Context, id, status, reason string, at time.Time) error {
	if status != state.Succeeded && status != state.Failed {
		return fmt.Errorf("cannot finish operation %s as %q: want %s or %s", id, status, state.Succeeded, state.Failed)
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var cur string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM operations WHERE id = ?`, id).Scan(&cur); err != nil {
			return noRow(err)
		}
		if cur != state.Running {
			return fmt.Errorf("it is already %s", cur)
		}
		_, err := tx.ExecContext(ctx, `UPDATE operations SET status = ?, status_reason = ?, ended_at = ? WHERE id = ?`,
			status, reason, ms(at), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("cannot finish operation %s: %w", id, err)
	}
	return nil
}

func (s *Store) GetOperation(ctx context.Context, id string) (state.Operation, error) {
	op, err := scanOp(s.r.QueryRowContext(ctx, `SELECT `+opCols+` FROM operations WHERE id = ?`, id))
	if err == nil {
		err = s.openOp(&op)
	}
	if err != nil {
		return state.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, noRow(err))
	}
	return op, nil
}

// watchQuery reads an operation's small columns through operations_small, and its stack's
// status (which its row stores before the large columns).
const watchQuery = `SELECT o.id, o.stack, o.kind, o.status, o.status_reason, o.owner, o.lease_expires, o.started_at,
	o.ended_at, COALESCE(s.status, '') FROM operations o INDEXED BY operations_small
	LEFT JOIN stacks s ON s.name = o.stack WHERE o.id = ?`

// WatchOperation reads the operation's small columns and its stack's status in one query.
func (s *Store) WatchOperation(ctx context.Context, id string) (state.Operation, string, error) {
	var op state.Operation
	var l, st, e int64
	var stackStatus string
	err := s.r.QueryRowContext(ctx, watchQuery, id).Scan(&op.ID, &op.Stack, &op.Kind, &op.Status, &op.StatusReason, &op.Owner, &l, &st, &e,
		&stackStatus)
	if err != nil {
		return state.Operation{}, "", fmt.Errorf("cannot get operation %s: %w", id, noRow(err))
	}
	op.LeaseExpires, op.StartedAt, op.EndedAt = tm(l), tm(st), tm(e)
	return op, stackStatus, nil
}

// ListRunningOperations lists running operations, oldest first.
func (s *Store) ListRunningOperations(ctx context.Context) ([]state.Operation, error) {
	out, err := list(ctx, s.r, scanOp, `SELECT `+opCols+` FROM operations WHERE status = 'running' ORDER BY started_at, id`)
	if err == nil {
		err = openAll(out, s.openOp)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list running operations: %w", err)
	}
	return out, nil
}

func (s *Store) AppendEvent(ctx context.Context, e state.Event) (int64, error) {
	var seq int64
	err := s.batched(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, s.st.event).ExecContext(ctx, e.Stack, e.Operation, e.LogicalID, e.PhysicalID, e.Type,
			e.Status, e.Reason, ms(e.At))
		if err == nil {
			seq, err = res.LastInsertId()
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cannot append event of stack %s: %w", e.Stack, err)
	}
	return seq, nil
}

func scanEvent(sc scanner) (state.Event, error) {
	var e state.Event
	var at int64
	err := sc.Scan(&e.Seq, &e.Stack, &e.Operation, &e.LogicalID, &e.PhysicalID, &e.Type, &e.Status, &e.Reason, &at)
	e.At = tm(at)
	return e, err
}

func (s *Store) ListEvents(ctx context.Context, stack string, after int64, limit int) ([]state.Event, error) {
	if limit <= 0 {
		limit = -1 // no limit
	}
	out, err := list(ctx, s.r, scanEvent, `SELECT seq, stack, operation, logical_id, physical_id, type, status, reason, at
		FROM events WHERE stack = ? AND seq > ? ORDER BY seq LIMIT ?`, stack, after, limit)
	if err != nil {
		return nil, fmt.Errorf("cannot list events of stack %s: %w", stack, err)
	}
	return out, nil
}

func (s *Store) LastEventSeq(ctx context.Context, stack string) (int64, error) {
	var seq int64
	if err := s.r.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE stack = ?`, stack).Scan(&seq); err != nil {
		return 0, fmt.Errorf("cannot read events of stack %s: %w", stack, err)
	}
	return seq, nil
}

// Key reads the key and calls gen only when it is absent. Of callers racing to create it, the
// first to commit wins and the others get its key.
func (s *Store) Key(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var k []byte
	err := s.r.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, name).Scan(&k)
	if err == nil {
		err = s.open(&k, "keys", "value", name)
	}
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`,
			name, s.seal(fresh, "keys", "value", name)); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, name).Scan(&k); err != nil {
			return err
		}
		return s.open(&k, "keys", "value", name)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot store key %s: %w", name, err)
	}
	return k, nil
}

const crCols = `id, stack, logical_id, body, expires, sent, response, responded_at`

func scanCR(sc scanner) (state.CustomRequest, error) {
	var r state.CustomRequest
	var e, at int64
	err := sc.Scan(&r.ID, &r.Stack, &r.LogicalID, &r.Body, &e, &r.Sent, &r.Response, &at)
	r.Expires, r.RespondedAt = tm(e), tm(at)
	return r, err
}

func (s *Store) PutCustomRequest(ctx context.Context, r state.CustomRequest) (state.CustomRequest, bool, error) {
	var stored state.CustomRequest
	var inserted bool
	err := s.batched(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO custom_requests (`+crCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Stack, r.LogicalID, s.seal(r.Body, "custom_requests", "body", r.ID), ms(r.Expires), r.Sent,
			s.seal(r.Response, "custom_requests", "response", r.ID), ms(r.RespondedAt))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		inserted = n == 1
		if stored, err = scanCR(tx.QueryRowContext(ctx, `SELECT `+crCols+` FROM custom_requests WHERE id = ?`, r.ID)); err != nil {
			return err
		}
		return s.openCR(&stored)
	})
	if err != nil {
		return state.CustomRequest{}, false, fmt.Errorf("cannot put custom request %s: %w", r.ID, err)
	}
	return stored, inserted, nil
}

func (s *Store) MarkCustomRequestSent(ctx context.Context, id string) error {
	err := s.batched(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE custom_requests SET sent = 1 WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, state.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot mark custom request %s sent: %w", id, err)
	}
	return nil
}

func (s *Store) GetCustomRequest(ctx context.Context, id string) (state.CustomRequest, error) {
	r, err := scanCR(s.r.QueryRowContext(ctx, `SELECT `+crCols+` FROM custom_requests WHERE id = ?`, id))
	if err == nil {
		err = s.openCR(&r)
	}
	if err != nil {
		return state.CustomRequest{}, fmt.Errorf("cannot get custom request %s: %w", id, noRow(err))
	}
	return r, nil
}

// SaveCustomResponse stores body unless a response is stored; a nil body is stored as an
// empty one, so it too counts as the first response.
func (s *Store) SaveCustomResponse(ctx context.Context, id string, body []byte, at time.Time) (bool, error) {
	var first bool
	if body == nil {
		body = []byte{} // sealed, so that the stored row is not NULL
	}
	err := s.batched(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE custom_requests SET response = COALESCE(?, x''), responded_at = ?
			WHERE id = ? AND response IS NULL`, s.seal(body, "custom_requests", "response", id), ms(at), id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 1 {
			first = n == 1
			return err
		}
		var one int
		return noRow(tx.QueryRowContext(ctx, `SELECT 1 FROM custom_requests WHERE id = ?`, id).Scan(&one))
	})
	if err != nil {
		return false, fmt.Errorf("cannot save response to custom request %s: %w", id, err)
	}
	return first, nil
}
