package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/state"
)

// crStore adapts a state.Store to the custom-resource provider's Store (provider packages
// never import state).
type crStore struct{ s state.Store }

var _ customresource.Store = crStore{}

func (c crStore) PutRequest(ctx context.Context, r customresource.Request) (customresource.Request, bool, error) {
	got, inserted, err := c.s.PutCustomRequest(ctx, state.CustomRequest(r))
	return customresource.Request(got), inserted, notFound(err)
}

func (c crStore) MarkSent(ctx context.Context, id string) error {
	return notFound(c.s.MarkCustomRequestSent(ctx, id))
}

func (c crStore) GetRequest(ctx context.Context, id string) (customresource.Request, error) {
	got, err := c.s.GetCustomRequest(ctx, id)
	return customresource.Request(got), notFound(err)
}

func (c crStore) SaveResponse(ctx context.Context, id string, body []byte, at time.Time) (bool, error) {
	first, err := c.s.SaveCustomResponse(ctx, id, body, at)
	return first, notFound(err)
}

// notFound turns state.ErrNotFound into customresource.ErrNotFound, keeping the message.
func notFound(err error) error {
	if errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("%w: %w", customresource.ErrNotFound, err)
	}
	return err
}

// CustomRequestStore exposes the adapter for programs that assemble cairn themselves (the
// benchmarks).
func CustomRequestStore(s state.Store) customresource.Store { return crStore{s} }
