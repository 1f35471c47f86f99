package customresource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// errClosed is returned by calls made or waiting when the Provider is closed.
var errClosed = errors.New("custom resource provider is closed")

// Create sends a Create request and waits for its response. A FAILED response yields
// Diagnostics (the handler's Reason) and, when the handler named one, the ID to delete.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	o, err := p.run(ctx, call{kind: reqCreate, res: req.Resource, token: req.Token, props: req.Props, timeout: req.Timeout})
	if err != nil && ctx.Err() != nil {
		// The request stays open: the Delete that removes this resource waits for its answer
		// (late.go), which the engine passes back as Private.
		return provider.CreateResponse{Private: pendingPrivate(req.Token)}, err
	}
	if err != nil {
		return provider.CreateResponse{}, err
	}
	resp := provider.CreateResponse{ID: o.id, Outputs: o.outputs, Diagnostics: o.diags}
	if o.diags.HasErrors() {
		resp.NotCreated = o.notCreated
	}
	return resp, nil
}

// Update sends an Update request with OldResourceProperties and waits for its response. A
// different PhysicalResourceId in a SUCCESS response means the handler replaced the resource.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	o, err := p.run(ctx, call{kind: reqUpdate, res: req.Resource, token: req.Token, physical: req.ID,
		props: req.NewProps, oldProps: req.OldProps, timeout: req.Timeout})
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	if o.id == "" {
		o.id = req.ID
	}
	return provider.UpdateResponse{ID: o.id, Outputs: o.outputs, Diagnostics: o.diags}, nil
}

// Delete sends a Delete request with the current properties and waits for its response. The
// Delete of a resource whose Create ended unanswered waits for that answer first (late.go).
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	if create, ok := pendingOf(req.Private); ok {
		id, err := p.createAnswerID(ctx, req.Resource, create)
		if err != nil {
			return provider.DeleteResponse{}, err
		}
		if id != "" {
			req.ID = id
		}
	}
	o, err := p.run(ctx, call{kind: reqDelete, res: req.Resource, token: req.Token, physical: req.ID,
		props: req.Props, timeout: req.Timeout})
	if err != nil {
		return provider.DeleteResponse{}, err
	}
	return provider.DeleteResponse{Diagnostics: o.diags}, nil
}

// run is one call: store the request (once per token), send it (once), wait for the answer.
func (p *Provider) run(ctx context.Context, c call) (outcome, error) {
	select {
	case <-p.closed:
		return outcome{}, errClosed
	default:
	}
	if c.token == "" {
		return outcome{}, fmt.Errorf("cannot send %s request for %s: no token", c.kind, c.res.Name)
	}
	rawToken, tok, err := c.serviceToken()
	if err != nil {
		return unsent(failed("Invalid ServiceToken", err.Error()), c), nil
	}
	var fn Func
	if tok.function != "" {
		if fn, err = p.resolve(ctx, tok); err != nil {
			return unsent(failed("Invalid ServiceToken", err.Error()), c), nil
		}
	}
	timeout := timeoutFor(c, tok)
	expires := p.now().Add(timeout)
	if t := expires.Truncate(time.Second); t.Before(expires) {
		expires = t.Add(time.Second) // the URL carries whole seconds: never shorten the deadline
	}
	body, err := requestObject(c, rawToken, p.responseURL(c.token, expires))
	if err != nil {
		return outcome{}, fmt.Errorf("cannot build %s request for %s: %w", c.kind, c.res.Name, err)
	}
	stored, inserted, err := p.store.PutRequest(ctx, Request{ID: c.token, Stack: c.stackKey(), LogicalID: c.res.Name,
		Body: body, Expires: expires})
	if err != nil {
		return outcome{}, fmt.Errorf("cannot store custom resource request %s: %w", c.token, err)
	}
	if !inserted && (stored.Stack != c.stackKey() || stored.LogicalID != c.res.Name) {
		return outcome{}, fmt.Errorf("cannot send %s request for %s/%s: request %s belongs to %s/%s",
			c.kind, c.res.StackName, c.res.Name, c.token, stored.Stack, stored.LogicalID)
	}
	e, err := expectationOf(stored)
	if err != nil {
		return outcome{}, err
	}
	if stored.Response != nil {
		p.log.Info("custom resources: request already answered", "request_id", c.token, "stack", c.res.StackName, "logical_id", c.res.Name)
		return outcomeOf(e, c.kind, stored.Response), nil
	}
	notices, unsubscribe := p.subscribe(c.token)
	defer unsubscribe()
	if !stored.Sent {
		if !p.now().Before(stored.Expires) {
			return failed(fmt.Sprintf("The %s request %s was not sent before its deadline passed", c.kind, c.token),
				"cairn stopped between storing and sending it; deploy again to send a new request"), nil
		}
		deliver := p.deliver
		if fn != nil {
			deliver = func(ctx context.Context, c call, tok serviceToken, r Request, _ expectation) (outcome, bool, error) {
				return p.invoke(ctx, c, fn, tok, r)
			}
		}
		o, done, err := deliver(ctx, c, tok, stored, e)
		if err != nil || done {
			return o, err
		}
	} else if !inserted {
		p.log.Info("custom resources: resuming wait for a response", "request_id", c.token, "stack", c.res.StackName, "logical_id", c.res.Name)
	}
	return p.wait(ctx, c, e, stored, timeout, notices)
}

// wait waits for a response to r: a notice from ResponseHandler in this process, or the
// Store (re-read with a growing interval, so a response saved by another process or before
// the wait began is seen), until r.Expires.
func (p *Provider) wait(ctx context.Context, c call, e expectation, r Request, timeout time.Duration, notices <-chan notice) (outcome, error) {
	deadline := time.NewTimer(r.Expires.Sub(p.now()))
	defer deadline.Stop()
	late := time.NewTimer(p.waitNotice)
	defer late.Stop()
	interval := p.poll
	for {
		got, err := p.store.GetRequest(ctx, r.ID)
		if err != nil {
			return outcome{}, fmt.Errorf("cannot read custom resource request %s: %w", r.ID, err)
		}
		if got.Response != nil {
			return outcomeOf(e, c.kind, got.Response), nil
		}
		poll := time.NewTimer(interval)
		interval = min(2*interval, p.maxPoll)
		select {
		case n := <-notices:
			poll.Stop()
			if n.body != nil {
				return outcomeOf(e, c.kind, n.body), nil
			}
			if n.recheck {
				interval = p.poll
				continue
			}
			if n.note != "" {
				provider.ReportProgress(ctx, n.note)
				interval = p.poll // the answer may follow soon: look again sooner
				continue
			}
			answer, err := p.markEnded(ctx, r.ID, n.reject.message())
			if err != nil {
				return outcome{}, err
			}
			if answer != nil {
				return outcomeOf(e, c.kind, answer), nil
			}
			return outcome{diags: diag.Diagnostics{n.reject.diagnostic()}}, nil
		case <-poll.C:
		case <-late.C:
			poll.Stop()
			provider.ReportProgress(ctx, stillWaiting(c.kind, r, p.waitNotice, p.now()))
		case <-deadline.C:
			poll.Stop()
			answer, err := p.markEnded(ctx, r.ID, fmt.Sprintf("no response arrived within %ds, its deadline", int(timeout.Seconds())))
			if err != nil {
				return outcome{}, err
			}
			if answer != nil {
				return outcomeOf(e, c.kind, answer), nil
			}
			p.log.Warn("custom resources: no response before the deadline", "request_id", r.ID, "stack", r.Stack, "logical_id", r.LogicalID)
			return failed(fmt.Sprintf("cairn did not receive a response from your Custom Resource within %ds. "+
				"Please check your logs for requestId [%s]", int(timeout.Seconds()), r.ID),
				"the handler must PUT a SUCCESS or FAILED response to the ResponseURL before the deadline; "+
					"raise ServiceTimeout (ROS: Timeout) if it needs longer"), nil
		case <-ctx.Done():
			poll.Stop()
			return outcome{}, ctx.Err()
		case <-p.closed:
			poll.Stop()
			return outcome{}, errClosed
		}
	}
}

// unsent marks the failed outcome of a Create that was never sent: nothing was created.
func unsent(o outcome, c call) outcome {
	return notCreated(o, c, "the ServiceToken is not usable, so the Create request was never sent")
}

// failed is an outcome with one error diagnostic.
func failed(summary, detail string) outcome {
	return outcome{diags: diag.Diagnostics{{Severity: diag.Error, Summary: summary, Detail: detail}}}
}

// stillWaiting says what a call unanswered for waited waits for and where: the RequestId, the
// request type, and the ResponseURL without its query (the signature is a secret: whoever has
// it can answer), with the time left before the deadline.
func stillWaiting(kind string, r Request, waited time.Duration, now time.Time) string {
	where := "the ResponseURL"
	var body struct{ ResponseURL string }
	if err := json.Unmarshal(r.Body, &body); err == nil {
		if u, err := url.Parse(body.ResponseURL); err == nil && u.Host != "" {
			where = u.Scheme + "://" + u.Host + u.Path
		}
	}
	left := r.Expires.Sub(now).Round(time.Second)
	return fmt.Sprintf("no answer after %s: cairn is waiting for the response to the %s request (RequestId %s) at %s; "+
		"the handler must PUT a SUCCESS or FAILED response there (with the signed query the request carries) within %s, "+
		"before ServiceTimeout ends the wait; if it cannot reach or trust that address, nothing will arrive",
		waited.Round(time.Second), kind, r.ID, where, left)
}
