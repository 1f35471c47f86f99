package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/cairn-dev/cairn/internal/tenant"
)

// OIDCConfig names an issuer whose ID tokens stand for callers. The issuer's discovery
// document and keys are fetched on first use (and again after a failure), so that a server
// starts while its issuer is down.
type OIDCConfig struct {
	Issuer   string // e.g. https://accounts.example.com
	Audience string // the client ID tokens must be issued to
	// TenantClaim and RoleClaim name the claims that hold the caller's tenant and role;
	// defaults "cairn_tenant" and "cairn_role". A token without a tenant claim is refused; one
	// without a role is a viewer.
	TenantClaim string
	RoleClaim   string
	// Client fetches the issuer's documents; nil: http.DefaultClient.
	Client *http.Client
	// AllowServerAdmin lets a token whose tenant is "default" and role admin be the server's
	// admin. Off: such a token is refused, so that a claim-mapping mistake at the issuer
	// cannot hand out the server.
	AllowServerAdmin bool
}

// OIDC verifies ID tokens of one issuer.
type OIDC struct {
	cfg      OIDCConfig
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	failedAt time.Time
}

// NewOIDC returns the verifier of cfg.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("OIDC needs an issuer and an audience (the client ID its tokens are issued to)")
	}
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = "cairn_tenant"
	}
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = "cairn_role"
	}
	return &OIDC{cfg: cfg}, nil
}

// retryAfter spaces discovery attempts after a failure, so that bad tokens cannot make the
// server hammer its issuer.
const retryAfter = 5 * time.Second

func (o *OIDC) idVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, nil
	}
	if !o.failedAt.IsZero() && time.Since(o.failedAt) < retryAfter {
		return nil, fmt.Errorf("OIDC issuer %s unreachable", o.cfg.Issuer)
	}
	// The keys are fetched later with this context: it must outlive the request.
	p, err := oidc.NewProvider(oidc.ClientContext(context.WithoutCancel(ctx), o.client()), o.cfg.Issuer)
	if err != nil {
		o.failedAt = time.Now()
		return nil, fmt.Errorf("cannot discover OIDC issuer %s: %w", o.cfg.Issuer, err)
	}
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.Audience})
	return o.verifier, nil
}

func (o *OIDC) client() *http.Client {
	if o.cfg.Client != nil {
		return o.cfg.Client
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// verify checks raw (signature, issuer, audience, expiry) and maps its claims to a caller.
func (o *OIDC) verify(ctx context.Context, raw string) (tenant.Caller, error) {
	v, err := o.idVerifier(ctx)
	if err != nil {
		return tenant.Caller{}, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		return tenant.Caller{}, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return tenant.Caller{}, fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	name, _ := claims[o.cfg.TenantClaim].(string)
	if !tenant.ValidName(name) {
		return tenant.Caller{}, fmt.Errorf("%w: the ID token has no valid %q claim", ErrUnauthorized, o.cfg.TenantClaim)
	}
	role, _ := claims[o.cfg.RoleClaim].(string)
	if role == "" {
		role = tenant.Viewer
	}
	if !tenant.ValidRole(role) {
		return tenant.Caller{}, fmt.Errorf("%w: the ID token's %q claim %q is not a role", ErrUnauthorized, o.cfg.RoleClaim, role)
	}
	c := tenant.Caller{Tenant: name, Subject: "oidc:" + tok.Subject, Role: role}
	if c.ServerAdmin() && !o.cfg.AllowServerAdmin {
		return tenant.Caller{}, fmt.Errorf("%w: an ID token may not be the server's admin (tenant %q, role admin) unless the server allows it (--oidc-allow-server-admin)",
			ErrUnauthorized, tenant.Default)
	}
	return c, nil
}
