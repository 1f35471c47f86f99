package customresource

import (
	"context"
	"errors"
	"time"
)

// Request is a stored custom-resource request and, once it arrived, its response. It has
// the fields of state.CustomRequest in the same order, so the two convert into each other.
type Request struct {
	ID          string // RequestId: the engine's Token for the call
	Stack       string // stack name
	LogicalID   string
	Body        []byte    // the request object as sent (it holds secrets: never log it)
	Expires     time.Time // the deadline for a response; the ResponseURL expires with it
	Sent        bool      // the request was delivered to the handler
	Response    []byte    // first valid response body, nil until one arrived
	RespondedAt time.Time
}

// ErrNotFound is returned (possibly wrapped) by Store.GetRequest for an unknown id.
var ErrNotFound = errors.New("custom resource request not found")

// Store persists requests and their responses. Implementations are safe for concurrent use.
type Store interface {
	// PutRequest inserts r unless a request with its ID exists, and returns the stored row and
	// whether it was inserted.
	PutRequest(ctx context.Context, r Request) (stored Request, inserted bool, err error)
	MarkSent(ctx context.Context, id string) error
	// GetRequest returns the request with id, or an error wrapping ErrNotFound.
	GetRequest(ctx context.Context, id string) (Request, error)
	// SaveResponse stores body as the response of request id unless one is stored already;
	// first reports whether this one was stored.
	SaveResponse(ctx context.Context, id string, body []byte, at time.Time) (first bool, err error)
}
