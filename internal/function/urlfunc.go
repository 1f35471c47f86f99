package function

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/egress"
)

// invokeURL POSTs the event to a url function and returns the answer as the result: a 2xx
// answer's body is the payload, anything else (or no answer within the timeout) fails.
func (m *Manager) invokeURL(ctx context.Context, d Definition, inv *invocation) Result {
	start := time.Now()
	fail := func(typ, format string, args ...any) Result {
		fe := &FuncError{Type: typ, Message: fmt.Sprintf(format, args...)}
		m.logs.write(d.key(), LogEntry{RequestID: inv.id, Stream: "cairn", Message: "ERROR RequestId: " + inv.id + " " + fe.Error()})
		return Result{RequestID: inv.id, Payload: marshalError(fe), Error: fe, Duration: time.Since(start)}
	}
	m.logs.write(d.key(), LogEntry{RequestID: inv.id, Stream: "cairn", Message: "START RequestId: " + inv.id + " POST " + redact(d.URL)})
	actx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, d.URL, bytes.NewReader(inv.payload))
	if err != nil {
		return fail("Http.InvalidRequest", "cannot build the request: %v", stripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Request-Id", inv.id)
	req.Header.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	resp, err := m.cfg.Client.Do(req)
	if err != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return fail("Sandbox.Timedout", "RequestId: %s Error: Task timed out after %.2f seconds: the endpoint did not answer",
				inv.id, d.Timeout.Seconds())
		}
		var re *egress.RefusedError
		if errors.As(err, &re) { // its own message: the dial error names the address a name resolved to
			return fail("Http.Refused", "%v", re)
		}
		return fail("Http.Unreachable", "cannot POST to the endpoint: %v", stripURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxPayloadBytes+1))
	switch {
	case err != nil:
		return fail("Http.TruncatedResponse", "cannot read the endpoint's answer: %v", stripURL(err))
	case len(body) > MaxPayloadBytes:
		return fail("Function.ResponseSizeTooLarge", "the endpoint's answer is over %d bytes", MaxPayloadBytes)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		// The status code only: the reason phrase is the endpoint's text, like the body.
		return fail("Http.Status", "the endpoint answered %d %s: %q", resp.StatusCode, http.StatusText(resp.StatusCode),
			egress.Excerpt(body))
	}
	r := Result{RequestID: inv.id, Payload: body, Duration: time.Since(start)}
	m.logs.write(d.key(), LogEntry{RequestID: inv.id, Stream: "cairn", Message: fmt.Sprintf("END RequestId: %s %d", inv.id, resp.StatusCode)})
	return r
}

// stripURL drops the URL from a client error: it may carry credentials.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

// redact is a URL without user info and query, for logs.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
