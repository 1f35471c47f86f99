package auth_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/auth/oidctest"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
	"github.com/cairn-dev/cairn/internal/tenant"
)

func openStore(t *testing.T) *sqlite.Store {
	ring, err := secrets.New(secrets.Key{7})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: ring})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStoredTokens(t *testing.T) {
	ctx := t.Context()
	s := openStore(t)
	now := time.Now()
	a := auth.New(auth.Config{ServerToken: "root", Tenants: map[string]string{"file-tok": "beta"}, Accounts: s})
	m, err := auth.Mint(ctx, s, "alpha", tenant.Viewer, "ci", "server", now, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Token.Hash) == m.Secret || len(m.Secret) < 40 {
		t.Fatalf("minted %q: want a long secret stored only as its hash", m.Secret)
	}
	if err := s.PutGrant(ctx, state.Grant{Tenant: "alpha", Subject: m.Token.ID, Stack: "web-*", Role: tenant.Deployer}); err != nil {
		t.Fatal(err)
	}
	c, err := a.Authenticate(ctx, m.Secret)
	if err != nil {
		t.Fatalf("Authenticate(minted): %v", err)
	}
	if c.Tenant != "alpha" || c.Role != tenant.Viewer || c.Subject != m.Token.ID || c.RoleOn("web-1") != tenant.Deployer {
		t.Errorf("caller %+v: want alpha's viewer, deployer on web-*", c)
	}
	if c, err := a.Authenticate(ctx, "root"); err != nil || !c.ServerAdmin() {
		t.Errorf("the server's token: %+v, %v; want the server admin", c, err)
	}
	if c, err := a.Authenticate(ctx, "file-tok"); err != nil || c.Tenant != "beta" || c.Role != tenant.Admin {
		t.Errorf("a tenants-file token: %+v, %v; want beta's admin", c, err)
	}
	for _, bad := range []string{"", "cairn_nope", m.Secret + "x", "eyJ.a.b"} {
		if _, err := a.Authenticate(ctx, bad); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("Authenticate(%q): got %v, want ErrUnauthorized", bad, err)
		}
	}
	if err := s.RevokeToken(ctx, "alpha", m.Token.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, m.Secret); !errors.Is(err, auth.ErrUnauthorized) {
		t.Errorf("a revoked token: got %v, want ErrUnauthorized", err)
	}
	exp, err := auth.Mint(ctx, s, "alpha", tenant.Admin, "", "server", now, now.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(ctx, exp.Secret); !errors.Is(err, auth.ErrUnauthorized) {
		t.Errorf("an expired token: got %v, want ErrUnauthorized", err)
	}
	if _, err := auth.Mint(ctx, s, "alpha", "root", "", "server", now, time.Time{}); err == nil {
		t.Error("Mint with role root: want an error")
	}
}

func TestOIDC(t *testing.T) {
	ctx := t.Context()
	is := oidctest.Start(t)
	o, err := auth.NewOIDC(auth.OIDCConfig{Issuer: is.URL, Audience: "cairn"})
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t)
	if err := s.PutGrant(ctx, state.Grant{Tenant: "alpha", Subject: "oidc:ann", Stack: "db", Role: tenant.Admin}); err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Config{ServerToken: "root", Accounts: s, OIDC: o})
	c, err := a.Authenticate(ctx, is.Token(t, "ann", "cairn", time.Hour, map[string]any{"cairn_tenant": "alpha", "cairn_role": "deployer"}))
	if err != nil {
		t.Fatalf("Authenticate(ID token): %v", err)
	}
	if c.Tenant != "alpha" || c.Role != tenant.Deployer || c.Subject != "oidc:ann" || c.RoleOn("db") != tenant.Admin {
		t.Errorf("caller %+v: want alpha's deployer oidc:ann, admin on db", c)
	}
	if c, err := a.Authenticate(ctx, is.Token(t, "bob", "cairn", time.Hour, map[string]any{"cairn_tenant": "alpha"})); err != nil || c.Role != tenant.Viewer {
		t.Errorf("a token without a role: %+v, %v; want a viewer", c, err)
	}
	other := oidctest.Start(t)
	for name, raw := range map[string]string{
		"expired":            is.Token(t, "ann", "cairn", -time.Minute, map[string]any{"cairn_tenant": "alpha"}),
		"another audience":   is.Token(t, "ann", "other", time.Hour, map[string]any{"cairn_tenant": "alpha"}),
		"another issuer":     other.Token(t, "ann", "cairn", time.Hour, map[string]any{"cairn_tenant": "alpha"}),
		"no tenant":          is.Token(t, "ann", "cairn", time.Hour, nil),
		"a role that is not": is.Token(t, "ann", "cairn", time.Hour, map[string]any{"cairn_tenant": "alpha", "cairn_role": "root"}),
		"the server's admin": is.Token(t, "ann", "cairn", time.Hour, map[string]any{"cairn_tenant": "default", "cairn_role": "admin"}),
	} {
		if _, err := a.Authenticate(ctx, raw); !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("%s: got %v, want ErrUnauthorized", name, err)
		}
	}
}

// TestIssue: a token Issue made stands for its caller in this process until it expires; it
// is not a stored token.
func TestIssue(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	a := auth.New(auth.Config{ServerToken: "root", Accounts: openStore(t), Now: clock})
	tok := a.Issue(tenant.Caller{Tenant: "alpha", Subject: "kube-plugin", Role: tenant.Deployer}, time.Hour)
	c, err := a.Authenticate(t.Context(), tok)
	if err != nil || c.Tenant != "alpha" || c.Role != tenant.Deployer {
		t.Fatalf("Authenticate(issued) = %+v, %v", c, err)
	}
	other := auth.New(auth.Config{ServerToken: "root", Accounts: openStore(t), Now: clock})
	if _, err := other.Authenticate(t.Context(), tok); !errors.Is(err, auth.ErrUnauthorized) {
		t.Errorf("another process's issued token: %v, want ErrUnauthorized", err)
	}
	now = now.Add(2 * time.Hour)
	if _, err := a.Authenticate(t.Context(), tok); !errors.Is(err, auth.ErrUnauthorized) {
		t.Errorf("an expired issued token: %v, want ErrUnauthorized", err)
	}
}
