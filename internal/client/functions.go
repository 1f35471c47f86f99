package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn/api"
)

// CreateFunction creates a function; req.Code is a zip of the code directory
// (function.ZipDir).
func (c *Client) CreateFunction(ctx context.Context, req api.CreateFunctionRequest) (api.Function, error) {
	var f api.Function
	err := c.do(ctx, http.MethodPost, "/v1/functions", nil, req, &f)
	return f, err
}

// Functions lists every function.
func (c *Client) Functions(ctx context.Context) ([]api.Function, error) {
	var body struct {
		Functions []api.Function `json:"functions"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/functions", nil, nil, &body)
	return body.Functions, err
}

// Function describes one function.
func (c *Client) Function(ctx context.Context, name string) (api.Function, error) {
	var f api.Function
	err := c.do(ctx, http.MethodGet, "/v1/functions/"+url.PathEscape(name), nil, nil, &f)
	return f, err
}

// DeleteFunction deletes a function, its code copy and its logs.
func (c *Client) DeleteFunction(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/functions/"+url.PathEscape(name), nil, nil, nil)
}

// InvokeFunction invokes a function: synchronously, or queued with req.Async.
func (c *Client) InvokeFunction(ctx context.Context, name string, req api.InvokeRequest) (api.InvokeResponse, error) {
	var resp api.InvokeResponse
	err := c.do(ctx, http.MethodPost, "/v1/functions/"+url.PathEscape(name)+"/invoke", nil, req, &resp)
	return resp, err
}

// FunctionLogs returns a function's captured logs: of one request when requestID is set, the
// last limit entries when limit > 0.
func (c *Client) FunctionLogs(ctx context.Context, name, requestID string, limit int) ([]api.LogEntry, error) {
	q := url.Values{}
	if requestID != "" {
		q.Set("requestId", requestID)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var body struct {
		Logs []api.LogEntry `json:"logs"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/functions/"+url.PathEscape(name)+"/logs", q, nil, &body)
	return body.Logs, err
}
