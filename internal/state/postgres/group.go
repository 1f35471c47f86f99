package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Group commit: the journal and event appends of concurrent callers (every resource step of
// every running operation) are sent as one pipeline, which PostgreSQL runs in one implicit
// transaction, as the SQLite backend batches its writes (sqlite/batch.go). Each commit costs
// PostgreSQL a WAL flush and a round trip; a resource step makes four such appends, so under
// load most of the database's time went to commits.
//
// A group that fails is rolled back whole, so nothing of it committed: its appends are then
// run one by one, and a fenced one fails alone. When the session died after results were read
// the commit is in doubt, and every append of the group gets the error, as a lone append would.

// maxGroup bounds the appends of one group.
const maxGroup = 128

// groupTimeout bounds one group's round trip.
const groupTimeout = 30 * time.Second

// appendReq is one caller's statements and the reading of their results.
type appendReq struct {
	add  func(*pgx.Batch)
	read func(pgx.BatchResults) error
	done chan error
}

var errClosed = errors.New("the state store is closed")

// grouped runs add and read as batch does, in a group with the appends of concurrent callers.
// Once queued, an append is waited for whatever ctx says: it may commit.
func (s *Store) grouped(ctx context.Context, add func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	r := &appendReq{add: add, read: read, done: make(chan error, 1)}
	select {
	case s.appends <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		return errClosed
	}
	return <-r.done
}

// committer runs the groups, one at a time, until the store closes.
func (s *Store) committer() {
	defer close(s.committerDone)
	for {
		var group []*appendReq
		select {
		case r := <-s.appends:
			group = append(group, r)
		case <-s.closed:
			s.failQueued()
			return
		}
	fill:
		for len(group) < maxGroup {
			select {
			case r := <-s.appends:
				group = append(group, r)
			default:
				break fill
			}
		}
		s.runGroup(group)
	}
}

// failQueued answers the appends still queued at Close.
func (s *Store) failQueued() {
	for {
		select {
		case r := <-s.appends:
			r.done <- errClosed
		default:
			return
		}
	}
}

func (s *Store) runGroup(group []*appendReq) {
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	if len(group) == 1 {
		group[0].done <- s.batch(ctx, group[0].add, group[0].read)
		return
	}
	b := &pgx.Batch{}
	for _, r := range group {
		r.add(b)
	}
	br := &countingResults{BatchResults: s.pool.SendBatch(ctx, b)}
	var err error
	for _, r := range group {
		if err = r.read(br); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		for _, r := range group {
			r.done <- nil
		}
		return
	}
	if terminated(err) {
		s.pool.Reset()
	}
	if br.ok > 0 && !rolledBack(err) && lostConn(err) {
		// The session died after some results: the commit is in doubt.
		for _, r := range group {
			r.done <- err
		}
		return
	}
	// Rolled back whole: each alone, so that one refused (a fenced append) fails alone.
	for _, r := range group {
		r.done <- s.batch(ctx, r.add, r.read)
	}
}
