package customresource

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/egress"
)

// maxRetries is how often a delivery is retried after a transport error or a 5xx answer:
// always for Update and Delete, for Create only with the idempotent option (ROS semantics).
const maxRetries = 3

// excerptBytes bounds what is read of an async handler's answer (the POST's body only
// matters for a diagnostic, which quotes an egress.Excerpt of it).
const excerptBytes = 512

// attempt is the result of one POST.
type attempt struct {
	status int    // 0 when the request did not get an answer
	body   []byte // the answer (whole for sync tokens, an excerpt otherwise)
	err    error  // transport error, without the URL
	late   bool   // the attempt's deadline passed
	budget time.Duration
}

func (a attempt) retryable() bool {
	return !a.late && !egress.IsRefused(a.err) && (a.err != nil || a.status >= 500)
}

// unsent reports whether the attempt failed before its request could reach the handler: the
// policy refused the address, the name did not resolve, the connection or the TLS handshake
// failed (or timed out). An error after the request went out (a reset, no answer in time) is
// not unsent.
func (a attempt) unsent() bool {
	if a.err == nil {
		return false
	}
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		certErr *tls.CertificateVerificationError
		recErr  tls.RecordHeaderError
	)
	return egress.IsRefused(a.err) || errors.As(a.err, &dnsErr) || errors.As(a.err, &opErr) && opErr.Op == "dial" ||
		errors.As(a.err, &certErr) || errors.As(a.err, &recErr)
}

// policyRefused is a Create's notCreated when the policy refused its endpoint (or where it
// redirected to).
const policyRefused = "the service-token policy refused the ServiceToken endpoint, so no handler accepted the Create request"

// deliver POSTs the request to the handler. For an async token it returns done=false once
// the handler accepted it (2xx); for a sync token the answer is the response, and deliver
// returns the call's outcome. A refusal or an unreachable handler fails the call at once.
func (p *Provider) deliver(ctx context.Context, c call, tok serviceToken, r Request, e expectation) (outcome, bool, error) {
	if err := p.policy.CheckURL(ctx, tok.url); err != nil {
		o := failed("The service-token policy refused the ServiceToken endpoint", fmt.Sprintf("RequestId %s: %v", r.ID, err))
		return notCreated(o, c, policyRefused), true, nil
	}
	tries := 1
	if c.kind != reqCreate || tok.idempotent {
		tries += maxRetries
	}
	var a attempt
	reached := false // an attempt may have reached the handler, which may then have acted
	for i := range tries {
		if i > 0 {
			if err := p.sleep(ctx, p.backoff<<(i-1), r.Expires); err != nil {
				return outcome{}, false, err
			}
		}
		a = p.post(ctx, tok, r)
		if err := ctx.Err(); err != nil {
			return outcome{}, false, err
		}
		// A 4xx answer is a refusal. A 5xx may come from a gateway after the handler acted (it
		// may even have PUT its response already), and a reset may follow a request it read.
		reached = reached || a.err != nil && !a.unsent() || a.err == nil && a.status >= 500
		p.log.Info("custom resources: request sent", "request_id", r.ID, "stack", r.Stack, "logical_id", r.LogicalID,
			"request_type", c.kind, "token", tok.kind(), "attempt", i+1, "status", a.status)
		if a.err == nil && a.status >= 200 && a.status < 300 {
			break
		}
		if !a.retryable() || !p.now().Before(r.Expires) {
			break
		}
	}
	if a.late || a.err != nil || a.status < 200 || a.status >= 300 {
		if !tok.sync {
			// The handler may have answered at the ResponseURL before its endpoint failed the
			// POST: its answer is the outcome, whatever the POST said.
			if got, err := p.store.GetRequest(ctx, r.ID); err == nil && got.Response != nil {
				if err := p.store.MarkSent(ctx, r.ID); err != nil {
					return outcome{}, false, fmt.Errorf("cannot mark custom resource request %s sent: %w", r.ID, err)
				}
				return outcome{}, false, nil
			}
		}
		o := deliveryFailure(c, tok, r, a)
		if !reached {
			o = notCreated(o, c, o.notCreated)
		} else {
			o.notCreated = ""
		}
		return o, true, nil
	}
	if err := p.store.MarkSent(ctx, r.ID); err != nil {
		return outcome{}, false, fmt.Errorf("cannot mark custom resource request %s sent: %w", r.ID, err)
	}
	if !tok.sync {
		return outcome{}, false, nil
	}
	return p.syncOutcome(ctx, c, e, r, a.body)
}

// deliveryFailure is the outcome of a last attempt that did not deliver the request; its
// notCreated says why nothing was created when the attempt cannot have reached the handler
// (the caller keeps it only when no earlier attempt may have reached it either). It never
// names the URL or the address a name resolved to, and quotes at most an excerpt of the body.
func deliveryFailure(c call, tok serviceToken, r Request, a attempt) outcome {
	var re *egress.RefusedError
	switch {
	case a.late && a.unsent():
		o := failed(fmt.Sprintf("Cannot deliver the %s request to the ServiceToken endpoint", c.kind),
			fmt.Sprintf("RequestId %s: cairn could not connect to the endpoint within %s: %v", r.ID, a.budget.Round(time.Millisecond), a.err))
		o.notCreated = "the ServiceToken endpoint never accepted the Create request (cairn could not connect to it), so nothing was created"
		return o
	case a.late && tok.sync:
		return failed(fmt.Sprintf("cairn did not receive a response from your Custom Resource within %ds. "+
			"Please check your logs for requestId [%s]", int(timeoutFor(c, tok).Seconds()), r.ID),
			"a web[sync] endpoint must answer the POST with the response object before the deadline; "+
				"raise Timeout if it needs longer")
	case a.late:
		return failed(fmt.Sprintf("Cannot deliver the %s request to the ServiceToken endpoint", c.kind),
			fmt.Sprintf("RequestId %s: the endpoint did not answer the POST within %s; it should accept the request at once "+
				"and PUT the response to the ResponseURL later", r.ID, a.budget.Round(time.Millisecond)))
	case errors.As(a.err, &re): // its own message only: the dial error names the resolved address
		o := failed("The service-token policy refused the ServiceToken endpoint", fmt.Sprintf("RequestId %s: %v", r.ID, re))
		o.notCreated = policyRefused
		return o
	case a.err != nil:
		o := failed(fmt.Sprintf("Cannot deliver the %s request to the ServiceToken endpoint", c.kind),
			fmt.Sprintf("RequestId %s: %v", r.ID, a.err))
		if a.unsent() {
			o.notCreated = "the ServiceToken endpoint never accepted the Create request (cairn could not connect to it), so nothing was created"
		}
		return o
	}
	o := failed(fmt.Sprintf("The ServiceToken endpoint answered %d %s to the %s request", a.status, http.StatusText(a.status), c.kind),
		fmt.Sprintf("RequestId %s; response body: %q", r.ID, egress.Excerpt(a.body)))
	if a.status < 500 {
		o.notCreated = fmt.Sprintf("the ServiceToken endpoint never accepted the Create request (it answered %d), so nothing was created", a.status)
	}
	return o
}

// notCreated sets o's notCreated to why for a Create ("" leaves nothing set).
func notCreated(o outcome, c call, why string) outcome {
	o.notCreated = ""
	if c.kind == reqCreate {
		o.notCreated = why
	}
	return o
}

// syncOutcome validates and stores the answer of a web[sync] POST.
func (p *Provider) syncOutcome(ctx context.Context, c call, e expectation, r Request, body []byte) (outcome, bool, error) {
	if _, bad := e.validate(body); bad != nil {
		if got, err := p.store.GetRequest(ctx, r.ID); err == nil && got.Response != nil {
			return outcomeOf(e, c.kind, got.Response), true, nil // the handler PUT a response instead
		}
		d := bad.diagnostic()
		d.Detail = "the answer of the web[sync] endpoint is the response object: " + d.Detail
		return outcome{diags: diag.Diagnostics{d}}, true, nil
	}
	first, err := p.store.SaveResponse(ctx, r.ID, body, p.now())
	if err != nil {
		return outcome{}, false, fmt.Errorf("cannot save the response to custom resource request %s: %w", r.ID, err)
	}
	if !first {
		got, err := p.store.GetRequest(ctx, r.ID)
		if err != nil {
			return outcome{}, false, fmt.Errorf("cannot read custom resource request %s: %w", r.ID, err)
		}
		body = got.Response
	} else {
		p.notify(r.ID, notice{body: body})
	}
	return outcomeOf(e, c.kind, body), true, nil
}

// post sends the stored request body once. Async deliveries are bounded by sendWithin, sync
// ones by the request's deadline.
func (p *Provider) post(ctx context.Context, tok serviceToken, r Request) attempt {
	deadline := r.Expires
	if !tok.sync {
		deadline = minTime(deadline, p.now().Add(p.sendWithin))
	}
	budget := deadline.Sub(p.now())
	actx, cancel := context.WithTimeout(ctx, budget) // a duration: Config.Now may not be the wall clock
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, tok.url, bytes.NewReader(r.Body))
	if err != nil {
		return attempt{err: withoutURL(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return attempt{err: withoutURL(err), late: actx.Err() != nil && ctx.Err() == nil, budget: budget}
	}
	defer resp.Body.Close()
	limit := int64(excerptBytes)
	if tok.sync {
		limit = readLimit + 1
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, readLimit)) // let the connection be reused
	if err != nil && tok.sync {
		return attempt{status: resp.StatusCode, err: withoutURL(err), late: actx.Err() != nil && ctx.Err() == nil, budget: budget}
	}
	return attempt{status: resp.StatusCode, body: body}
}

// sleep waits d, or until ctx is done, the provider closes or the deadline passes.
func (p *Provider) sleep(ctx context.Context, d time.Duration, deadline time.Time) error {
	if left := deadline.Sub(p.now()); left < d {
		d = max(left, 0)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closed:
		return errClosed
	}
}

// withoutURL drops the URL from a client error: a ServiceToken URL may carry credentials.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", strings.ToLower(ue.Op), ue.Err)
	}
	return err
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
