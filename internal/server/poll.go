package server

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
)

// coalesce is how long a woken poll waits for more events before it answers.
const coalesce = 20 * time.Millisecond

// pollEvents returns the stack's events after seq after. When there are none it waits, up to
// wait, for the engine's next notification and looks again; it answers an empty list when the
// wait ends first (or the request is cancelled, or the server closed).
func (s *Server) pollEvents(ctx context.Context, stack string, after int64, wait time.Duration) ([]api.Event, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		notified := s.eng.Notify() // taken before reading, so no event falls in between
		evs, err := s.eng.Events(ctx, stack, after, 0)
		if err != nil || len(evs) > 0 || wait <= 0 {
			return evs, err
		}
		select {
		case <-notified:
			// Let the events of steps finishing together arrive in one answer: a deploy of
			// thousands of resources would otherwise wake every follower per event.
			select {
			case <-time.After(coalesce):
			case <-ctx.Done():
			}
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		case <-s.closing:
			return nil, nil
		}
	}
}

// pollOperation returns operation id once it is no longer running, or as it is when wait
// has elapsed (or the request is cancelled, or the server closed).
func (s *Server) pollOperation(ctx context.Context, id string, wait time.Duration) (api.Operation, error) {
	if wait <= 0 {
		return s.eng.Operation(ctx, id)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-wctx.Done():
		}
	}()
	op, err := s.eng.Wait(wctx, id)
	if err != nil && wctx.Err() != nil && !errors.Is(err, state.ErrNotFound) {
		// The wait ended inside a store call: answer with the operation as it is now.
		return s.eng.Operation(context.WithoutCancel(ctx), id)
	}
	return op, err
}
