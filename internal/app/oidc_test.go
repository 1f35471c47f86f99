package app

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/auth/oidctest"
)

// TestOIDCBearerTokens: a server configured with an issuer on loopback takes its ID tokens as
// bearer tokens, with the tenant and role their claims name and the grants of their subject;
// an expired one is refused, and what the caller changed is audited under its subject.
func TestOIDCBearerTokens(t *testing.T) {
	is := oidctest.Start(t)
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", Token: "root",
		OIDC: &auth.OIDCConfig{Issuer: is.URL, Audience: "cairn"}})
	var g api.Grant
	call(t, a, "POST", "/v1/grants", api.Grant{Tenant: "alpha", Subject: "oidc:ann", Stack: "db", Role: "admin"}, http.StatusOK, &g)
	send := func(token, method, path string) (int, map[string]any) {
		req, _ := http.NewRequest(method, a.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	ann := is.Token(t, "ann", "cairn", time.Hour, map[string]any{"cairn_tenant": "alpha", "cairn_role": "viewer"})
	if code, who := send(ann, "GET", "/v1/whoami"); code != 200 || who["tenant"] != "alpha" || who["role"] != "viewer" || who["subject"] != "oidc:ann" {
		t.Fatalf("whoami with an ID token: %d %v", code, who)
	}
	// A viewer: refused a cancel of web, but its grant makes it admin of db (a 409: nothing runs).
	if code, _ := send(ann, "POST", "/v1/stacks/web/cancel"); code != http.StatusForbidden {
		t.Errorf("the viewer's cancel of web: %d, want 403", code)
	}
	if code, body := send(ann, "POST", "/v1/stacks/db/cancel"); code != http.StatusNotFound {
		t.Errorf("the granted cancel of db: %d %v, want 404 (allowed; no such stack)", code, body)
	}
	expired := is.Token(t, "ann", "cairn", -time.Minute, map[string]any{"cairn_tenant": "alpha"})
	if code, _ := send(expired, "GET", "/v1/whoami"); code != http.StatusUnauthorized {
		t.Errorf("an expired ID token: %d, want 401", code)
	}
	var entries []api.AuditEntry
	call(t, a, "GET", "/v1/audit?tenant=alpha", nil, http.StatusOK, &entries)
	if len(entries) < 2 || entries[0].Subject != "oidc:ann" || entries[0].Status != http.StatusForbidden {
		t.Errorf("alpha's audit log: %+v, want the ID token's refused cancel first", entries)
	}
}
