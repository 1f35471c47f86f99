package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// busyCols are what a *state.BusyError says of an operation.
const busyCols = `id, stack, kind, owner, started_at`

func scanBusy(sc scanner) (state.Operation, error) {
	var op state.Operation
	var started int64
	err := sc.Scan(&op.ID, &op.Stack, &op.Kind, &op.Owner, &started)
	op.StartedAt = tm(started)
	return op, err
}

// startAttempts bounds StartOperation's loop: each turn needs another operation of the stack
// to have started and ended between two statements.
const startAttempts = 10

// StartOperation inserts op as Running unless one_running_operation_per_stack holds another
// running operation of its stack: the insert does nothing then (ON CONFLICT, which waits for
// a concurrent insert to commit or roll back) and the running operation is read for the
// *state.BusyError. Should that one have ended in between, it tries again.
func (s *Store) StartOperation(ctx context.Context, op state.Operation) error {
	request := s.seal(op.Request, "operations", "request", op.ID)
	for range startAttempts {
		var inserted bool
		var cur state.Operation
		err := s.batch(ctx, func(b *pgx.Batch) {
			b.Queue(`INSERT INTO operations (`+opCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, `+nowMS+` + $8, $9, 0)
				ON CONFLICT (stack) WHERE status = 'running' DO NOTHING`,
				op.ID, op.Stack, op.Kind, state.Running, op.StatusReason, request, op.Owner, leaseTTL(op.LeaseExpires), ms(op.StartedAt))
			// A statement of its own sees the row a concurrent start committed.
			b.Queue(`SELECT `+busyCols+` FROM operations WHERE stack = $1 AND status = 'running'`, op.Stack)
			b.Queue(notifyQuery, op.Stack)
		}, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			inserted = tag.RowsAffected() == 1
			if cur, err = scanBusy(br.QueryRow()); err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			_, err = br.Exec()
			return err
		})
		switch {
		case err != nil:
			return fmt.Errorf("cannot start operation %s on stack %s: %w", op.ID, op.Stack, err)
		case inserted:
			return nil
		case cur.ID != "":
			return busy(cur)
		}
	}
	return fmt.Errorf("cannot start operation %s on stack %s: its operations keep changing", op.ID, op.Stack)
}

// nowMS is the database's clock in unix milliseconds.
const nowMS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

// leaseTTL is how long a lease ending at expires lasts from now, by this process's clock: the
// lease stored ends that long after the database's now, so that a replica whose clock is off
// neither grants itself a lease others think expired nor one that lasts too long.
func leaseTTL(expires time.Time) int64 {
	if expires.IsZero() {
		return 0
	}
	return time.Until(expires).Milliseconds()
}

// ClaimOperation compares the lease with the database's clock: replicas that share the
// database share that clock, where each one's own may drift (SQLite's store, in one process,
// uses time.Now). Claiming an operation that is no longer running fails with an error that
// is not a *state.BusyError.
func (s *Store) ClaimOperation(ctx context.Context, id, owner string, leaseExpires time.Time) error {
	return s.setOwner(ctx, "claim", id, owner, leaseExpires, func(op state.Operation, now int64) bool {
		return op.Owner == owner || now >= ms(op.LeaseExpires)
	})
}

// TakeOverOperation takes a running operation from prev, a dead holder.
func (s *Store) TakeOverOperation(ctx context.Context, id, prev, owner string, leaseExpires time.Time) error {
	return s.setOwner(ctx, "take over", id, owner, leaseExpires, func(op state.Operation, _ int64) bool {
		return op.Owner == prev || op.Owner == owner
	})
}

// setOwner makes owner the holder of running operation id when may allows it, with the row
// locked (FOR UPDATE) from the check to the commit; otherwise it returns a *state.BusyError
// naming the holder.
func (s *Store) setOwner(ctx context.Context, verb, id, owner string, leaseExpires time.Time, may func(state.Operation, int64) bool) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var op state.Operation
		var status string
		var lease, started, now int64
		err := tx.QueryRow(ctx, `SELECT id, stack, kind, status, owner, lease_expires, started_at, `+nowMS+`
			FROM operations WHERE id = $1 FOR UPDATE`, id).Scan(&op.ID, &op.Stack, &op.Kind, &status, &op.Owner, &lease, &started, &now)
		if err != nil {
			return noRow(err)
		}
		op.LeaseExpires, op.StartedAt = tm(lease), tm(started)
		if status != state.Running {
			return fmt.Errorf("it is %s", status)
		}
		if !may(op, now) {
			return busy(op)
		}
		_, err = tx.Exec(ctx, `UPDATE operations SET owner = $1, lease_expires = `+nowMS+` + $2 WHERE id = $3`, owner, leaseTTL(leaseExpires), id)
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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var cur, stack string
		if err := tx.QueryRow(ctx, `SELECT status, stack FROM operations WHERE id = $1 FOR UPDATE`, id).Scan(&cur, &stack); err != nil {
			return noRow(err)
		}
		if cur != state.Running {
			return fmt.Errorf("it is already %s", cur)
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE operations SET status = $1, status_reason = $2, ended_at = $3 WHERE id = $4`, status, reason, ms(at), id)
		b.Queue(notifyQuery, stack)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("cannot finish operation %s: %w", id, err)
	}
	return nil
}

func (s *Store) GetOperation(ctx context.Context, id string) (state.Operation, error) {
	op, err := scanOp(s.queryRow(ctx, `SELECT `+opCols+` FROM operations WHERE id = $1`, id))
	if err == nil {
		err = s.openOp(&op)
	}
	if err != nil {
		return state.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, noRow(err))
	}
	return op, nil
}

// WatchOperation reads the operation's small columns and its stack's status in one query.
func (s *Store) WatchOperation(ctx context.Context, id string) (state.Operation, string, error) {
	var op state.Operation
	var l, st, e int64
	var stackStatus string
	err := s.queryRow(ctx, `SELECT o.id, o.stack, o.kind, o.status, o.status_reason, o.owner, o.lease_expires,
		o.started_at, o.ended_at, COALESCE(s.status, '') FROM operations o LEFT JOIN stacks s ON s.name = o.stack
		WHERE o.id = $1`, id).Scan(&op.ID, &op.Stack, &op.Kind, &op.Status, &op.StatusReason, &op.Owner, &l, &st, &e, &stackStatus)
	if err != nil {
		return state.Operation{}, "", fmt.Errorf("cannot get operation %s: %w", id, noRow(err))
	}
	op.LeaseExpires, op.StartedAt, op.EndedAt = tm(l), tm(st), tm(e)
	return op, stackStatus, nil
}

// ListRunningOperations lists running operations, oldest first.
func (s *Store) ListRunningOperations(ctx context.Context) ([]state.Operation, error) {
	out, err := list(ctx, s, scanOp, `SELECT `+opCols+` FROM operations WHERE status = 'running' ORDER BY started_at, id`)
	if err == nil {
		err = openAll(out, s.openOp)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list running operations: %w", err)
	}
	return out, nil
}

// AppendEvent inserts e under its stack's advisory lock: the lock is taken before the
// sequence hands out Seq and held until the commit, so a stack's events commit in Seq order
// and a client that read up to Seq n never misses an event below n committed after. It
// announces the event once committed, with the others of its stack at most every
// announceEvery (watch.go).
func (s *Store) AppendEvent(ctx context.Context, e state.Event) (int64, error) {
	var seq int64
	err := s.grouped(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, eventsLock, e.Stack)
		b.Queue(`INSERT INTO events (stack, operation, logical_id, physical_id, type, status, reason, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq`,
			e.Stack, e.Operation, e.LogicalID, e.PhysicalID, e.Type, e.Status, e.Reason, ms(e.At))
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("cannot append event of stack %s: %w", e.Stack, err)
	}
	s.events.announce(e.Stack)
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
	if badKey(stack) {
		return nil, nil
	}
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	out, err := list(ctx, s, scanEvent, `SELECT seq, stack, operation, logical_id, physical_id, type, status, reason, at
		FROM events WHERE stack = $1 AND seq > $2 ORDER BY seq LIMIT $3`, stack, after, lim)
	if err != nil {
		return nil, fmt.Errorf("cannot list events of stack %s: %w", stack, err)
	}
	return out, nil
}

func (s *Store) LastEventSeq(ctx context.Context, stack string) (int64, error) {
	if badKey(stack) {
		return 0, nil
	}
	var seq int64
	if err := s.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events WHERE stack = $1`, stack).Scan(&seq); err != nil {
		return 0, fmt.Errorf("cannot read events of stack %s: %w", stack, err)
	}
	return seq, nil
}

// Key reads the key and calls gen only when it is absent. Of callers racing to create it, the
// first to commit wins (ON CONFLICT waits for it) and the others read its key.
func (s *Store) Key(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var k []byte
	err := s.queryRow(ctx, `SELECT value FROM keys WHERE name = $1`, name).Scan(&k)
	if err == nil {
		err = s.open(&k, "keys", "value", name)
	}
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("cannot read key %s: %w", name, err)
	}
	fresh, err := gen()
	if err != nil {
		return nil, fmt.Errorf("cannot generate key %s: %w", name, err)
	}
	sealed := s.seal(fresh, "keys", "value", name)
	err = s.batch(ctx, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, sealed)
		b.Queue(`SELECT value FROM keys WHERE name = $1`, name)
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&k)
	})
	if err == nil {
		err = s.open(&k, "keys", "value", name)
	}
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
	body, response := s.seal(r.Body, "custom_requests", "body", r.ID), s.seal(r.Response, "custom_requests", "response", r.ID)
	err := s.batch(ctx, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO custom_requests (`+crCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.Stack, r.LogicalID, body, ms(r.Expires), r.Sent, response, ms(r.RespondedAt))
		b.Queue(`SELECT `+crCols+` FROM custom_requests WHERE id = $1`, r.ID)
	}, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		inserted = tag.RowsAffected() == 1
		stored, err = scanCR(br.QueryRow())
		return err
	})
	if err == nil {
		err = s.openCR(&stored)
	}
	if err != nil {
		return state.CustomRequest{}, false, fmt.Errorf("cannot put custom request %s: %w", r.ID, err)
	}
	return stored, inserted, nil
}

func (s *Store) MarkCustomRequestSent(ctx context.Context, id string) error {
	tag, err := s.exec(ctx, `UPDATE custom_requests SET sent = TRUE WHERE id = $1`, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("cannot mark custom request %s sent: %w", id, err)
	}
	return nil
}

func (s *Store) GetCustomRequest(ctx context.Context, id string) (state.CustomRequest, error) {
	r, err := scanCR(s.queryRow(ctx, `SELECT `+crCols+` FROM custom_requests WHERE id = $1`, id))
	if err == nil {
		err = s.openCR(&r)
	}
	if err != nil {
		return state.CustomRequest{}, fmt.Errorf("cannot get custom request %s: %w", id, noRow(err))
	}
	return r, nil
}

// SaveCustomResponse stores body unless a response is stored; a nil body is stored as an
// empty one, so it too counts as the first response. Of concurrent updates, the later ones
// wait for the first's row lock and then see its response: only one is first.
func (s *Store) SaveCustomResponse(ctx context.Context, id string, body []byte, at time.Time) (bool, error) {
	if body == nil {
		body = []byte{} // sealed, so that the stored row is not NULL
	}
	sealed := s.seal(body, "custom_requests", "response", id)
	// One statement: the first response is stored and announced (ResponseChannel) in one
	// commit; only a refused one looks whether the request exists at all.
	var saved int
	err := s.batch(ctx, func(b *pgx.Batch) {
		b.Queue(`WITH u AS (UPDATE custom_requests SET response = $1, responded_at = $2
				WHERE id = $3 AND response IS NULL RETURNING id)
			SELECT count(pg_notify('`+ResponseChannel+`', id)) FROM u`, sealed, ms(at), id)
	}, func(br pgx.BatchResults) error { return br.QueryRow().Scan(&saved) })
	first, exists := saved == 1, true
	if err == nil && !first {
		err = s.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM custom_requests WHERE id = $1)`, id).Scan(&exists)
	}
	if err == nil && !exists {
		err = state.ErrNotFound
	}
	if err != nil {
		return false, fmt.Errorf("cannot save response to custom request %s: %w", id, err)
	}
	return first, nil
}
