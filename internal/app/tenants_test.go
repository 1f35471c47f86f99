package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestTenants: the server's token is tenant "default", the Tenants tokens their own tenants,
// and a private provider is seen by its tenant only.
func TestTenants(t *testing.T) {
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", Token: "default-token",
		Tenants: map[string]string{"token-a": "a", "token-b": "b"}})
	call := func(method, path, body, header, tok string) int {
		t.Helper()
		req, _ := http.NewRequest(method, a.URL()+path, strings.NewReader(body))
		req.Header.Set(header, tok)
		req.Header.Set("Client-Request-Id", "3f9c2a70-5d1e-4b8e-9a61-0c7d2e4f1b22")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	steps := []struct {
		method, path, body, header, tok string
		want                            int
	}{
		{"POST", "/v1/private-providers", `{"provider_name":"acme"}`, "Authorization", "Bearer token-a", 201},
		{"GET", "/v1/private-providers/acme/metadata", "", "X-Auth-Token", "token-a", 200},
		{"GET", "/v1/private-providers/acme/metadata", "", "X-Auth-Token", "token-b", 404},
		{"GET", "/v1/private-providers/acme/metadata", "", "Authorization", "Bearer default-token", 404},
		{"GET", "/v1/private-providers/acme/metadata", "", "Authorization", "Bearer nope", 401},
		{"GET", "/v1/stacks", "", "X-Auth-Token", "token-b", 200},
		{"GET", "/v1/stacks", "", "Authorization", "Bearer default-token", 200},
		{"GET", "/v1/stacks", "", "Authorization", "Bearer nope", 401},
	}
	for _, s := range steps {
		if got := call(s.method, s.path, s.body, s.header, s.tok); got != s.want {
			t.Errorf("%s %s with %s %s: %d, want %d", s.method, s.path, s.header, s.tok, got, s.want)
		}
	}
}

func TestTenantsNeedAuth(t *testing.T) {
	_, err := Start(context.Background(), Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", NoAuth: true,
		Tenants: map[string]string{"t": "a"}})
	if err == nil || !strings.Contains(err.Error(), "--tenants and --no-auth") {
		t.Errorf("Start with Tenants and NoAuth: %v, want a refusal", err)
	}
}
