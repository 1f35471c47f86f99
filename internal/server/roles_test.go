package server

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// TestRoles: a viewer reads but cannot deploy, cancel or read secrets; a grant raises it on
// some stacks; a deployer cannot manage tokens nor reach another tenant's accounts or registry;
// an admin's audit log lists all of it, refusals included, and the server's admin sees every
// tenant's.
func TestRoles(t *testing.T) {
	ring, err := secrets.New(secrets.Key{9})
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: ring})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	eng := &fakeEngine{
		DeployFn: func(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
			return api.Operation{ID: "op-1", Stack: stack, Status: "running"}, nil
		},
		CancelFn: func(ctx context.Context, stack string) (api.Operation, error) {
			return api.Operation{ID: "op-1", Stack: stack, Status: "running"}, nil
		},
	}
	h := New(Config{Engine: eng, Auth: auth.New(auth.Config{ServerToken: "root", Accounts: store}), Accounts: store,
		Registry: registry.New(registry.Options{Store: store})}).Handler()

	mint := func(token, body string) string {
		t.Helper()
		got, _ := do(t, h, call{method: "POST", path: "/v1/tokens", body: body, header: bearer(token)})
		if got.Status != 201 {
			t.Fatalf("POST /v1/tokens %s: %+v", body, got)
		}
		return got.Body.(map[string]any)["secret"].(string)
	}
	admin := mint("root", `{"tenant": "alpha", "role": "admin", "name": "alpha's admin"}`)
	deployer := mint(admin, `{"role": "deployer"}`)
	viewer := mint(admin, `{"role": "viewer", "grants": [{"stack": "web-*", "role": "deployer"}]}`)
	mint("root", `{"tenant": "beta", "role": "admin"}`)

	deploy := `{"template": "{}"}`
	rfs := map[string]string{api.ClientRequestIDHeader: "0b6f2c4e-3d1a-4d8e-9f00-1a2b3c4d5e6f"}
	with := func(tok string, extra map[string]string) map[string]string {
		m := bearer(tok)
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name string
		call call
		want int
	}{
		{"a viewer reads", call{method: "GET", path: "/v1/whoami", header: bearer(viewer)}, 200},
		{"a viewer cannot deploy", call{method: "POST", path: "/v1/stacks/db/deploy", body: deploy, header: bearer(viewer)}, 403},
		{"a viewer cannot cancel", call{method: "POST", path: "/v1/stacks/db/cancel", header: bearer(viewer)}, 403},
		{"a viewer cannot read secrets", call{method: "GET", path: "/v1/stacks/db/outputs?show-secrets=true", header: bearer(viewer)}, 403},
		{"a viewer cannot pull a state", call{method: "GET", path: "/v1/stacks/db/state", header: bearer(viewer)}, 403},
		{"a viewer cannot make functions", call{method: "POST", path: "/v1/functions", body: `{}`, header: bearer(viewer)}, 403},
		{"a viewer cannot write the registry", call{method: "POST", path: "/v1/private-providers", body: `{"provider_name": "p"}`, header: with(viewer, rfs)}, 403},
		{"a viewer's grant lets it deploy web-1", call{method: "POST", path: "/v1/stacks/web-1/deploy", body: deploy, header: bearer(viewer)}, 202},
		{"a deployer deploys", call{method: "POST", path: "/v1/stacks/db/deploy", body: deploy, header: bearer(deployer)}, 202},
		{"a deployer cancels", call{method: "POST", path: "/v1/stacks/db/cancel", header: bearer(deployer)}, 202},
		{"a deployer cannot force a cancel", call{method: "POST", path: "/v1/stacks/db/cancel", body: `{"force": true}`, header: bearer(deployer)}, 403},
		{"a deployer cannot make tokens", call{method: "POST", path: "/v1/tokens", body: `{"role": "viewer"}`, header: bearer(deployer)}, 403},
		{"a deployer cannot list tokens", call{method: "GET", path: "/v1/tokens", header: bearer(deployer)}, 403},
		{"a deployer cannot read the audit log", call{method: "GET", path: "/v1/audit", header: bearer(deployer)}, 403},
		{"a tenant's admin cannot make another tenant's tokens", call{method: "POST", path: "/v1/tokens", body: `{"tenant": "beta", "role": "admin"}`, header: bearer(admin)}, 403},
		{"a tenant's admin cannot read another tenant's audit", call{method: "GET", path: "/v1/audit?tenant=beta", header: bearer(admin)}, 403},
		{"a tenant's admin cannot enable kube types", call{method: "POST", path: "/v1/kube/enable", body: `{}`, header: bearer(admin)}, 403},
		{"a wrong token is 401", call{method: "GET", path: "/v1/stacks", header: bearer("cairn_nope")}, 401},
	} {
		got, _ := do(t, h, c.call)
		if got.Status != c.want {
			t.Errorf("%s: %s %s answered %d %v, want %d", c.name, c.call.method, c.call.path, got.Status, got.Body, c.want)
		}
	}

	// The tenant admin's audit log: its tenant's changes and refusals, never beta's.
	got, _ := do(t, h, call{method: "GET", path: "/v1/audit", header: bearer(admin)})
	if got.Status != 200 {
		t.Fatalf("GET /v1/audit: %+v", got)
	}
	var actions []string
	for _, e := range got.Body.([]any) {
		m := e.(map[string]any)
		if m["tenant"] != "alpha" {
			t.Errorf("alpha's audit log holds an entry of %v", m["tenant"])
		}
		actions = append(actions, m["action"].(string)+" "+str(m["target"])+" "+m["role"].(string)+" "+fmtStatus(m["status"]))
	}
	for _, want := range []string{
		"(tenant alpha, role viewer, deployer on web-*) admin 201",
		"POST /v1/stacks/{name}/deploy db viewer 403",
		"POST /v1/stacks/{name}/deploy web-1 viewer 202",
		"POST /v1/stacks/{name}/deploy db deployer 202",
		"POST /v1/stacks/{name}/cancel db deployer 403",
		"POST /v1/private-providers  viewer 403",
		"POST /v1/tokens  deployer 403",
	} {
		if !slices.ContainsFunc(actions, func(a string) bool { return strings.HasSuffix(a, want) || a == want }) {
			t.Errorf("alpha's audit log lacks %q; it has:\n%v", want, actions)
		}
	}
	// The server's admin reads every tenant's.
	got, _ = do(t, h, call{method: "GET", path: "/v1/audit", header: bearer("root")})
	tenants := map[string]bool{}
	for _, e := range got.Body.([]any) {
		tenants[e.(map[string]any)["tenant"].(string)] = true
	}
	if !tenants["alpha"] || !tenants["default"] {
		t.Errorf("the server admin's audit log has tenants %v, want alpha and default", tenants)
	}
	// Revoked, a token is refused at once.
	toks, _ := do(t, h, call{method: "GET", path: "/v1/tokens", header: bearer(admin)})
	for _, tk := range toks.Body.([]any) {
		m := tk.(map[string]any)
		if m["role"] == "deployer" {
			if got, _ := do(t, h, call{method: "DELETE", path: "/v1/tokens/" + m["id"].(string), header: bearer(admin)}); got.Status != 200 {
				t.Fatalf("revoke: %+v", got)
			}
		}
	}
	if got, _ := do(t, h, call{method: "GET", path: "/v1/stacks", header: bearer(deployer)}); got.Status != 401 {
		t.Errorf("a revoked token: %d, want 401", got.Status)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func fmtStatus(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.Itoa(int(f))
	}
	return "?"
}
