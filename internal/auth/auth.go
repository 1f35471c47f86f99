// Package auth turns the credential a caller presents into a tenant.Caller: the server's own
// token, the tokens of a tenants file, tokens created with `cairn token create` (stored as
// their hash, state.Accounts) and OIDC ID tokens of a configured issuer. It also mints tokens.
// It imports state and tenant.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// ErrUnauthorized says the credential is missing, unknown, expired or revoked. Its message
// never says which, so that a guess learns nothing.
var ErrUnauthorized = errors.New("missing or invalid token")

// Config configures an Authenticator.
type Config struct {
	// ServerToken is the server's own token: the admin of tenant default. Empty: none.
	ServerToken string
	// Tenants maps the tokens of a tenants file to their tenants; each is its tenant's admin
	// (as it could do everything in its tenant before roles existed).
	Tenants map[string]string
	// Accounts holds the created tokens and the grants; nil: none.
	Accounts state.Accounts
	// OIDC, when not nil, accepts ID tokens of one issuer.
	OIDC *OIDC
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Authenticator checks credentials. It is safe for concurrent use.
type Authenticator struct {
	static   []staticToken
	accounts state.Accounts
	oidc     *OIDC
	now      func() time.Time

	mu     sync.Mutex
	issued map[[32]byte]issued // Issue's tokens, by hash: this process's only
}

type issued struct {
	caller  tenant.Caller
	expires time.Time
}

// Issue makes a token for c that this process alone accepts, until ttl has passed: for a
// plugin that calls back into this replica's APIs as a tenant (cairn's kube provider), where
// no token of the tenant's is at hand to give (they are stored hashed). Nothing is stored.
func (a *Authenticator) Issue(c tenant.Caller, ttl time.Duration) string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	tok := runPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.issued == nil {
		a.issued = map[[32]byte]issued{}
	}
	for h, is := range a.issued {
		if !now.Before(is.expires) {
			delete(a.issued, h)
		}
	}
	a.issued[sha256.Sum256([]byte(tok))] = issued{c, now.Add(ttl)}
	return tok
}

type staticToken struct {
	token  []byte
	caller tenant.Caller
}

// New returns the authenticator of cfg.
func New(cfg Config) *Authenticator {
	a := &Authenticator{accounts: cfg.Accounts, oidc: cfg.OIDC, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	if cfg.ServerToken != "" {
		a.static = append(a.static, staticToken{[]byte(cfg.ServerToken), tenant.Caller{Tenant: tenant.Default, Subject: "server", Role: tenant.Admin}})
	}
	for tok, name := range cfg.Tenants {
		if tok != "" {
			a.static = append(a.static, staticToken{[]byte(tok), tenant.Caller{Tenant: name, Subject: "tenants-file", Role: tenant.Admin}})
		}
	}
	return a
}

// Open reports whether no credential is configured: every caller is then the admin of
// tenant default (a loopback server run with --no-auth).
func (a *Authenticator) Open() bool {
	return len(a.static) == 0 && a.accounts == nil && a.oidc == nil
}

// Multi reports whether callers of several tenants may call.
func (a *Authenticator) Multi() bool { return len(a.static) > 1 || a.accounts != nil || a.oidc != nil }

// Authenticate returns the caller presented stands for, or an error wrapping ErrUnauthorized
// (other errors: the store failed).
func (a *Authenticator) Authenticate(ctx context.Context, presented string) (tenant.Caller, error) {
	if a.Open() {
		return tenant.Caller{Tenant: tenant.Default, Subject: "server", Role: tenant.Admin}, nil
	}
	presented = strings.TrimSpace(presented)
	if presented == "" {
		return tenant.Caller{}, ErrUnauthorized
	}
	var found *tenant.Caller
	for i := range a.static { // every one compared, in constant time
		if subtle.ConstantTimeCompare([]byte(presented), a.static[i].token) == 1 {
			found = &a.static[i].caller
		}
	}
	if found != nil {
		return *found, nil
	}
	if a.oidc != nil && looksLikeJWT(presented) {
		c, err := a.oidc.verify(ctx, presented)
		if err != nil {
			return tenant.Caller{}, err
		}
		return a.withGrants(ctx, c)
	}
	if strings.HasPrefix(presented, runPrefix) {
		a.mu.Lock()
		is, ok := a.issued[sha256.Sum256([]byte(presented))]
		a.mu.Unlock()
		if !ok || !a.now().Before(is.expires) {
			return tenant.Caller{}, ErrUnauthorized
		}
		return is.caller, nil
	}
	if a.accounts == nil || !strings.HasPrefix(presented, tokenPrefix) {
		return tenant.Caller{}, ErrUnauthorized
	}
	t, err := a.accounts.TokenByHash(ctx, Hash(presented))
	if errors.Is(err, state.ErrNotFound) {
		return tenant.Caller{}, ErrUnauthorized
	}
	if err != nil {
		return tenant.Caller{}, fmt.Errorf("cannot check the token: %w", err)
	}
	now := a.now()
	if !t.RevokedAt.IsZero() || (!t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)) {
		return tenant.Caller{}, ErrUnauthorized
	}
	return a.withGrants(ctx, tenant.Caller{Tenant: t.Tenant, Subject: t.ID, Role: t.Role})
}

// withGrants adds the stored grants of c's subject.
func (a *Authenticator) withGrants(ctx context.Context, c tenant.Caller) (tenant.Caller, error) {
	if a.accounts == nil {
		return c, nil
	}
	gs, err := a.accounts.Grants(ctx, c.Tenant, c.Subject)
	if err != nil {
		return tenant.Caller{}, fmt.Errorf("cannot read grants: %w", err)
	}
	for _, g := range gs {
		c.Grants = append(c.Grants, tenant.Grant{Stack: g.Stack, Role: g.Role})
	}
	return c, nil
}

// tokenPrefix starts every minted token, so that a leaked one is recognised by secret
// scanners and a JWT or a static token is not looked up; runPrefix starts Issue's, which no
// minted token can (base64url has no '_' after "cairn" without the "cairn_" separator).
const (
	tokenPrefix = "cairn_"
	runPrefix   = "cairnrun_"
)

// Hash is what the store keeps of a token: its SHA-256. Tokens are 256 random bits, so a
// fast hash is enough (no dictionary to guess from).
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Minted is a token just created: Secret is shown once, the store keeps Token.
type Minted struct {
	Secret string
	Token  state.Token
}

// Mint creates a token of tenant with role and stores its hash. expires zero: never.
func Mint(ctx context.Context, accounts state.Accounts, tenantName, role, name, createdBy string, now, expires time.Time) (Minted, error) {
	if !tenant.ValidName(tenantName) {
		return Minted{}, fmt.Errorf("invalid tenant name %q", tenantName)
	}
	if !tenant.ValidRole(role) {
		return Minted{}, fmt.Errorf("invalid role %q: want one of %s", role, strings.Join(tenant.Roles, ", "))
	}
	var secret [32]byte
	var id [6]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return Minted{}, err
	}
	if _, err := rand.Read(id[:]); err != nil {
		return Minted{}, err
	}
	m := Minted{Secret: tokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])}
	m.Token = state.Token{ID: "tok_" + hex.EncodeToString(id[:]), Hash: Hash(m.Secret), Tenant: tenantName, Role: role,
		Name: name, CreatedBy: createdBy, CreatedAt: now.UTC(), ExpiresAt: expires.UTC()}
	if expires.IsZero() {
		m.Token.ExpiresAt = time.Time{}
	}
	if err := accounts.CreateToken(ctx, m.Token); err != nil {
		return Minted{}, err
	}
	return m, nil
}

// looksLikeJWT reports whether s has a JWS compact serialization's shape.
func looksLikeJWT(s string) bool {
	return strings.Count(s, ".") == 2 && strings.HasPrefix(s, "eyJ")
}
