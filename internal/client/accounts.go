package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn/api"
)

// CreateToken creates a token; the answer's Secret is the token, shown this once.
func (c *Client) CreateToken(ctx context.Context, req api.TokenCreateRequest) (api.Token, error) {
	var out api.Token
	err := c.do(ctx, http.MethodPost, "/v1/tokens", nil, req, &out)
	return out, err
}

// Tokens lists the tokens of tenant ("": the caller's, or every tenant's for the server's admin).
func (c *Client) Tokens(ctx context.Context, tenant string) ([]api.Token, error) {
	var out []api.Token
	err := c.do(ctx, http.MethodGet, "/v1/tokens", only("tenant", tenant), nil, &out)
	return out, err
}

// RevokeToken revokes the token id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, nil, nil)
}

// PutGrant gives g.Subject g.Role on the stacks g.Stack matches.
func (c *Client) PutGrant(ctx context.Context, g api.Grant) error {
	return c.do(ctx, http.MethodPost, "/v1/grants", nil, g, nil)
}

// DeleteGrant removes a grant.
func (c *Client) DeleteGrant(ctx context.Context, tenant, subject, stack string) error {
	q := only("tenant", tenant)
	q.Set("subject", subject)
	q.Set("stack", stack)
	return c.do(ctx, http.MethodDelete, "/v1/grants", q, nil, nil)
}

// Grants lists the grants of subject ("": all) in tenant ("": the caller's).
func (c *Client) Grants(ctx context.Context, tenant, subject string) ([]api.Grant, error) {
	q := only("tenant", tenant)
	if subject != "" {
		q.Set("subject", subject)
	}
	var out []api.Grant
	err := c.do(ctx, http.MethodGet, "/v1/grants", q, nil, &out)
	return out, err
}

// Audit reads the audit log: entries after seq, of tenant ("": the caller's, or every
// tenant's for the server's admin), at most limit (0: the server's page).
func (c *Client) Audit(ctx context.Context, tenant string, after int64, limit int) ([]api.AuditEntry, error) {
	q := only("tenant", tenant)
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out []api.AuditEntry
	err := c.do(ctx, http.MethodGet, "/v1/audit", q, nil, &out)
	return out, err
}

// only is a query of one parameter, or none when v is empty.
func only(k, v string) url.Values {
	q := url.Values{}
	if v != "" {
		q.Set(k, v)
	}
	return q
}
