// Package client is a thin Go client of cairn's HTTP API (/v1/...). Every method maps to one
// route; an answer other than 2xx comes back as *api.Error.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// Client calls one cairn server. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
	retry Retry
}

// New returns a client of the server at baseURL (such as "http://127.0.0.1:8080"), sending
// token as a bearer token unless it is empty. hc nil: http.DefaultClient. Idempotent requests
// are retried with DefaultRetry unless an option says otherwise.
func New(baseURL, token string, hc *http.Client, opts ...Option) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: hc, retry: DefaultRetry}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Validate checks a template and its parameters without touching any stack.
func (c *Client) Validate(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error) {
	var resp api.ValidateResponse
	err := c.do(ctx, http.MethodPost, "/v1/validate", nil, req, &resp)
	return resp, err
}

// Preview reports what deploying req to stack would change.
func (c *Client) Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
	var resp api.PreviewResponse
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/preview", nil, req, &resp)
	return resp, err
}

// Deploy starts creating or updating stack and returns the running operation.
func (c *Client) Deploy(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
	var op api.Operation
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/deploy", nil, req, &op)
	return op, err
}

// Delete starts deleting stack and returns the running operation.
func (c *Client) Delete(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error) {
	var op api.Operation
	err := c.do(ctx, http.MethodDelete, "/v1/stacks/"+url.PathEscape(stack), nil, req, &op)
	return op, err
}

// Cancel asks the running operation of stack to stop and returns it (still running: follow it
// to its end).
func (c *Client) Cancel(ctx context.Context, stack string) (api.Operation, error) {
	var op api.Operation
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/cancel", nil, struct{}{}, &op)
	return op, err
}

// ForceUnlock ends the running operation of stack at once, without rollback, as `terraform
// force-unlock` drops a lock; by names who forced it in the stack's event. It returns the
// operation as it ended.
func (c *Client) ForceUnlock(ctx context.Context, stack, by string) (api.Operation, error) {
	var op api.Operation
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/cancel", nil,
		api.CancelRequest{Force: true, By: by}, &op)
	return op, err
}

// Import adopts an existing object as a resource of stack.
func (c *Client) Import(ctx context.Context, stack string, req api.ImportRequest) (api.Resource, error) {
	var res api.Resource
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/import", nil, req, &res)
	return res, err
}

// Refresh reads every resource of stack back through its provider and stores what it reads
// (terraform apply -refresh-only).
func (c *Client) Refresh(ctx context.Context, stack string, req api.RefreshRequest) (api.RefreshResponse, error) {
	var resp api.RefreshResponse
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/refresh", nil, req, &resp)
	return resp, err
}

// Operation returns operation id. With wait > 0 the server holds the request until the
// operation is no longer running or wait has elapsed.
func (c *Client) Operation(ctx context.Context, id string, wait time.Duration) (api.Operation, error) {
	var op api.Operation
	err := c.do(ctx, http.MethodGet, "/v1/operations/"+url.PathEscape(id), waitQuery(nil, wait), nil, &op)
	return op, err
}

// Stack describes one stack, with its parameters, resources and outputs.
func (c *Client) Stack(ctx context.Context, name string) (api.Stack, error) {
	var st api.Stack
	err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(name), nil, nil, &st)
	return st, err
}

// StackBrief is Stack without the resources' attributes (?attributes=false); against a server
// that does not know the parameter, it reads the whole stack.
func (c *Client) StackBrief(ctx context.Context, name string) (api.Stack, error) {
	var st api.Stack
	err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(name), url.Values{"attributes": {"false"}}, nil, &st)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Code == api.CodeInvalidRequest {
		return c.Stack(ctx, name)
	}
	return st, err
}

// Stacks lists every stack's summary.
func (c *Client) Stacks(ctx context.Context) ([]api.Stack, error) {
	var body struct {
		Stacks []api.Stack `json:"stacks"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/stacks", nil, nil, &body)
	return body.Stacks, err
}

// Outputs returns a stack's outputs, secrets masked.
func (c *Client) Outputs(ctx context.Context, name string) ([]api.Output, error) {
	return c.outputs(ctx, name, nil)
}

// OutputsWithSecrets returns a stack's outputs with the values of their secrets
// (GET .../outputs?show-secrets=true).
func (c *Client) OutputsWithSecrets(ctx context.Context, name string) ([]api.Output, error) {
	return c.outputs(ctx, name, url.Values{"show-secrets": {"true"}})
}

func (c *Client) outputs(ctx context.Context, name string, q url.Values) ([]api.Output, error) {
	var body struct {
		Outputs []api.Output `json:"outputs"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(name)+"/outputs", q, nil, &body)
	return body.Outputs, err
}

// Events returns a stack's events with a sequence number above after. With wait > 0 the
// server holds the request until there is one or wait has elapsed (then none come back).
func (c *Client) Events(ctx context.Context, stack string, after int64, wait time.Duration) ([]api.Event, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	var body struct {
		Events []api.Event `json:"events"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(stack)+"/events", waitQuery(q, wait), nil, &body)
	return body.Events, err
}

// LastEvent returns the stack's newest event; ok is false when it has none.
func (c *Client) LastEvent(ctx context.Context, stack string) (ev api.Event, ok bool, err error) {
	var body struct {
		Events []api.Event `json:"events"`
	}
	q := url.Values{"latest": {"true"}}
	if err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(stack)+"/events", q, nil, &body); err != nil || len(body.Events) == 0 {
		return api.Event{}, false, err
	}
	return body.Events[len(body.Events)-1], true, nil
}

func waitQuery(q url.Values, wait time.Duration) url.Values {
	if wait > 0 {
		if q == nil {
			q = url.Values{}
		}
		q.Set("wait", wait.String())
	}
	return q
}

// do sends body (when not nil) as JSON and decodes a 2xx answer into out, any other into an
// *api.Error.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) error {
	return c.send(ctx, method, path, q, body, out, nil, func(status int, data []byte) error { return decodeError(status, data) })
}

// send is do with extra request headers and the decoder of a non-2xx answer.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body, out any, header http.Header,
	fail func(status int, data []byte) error) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("cannot encode the request: %w", err)
		}
		payload = b
	}
	resp, err := c.roundTrip(ctx, method, u, payload, header)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("cannot read the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("cannot decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// roundTrip sends the request, again while it is retryable (c.retry), and returns the answer
// or, when none came, an *UnreachableError (or ctx's error once ctx has ended).
func (c *Client) roundTrip(ctx context.Context, method, u string, payload []byte, header http.Header) (*http.Response, error) {
	for try := 1; ; try++ {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return nil, fmt.Errorf("cannot build the request: %w", err)
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		req.Header.Set("Accept", "application/json")
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := c.hc.Do(req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		if try < c.retry.Attempts && retryable(method, err) {
			if serr := sleep(ctx, c.retry.wait(try)); serr == nil {
				continue
			}
			return nil, err
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		return nil, &UnreachableError{URL: c.base, Attempts: try, Err: err}
	}
}

func decodeError(status int, data []byte) *api.Error {
	var e api.Error
	if err := json.Unmarshal(data, &e); err == nil && e.Code != "" {
		return &e
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &api.Error{Code: api.CodeInternal, Message: fmt.Sprintf("HTTP %d: %s", status, msg)}
}

// Kube says where the server's Kubernetes API listens and with which CA (GET /v1/kube).
func (c *Client) Kube(ctx context.Context) (api.KubeEndpoint, error) {
	var ep api.KubeEndpoint
	err := c.do(ctx, http.MethodGet, "/v1/kube", nil, nil, &ep)
	return ep, err
}

// KubeEnable offers resource types of a provider as CRDs (POST /v1/kube/enable).
func (c *Client) KubeEnable(ctx context.Context, req api.KubeEnableRequest) (api.KubeEnableResponse, error) {
	var resp api.KubeEnableResponse
	err := c.do(ctx, http.MethodPost, "/v1/kube/enable", nil, req, &resp)
	return resp, err
}
