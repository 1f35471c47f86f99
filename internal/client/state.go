package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn/api"
)

// PullState returns stack as a terraform state file (format version 4).
func (c *Client) PullState(ctx context.Context, stack string) ([]byte, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(stack)+"/state", nil, nil, &raw)
	return raw, err
}

// PushState adopts a terraform state as stack's resources.
func (c *Client) PushState(ctx context.Context, stack string, req api.StatePushRequest) (api.StatePushResponse, error) {
	var resp api.StatePushResponse
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/state", nil, req, &resp)
	return resp, err
}
