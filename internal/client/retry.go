package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"time"
)

// Retry bounds how a request that got no HTTP answer is tried again. Only idempotent
// requests are retried (see retryable), and only on a refused or reset connection, as while
// a server restarts; an HTTP error answer is never retried. The zero value tries once.
type Retry struct {
	Attempts int           // tries in all, the first included; below 2: no retry
	Initial  time.Duration // wait before the second try; it doubles after each
	Max      time.Duration // cap on one wait
}

// DefaultRetry waits about 7 s in all (0.1, 0.2, 0.4, 0.8, 1.6, 2, 2 s): long enough for a
// server to restart, short enough that a server that is down is reported promptly.
var DefaultRetry = Retry{Attempts: 8, Initial: 100 * time.Millisecond, Max: 2 * time.Second}

// Option configures a Client.
type Option func(*Client)

// WithRetry replaces DefaultRetry.
func WithRetry(r Retry) Option { return func(c *Client) { c.retry = r } }

// wait returns the pause after the n-th failed try (n from 1).
func (r Retry) wait(n int) time.Duration {
	d := r.Initial
	for i := 1; i < n && (r.Max <= 0 || d < r.Max); i++ {
		d *= 2
	}
	if r.Max > 0 && d > r.Max {
		d = r.Max
	}
	return d
}

// retryable reports whether a request with method that failed with err may be sent again.
// Only GET and HEAD are: in cairn's API, DELETE /v1/stacks/{name} starts an operation (a
// second one after the first has started is refused as busy or not found) and DELETE
// /v1/functions/{name} answers 404 the second time, so a retry after a reset connection,
// which may have reached the server, could report a failure for what succeeded. There is no
// PUT in the API outside the signed response URLs, which this client does not call.
func retryable(method string, err error) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// UnreachableError is a request that got no HTTP answer: nothing listens at the address, the
// connection broke, or the TLS handshake failed (Err says which; errors.Is and errors.As see
// through it, to syscall.ECONNREFUSED or x509.UnknownAuthorityError for instance).
type UnreachableError struct {
	URL      string // the server's base URL
	Attempts int    // how many times the request was sent
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the cairn server at %s: %v", e.URL, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
