package state

import (
	"context"
	"time"
)

// Token is an API token as stored: its hash, never the token. A token is found by the hash
// of what a caller presents; ID names it in lists and when it is revoked.
type Token struct {
	ID        string
	Hash      []byte // SHA-256 of the token
	Tenant    string
	Role      string // viewer, deployer or admin (internal/tenant)
	Name      string // what it is for, as its creator said
	CreatedBy string // the subject that created it
	CreatedAt time.Time
	ExpiresAt time.Time // zero: never
	RevokedAt time.Time // zero: not revoked
}

// Grant gives a subject (a token's ID, or "oidc:" and an OIDC subject) a role on the stacks
// of its tenant whose names match Stack (a path.Match pattern), above the role it has anyway.
type Grant struct {
	Tenant    string
	Subject   string
	Stack     string
	Role      string
	CreatedAt time.Time
}

// AuditEntry is one change made through the API, or one refused: who, what, when, from where.
type AuditEntry struct {
	Seq     int64 // assigned by AppendAudit, increasing
	At      time.Time
	Tenant  string // the caller's tenant
	Subject string // the caller: a token's ID, "server" for the server's own token, "oidc:SUB"
	Role    string
	Action  string // "METHOD /route/pattern"
	Target  string // what it acted on: a stack, a function, a token's ID
	Remote  string // the client's address (and X-Forwarded-For when a proxy sent one)
	Status  int    // the HTTP status of the answer
}

// AuditFilter selects audit entries: those with Seq > After, of Tenant when not empty, at
// most Limit (0: all), oldest first.
type AuditFilter struct {
	After  int64
	Tenant string
	Limit  int
}

// Accounts stores tokens, grants and the audit log. It is not part of Store: backends that
// keep accounts implement it besides.
type Accounts interface {
	// CreateToken inserts t; an ID or hash taken is ErrExists.
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the token whose hash is hash, revoked or not, or ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns tenant's tokens ("" : every tenant's), by creation.
	ListTokens(ctx context.Context, tenant string) ([]Token, error)
	// RevokeToken marks tenant's token id revoked at at ("" tenant: any tenant's), or returns
	// ErrNotFound. Revoking a revoked token keeps its first revocation time.
	RevokeToken(ctx context.Context, tenant, id string, at time.Time) error
	// PutGrant inserts or replaces the grant of (Tenant, Subject, Stack).
	PutGrant(ctx context.Context, g Grant) error
	// DeleteGrant removes a grant, or returns ErrNotFound.
	DeleteGrant(ctx context.Context, tenant, subject, stack string) error
	// Grants returns the grants of subject in tenant ("" subject: all of the tenant's), by
	// subject and stack.
	Grants(ctx context.Context, tenant, subject string) ([]Grant, error)
	// AppendAudit appends e and returns its Seq.
	AppendAudit(ctx context.Context, e AuditEntry) (int64, error)
	// ListAudit returns the entries f selects.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEntry, error)
}
