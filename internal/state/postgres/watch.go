package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the NOTIFY channel on which a store announces, with the stack's key as payload,
// a change of a stack's row or operation and every event it appends. The notification is
// sent in the transaction that writes the change, so it arrives only once the change is
// visible, and never for one rolled back.
const Channel = "cairn_events"

const notifyQuery = `SELECT pg_notify('` + Channel + `', $1)`

// ResponseChannel announces, with its RequestId as payload, a custom-resource response saved
// first (SaveCustomResponse): the replica waiting for it reads it at once instead of at its
// next poll.
const ResponseChannel = "cairn_responses"

// Listeners are what Listen calls; nil fields are not called.
type Listeners struct {
	// Events is called on every notification on Channel, and each time listening starts.
	Events func()
	// Response is called with the RequestId of every notification on ResponseChannel.
	Response func(requestID string)
}

// Watch timings: how long a listening connection may be silent before it is pinged, and the
// bounds of the wait between reconnection attempts.
const (
	watchIdle  = 30 * time.Second
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Watch calls wake on every notification on Channel, from whichever store (replica) sent it,
// until ctx ends or the store is closed. It holds a connection of its own (not one of the
// pool's) that LISTENs; when the connection drops (PostgreSQL restarted, the network failed),
// it connects again, waiting from 100ms up to 5s between attempts. wake is also called each
// time listening starts, the first time included, since events may have been sent while no
// one listened: a caller re-reads what it follows on every wake. Calls to wake come from one
// goroutine, one at a time; a slow wake delays the next (notifications queue meanwhile).
func (s *Store) Watch(ctx context.Context, wake func()) {
	s.Listen(ctx, Listeners{Events: wake})
}

// Listen is Watch with a listener for responses too.
func (s *Store) Listen(ctx context.Context, ls Listeners) {
	if ls.Events == nil {
		ls.Events = func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	cfg := s.pool.Config().ConnConfig
	backoff := minBackoff
	for {
		listening := s.listen(ctx, cfg, ls)
		if listening {
			backoff = minBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// listen connects, LISTENs and calls wake until the connection fails or ctx ends. It reports
// whether it got as far as listening.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig, ls Listeners) bool {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return false
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+Channel); err != nil {
		return false
	}
	if ls.Response != nil {
		if _, err := conn.Exec(ctx, `LISTEN `+ResponseChannel); err != nil {
			return false
		}
	}
	ls.Events()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, watchIdle)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil && n.Channel == ResponseChannel:
			ls.Response(n.Payload)
		case err == nil:
			ls.Events()
		case ctx.Err() != nil:
			return true
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			// Silence: make sure the server is still there (a dead peer sends no error).
			pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return true
			}
		default:
			return true
		}
	}
}

// announceEvery bounds how often a store announces one stack's events: PostgreSQL serialises
// the commits of transactions that NOTIFY, so a notification per event (thousands a second
// under load) would serialise every event append; a follower wakes within this of any event.
const announceEvery = 100 * time.Millisecond

// announcer sends the NOTIFY of a stack's events after their commit: the first of a burst at
// once, the rest as one trailing notification announceEvery after the last one sent.
type announcer struct {
	s       *Store
	mu      sync.Mutex
	last    map[string]time.Time // when each stack's events were last announced
	pending map[string]bool      // a trailing announcement is scheduled
}

func (a *announcer) announce(stack string) {
	a.mu.Lock()
	if a.pending[stack] {
		a.mu.Unlock()
		return
	}
	now := time.Now()
	since := now.Sub(a.last[stack])
	if since >= announceEvery {
		if len(a.last) > 10000 { // forget quiet stacks
			clear(a.last)
		}
		a.last[stack] = now
		a.mu.Unlock()
		a.send(stack)
		return
	}
	a.pending[stack] = true
	a.mu.Unlock()
	time.AfterFunc(announceEvery-since, func() {
		a.mu.Lock()
		delete(a.pending, stack)
		a.last[stack] = time.Now()
		a.mu.Unlock()
		a.send(stack)
	})
}

// send notifies; a notification lost (the database away) costs followers only latency: they
// read again when they listen again.
func (a *announcer) send(stack string) {
	select {
	case <-a.s.closed:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = a.s.pool.Exec(ctx, notifyQuery, stack)
}
