package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cairn-dev/cairn/api"
)

// PullState returns stack as its tool's state file: a terraform state (format version 4) or a
// Pulumi deployment.
func (c *Client) PullState(ctx context.Context, stack string, opts api.StatePullOptions) ([]byte, error) {
	var raw json.RawMessage
	q := url.Values{}
	if opts.ShowSecrets {
		q.Set("show-secrets", "true")
	}
	var h http.Header
	if opts.Passphrase != "" {
		h = http.Header{api.StatePassphraseHeader: {opts.Passphrase}}
	}
	err := c.send(ctx, http.MethodGet, "/v1/stacks/"+url.PathEscape(stack)+"/state", q, nil, &raw, h,
		func(status int, data []byte) error { return decodeError(status, data) })
	return raw, err
}

// PushState adopts a terraform state as stack's resources.
func (c *Client) PushState(ctx context.Context, stack string, req api.StatePushRequest) (api.StatePushResponse, error) {
	var resp api.StatePushResponse
	err := c.do(ctx, http.MethodPost, "/v1/stacks/"+url.PathEscape(stack)+"/state", nil, req, &resp)
	return resp, err
}
