package api

import "time"

// TokenCreateRequest is the body of POST /v1/tokens. Tenant defaults to the caller's; only
// the server's admin may name another. Role may not be above the caller's.
type TokenCreateRequest struct {
	Tenant string `json:"tenant,omitempty"`
	Role   string `json:"role"`
	Name   string `json:"name,omitempty"`
	// ExpiresIn is a Go duration ("720h"); empty: the token never expires.
	ExpiresIn string  `json:"expiresIn,omitempty"`
	Grants    []Grant `json:"grants,omitempty"`
}

// Token describes a token; Secret is set only in the answer that created it.
type Token struct {
	ID        string    `json:"id"`
	Secret    string    `json:"secret,omitempty"`
	Tenant    string    `json:"tenant"`
	Role      string    `json:"role"`
	Name      string    `json:"name,omitempty"`
	CreatedBy string    `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	RevokedAt time.Time `json:"revokedAt,omitzero"`
	Grants    []Grant   `json:"grants,omitempty"`
}

// Grant raises a subject's role on the stacks whose names match Stack (a glob: web-*).
// Subject is a token's ID or "oidc:" and an OIDC subject; in a request it defaults to the
// token being created.
type Grant struct {
	Tenant  string `json:"tenant,omitempty"`
	Subject string `json:"subject,omitempty"`
	Stack   string `json:"stack"`
	Role    string `json:"role"`
}

// AuditEntry is one entry of GET /v1/audit.
type AuditEntry struct {
	Seq     int64     `json:"seq"`
	At      time.Time `json:"at"`
	Tenant  string    `json:"tenant"`
	Subject string    `json:"subject"`
	Role    string    `json:"role"`
	Action  string    `json:"action"`
	Target  string    `json:"target,omitempty"`
	Remote  string    `json:"remote"`
	Status  int       `json:"status"`
}
