package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"sync/atomic"
)

// Group commit. A deploy's concurrent steps each write a journal entry, a resource row and
// events; one small transaction each costs a WAL append of the same few pages per write.
// The committer runs the writes that are waiting when it starts a transaction together, in
// one transaction, and answers each caller only after that transaction committed: a write is
// durable when its call returns, as before, and a killed process loses only writes whose
// callers were never answered. A write that fails does not fail its neighbours: the batch is
// rolled back and run again without it (see commit).

// maxBatch bounds one transaction: enough to absorb any parallelism cairn runs with.
const maxBatch = 256

// pending is one caller's write waiting for the committer.
type pending struct {
	ctx  context.Context
	fn   func(context.Context, *sql.Tx) error // must be safe to run again after a rollback
	err  error
	done chan struct{}
}

// errClosed is returned by writes submitted after Close.
var errClosed = errors.New("the state db is closed")

// committer owns the writer connection's batched transactions.
type committer struct {
	reqs    chan *pending
	quit    chan struct{}
	stopped chan struct{}
	// waiting counts writes submitted and not yet answered; transactions counts the
	// transactions run. Both are for tests and benchmarks.
	waiting, transactions atomic.Int64
}

func (c *committer) queued() int64 { return c.waiting.Load() }

func (s *Store) startCommitter() {
	s.c = &committer{reqs: make(chan *pending), quit: make(chan struct{}), stopped: make(chan struct{})}
	go s.commitLoop()
}

// stopCommitter ends the loop after the batch it is running, if any.
func (s *Store) stopCommitter() {
	if s.c == nil {
		return
	}
	select {
	case <-s.c.quit:
	default:
		close(s.c.quit)
	}
	<-s.c.stopped
}

// batched runs fn in a write transaction shared with the writes of other callers waiting at
// the same time, and returns once that transaction committed (or fn failed on its own).
func (s *Store) batched(ctx context.Context, fn func(context.Context, *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := &pending{ctx: ctx, fn: fn, done: make(chan struct{})}
	s.c.waiting.Add(1)
	defer s.c.waiting.Add(-1)
	select {
	case s.c.reqs <- p:
	case <-s.c.quit:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	<-p.done // once taken, a write is always answered, so its caller knows its fate
	return p.err
}

func (s *Store) commitLoop() {
	defer close(s.c.stopped)
	batch := make([]*pending, 0, maxBatch)
	for {
		select {
		case p := <-s.c.reqs:
			batch = append(batch[:0], p)
		case <-s.c.quit:
			return
		}
		for yields := 0; len(batch) < maxBatch; {
			select {
			case p := <-s.c.reqs:
				batch = append(batch, p)
				continue
			default:
			}
			if yields++; yields > 2 {
				break
			}
			// Steps that are about to write are often runnable: let them submit first.
			runtime.Gosched()
		}
		s.commit(batch)
		for i, p := range batch {
			close(p.done)
			batch[i] = nil
		}
	}
}

// commit runs batch in one transaction. A write that fails is answered with its error and the
// transaction is run again without it: the others see what they would have seen alone, the
// writes before them. When the commit itself fails, each write runs alone.
func (s *Store) commit(batch []*pending) {
	live := make([]*pending, 0, len(batch))
	for _, p := range batch {
		if p.err = p.ctx.Err(); p.err == nil {
			live = append(live, p)
		}
	}
	for len(live) > 0 {
		failed := -1
		s.c.transactions.Add(1)
		err := s.tx(context.Background(), func(tx *sql.Tx) error {
			for i, p := range live {
				if err := p.fn(p.ctx, tx); err != nil {
					failed, p.err = i, err
					return err
				}
			}
			return nil
		})
		switch {
		case err == nil:
			return
		case failed >= 0:
			live = append(live[:failed], live[failed+1:]...)
		default:
			for _, p := range live {
				s.c.transactions.Add(1)
				p.err = s.tx(context.Background(), func(tx *sql.Tx) error { return p.fn(p.ctx, tx) })
			}
			return
		}
	}
}
