package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

// RunAccounts runs the suite of state.Accounts. open returns a new, empty store for one
// subtest, closed when it ends.
func RunAccounts(t *testing.T, open func(t *testing.T) state.Accounts) {
	suite := []struct {
		name string
		fn   func(*testing.T, state.Accounts)
	}{
		{"Tokens", testTokens},
		{"Grants", testGrants},
		{"Audit", testAudit},
	}
	for _, tc := range suite {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testTokens(t *testing.T, s state.Accounts) {
	ctx := t.Context()
	a := state.Token{ID: "tok1", Hash: []byte("hash-a"), Tenant: "alpha", Role: "viewer", Name: "ci", CreatedBy: "server",
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	b := state.Token{ID: "tok2", Hash: []byte("hash-b"), Tenant: "beta", Role: "admin", CreatedBy: "server", CreatedAt: t0.Add(time.Second)}
	for _, tok := range []state.Token{a, b} {
		if err := s.CreateToken(ctx, tok); err != nil {
			t.Fatalf("CreateToken(%s): %v", tok.ID, err)
		}
	}
	if err := s.CreateToken(ctx, state.Token{ID: "tok1", Hash: []byte("other"), Tenant: "alpha", Role: "viewer", CreatedAt: t0}); !errors.Is(err, state.ErrExists) {
		t.Errorf("CreateToken with a taken ID: got %v, want ErrExists", err)
	}
	if err := s.CreateToken(ctx, state.Token{ID: "tok3", Hash: []byte("hash-a"), Tenant: "alpha", Role: "viewer", CreatedAt: t0}); !errors.Is(err, state.ErrExists) {
		t.Errorf("CreateToken with a taken hash: got %v, want ErrExists", err)
	}
	got, err := s.TokenByHash(ctx, []byte("hash-a"))
	if err != nil {
		t.Fatalf("TokenByHash: %v", err)
	}
	if d := cmp.Diff(a, got, opts); d != "" {
		t.Errorf("TokenByHash (-want +got):\n%s", d)
	}
	if _, err := s.TokenByHash(ctx, []byte("nope")); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("TokenByHash of an unknown hash: got %v, want ErrNotFound", err)
	}
	all, err := s.ListTokens(ctx, "")
	if err != nil || len(all) != 2 || all[0].ID != "tok1" || all[1].ID != "tok2" {
		t.Errorf("ListTokens(all) = %v, %v; want tok1, tok2", ids(all), err)
	}
	if got, err := s.ListTokens(ctx, "beta"); err != nil || len(got) != 1 || got[0].ID != "tok2" {
		t.Errorf("ListTokens(beta) = %v, %v; want tok2", ids(got), err)
	}
	if err := s.RevokeToken(ctx, "beta", "tok1", t0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("RevokeToken of another tenant's token: got %v, want ErrNotFound", err)
	}
	if err := s.RevokeToken(ctx, "alpha", "tok1", t0.Add(time.Minute)); err != nil {
		t.Fatalf("RevokeToken: %v", err)
	}
	if err := s.RevokeToken(ctx, "", "tok1", t0.Add(time.Hour)); err != nil {
		t.Fatalf("RevokeToken again: %v", err)
	}
	if got, _ := s.TokenByHash(ctx, []byte("hash-a")); !got.RevokedAt.Equal(t0.Add(time.Minute).Truncate(time.Millisecond)) {
		t.Errorf("revoked token: RevokedAt = %v, want the first revocation %v", got.RevokedAt, t0.Add(time.Minute))
	}
	if err := s.RevokeToken(ctx, "", "nope", t0); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("RevokeToken of an unknown token: got %v, want ErrNotFound", err)
	}
}

func ids(ts []state.Token) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testGrants(t *testing.T, s state.Accounts) {
	ctx := t.Context()
	gs := []state.Grant{
		{Tenant: "alpha", Subject: "tok1", Stack: "web-*", Role: "deployer", CreatedAt: t0},
		{Tenant: "alpha", Subject: "tok1", Stack: "db", Role: "viewer", CreatedAt: t0},
		{Tenant: "alpha", Subject: "oidc:ann", Stack: "db", Role: "admin", CreatedAt: t0},
		{Tenant: "beta", Subject: "tok1", Stack: "x", Role: "admin", CreatedAt: t0},
	}
	for _, g := range gs {
		if err := s.PutGrant(ctx, g); err != nil {
			t.Fatalf("PutGrant: %v", err)
		}
	}
	// Replacing a grant changes its role.
	if err := s.PutGrant(ctx, state.Grant{Tenant: "alpha", Subject: "tok1", Stack: "db", Role: "deployer", CreatedAt: t0}); err != nil {
		t.Fatalf("PutGrant again: %v", err)
	}
	got, err := s.Grants(ctx, "alpha", "tok1")
	want := []state.Grant{
		{Tenant: "alpha", Subject: "tok1", Stack: "db", Role: "deployer", CreatedAt: t0},
		{Tenant: "alpha", Subject: "tok1", Stack: "web-*", Role: "deployer", CreatedAt: t0},
	}
	if err != nil {
		t.Fatalf("Grants: %v", err)
	}
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Errorf("Grants(alpha, tok1) (-want +got):\n%s", d)
	}
	if got, _ := s.Grants(ctx, "alpha", ""); len(got) != 3 {
		t.Errorf("Grants(alpha, all) = %d grants, want 3", len(got))
	}
	if err := s.DeleteGrant(ctx, "alpha", "tok1", "web-*"); err != nil {
		t.Fatalf("DeleteGrant: %v", err)
	}
	if err := s.DeleteGrant(ctx, "alpha", "tok1", "web-*"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("DeleteGrant twice: got %v, want ErrNotFound", err)
	}
	if got, _ := s.Grants(ctx, "beta", "tok1"); len(got) != 1 || got[0].Stack != "x" {
		t.Errorf("Grants(beta, tok1) = %v, want the one on x", got)
	}
}

func testAudit(t *testing.T, s state.Accounts) {
	ctx := t.Context()
	es := []state.AuditEntry{
		{At: t0, Tenant: "alpha", Subject: "tok1", Role: "deployer", Action: "POST /v1/stacks/{name}/deploy", Target: "web", Remote: "127.0.0.1:5000", Status: 202},
		{At: t0.Add(time.Second), Tenant: "beta", Subject: "server", Role: "admin", Action: "POST /v1/tokens", Target: "tok9", Remote: "[::1]:1", Status: 201},
		{At: t0.Add(2 * time.Second), Tenant: "alpha", Subject: "tok2", Role: "viewer", Action: "DELETE /v1/stacks/{name}", Target: "web", Remote: "10.0.0.1:2", Status: 403},
	}
	var last int64
	for i := range es {
		seq, err := s.AppendAudit(ctx, es[i])
		if err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
		if seq <= last {
			t.Errorf("AppendAudit: seq %d after %d, want increasing", seq, last)
		}
		es[i].Seq, last = seq, seq
	}
	got, err := s.ListAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatalf("ListAudit: %v", err)
	}
	if d := cmp.Diff(es, got, opts); d != "" {
		t.Errorf("ListAudit (-want +got):\n%s", d)
	}
	got, _ = s.ListAudit(ctx, state.AuditFilter{Tenant: "alpha", After: es[0].Seq})
	if d := cmp.Diff(es[2:], got, opts); d != "" {
		t.Errorf("ListAudit(alpha, after the first) (-want +got):\n%s", d)
	}
	got, _ = s.ListAudit(ctx, state.AuditFilter{Limit: 2})
	if len(got) != 2 || got[0].Seq != es[0].Seq {
		t.Errorf("ListAudit(limit 2) = %d entries, want the first two", len(got))
	}
}
