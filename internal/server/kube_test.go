package server

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// TestWhoami: the kube API checks tokens with GET /v1/whoami; the server's own token is the
// admin, a tenant's is not, a wrong one is 401.
func TestWhoami(t *testing.T) {
	h := New(Config{Engine: &fakeEngine{}, Token: "root-token", Tenants: map[string]string{"alpha-token": "alpha"}}).Handler()
	for _, c := range []struct {
		token string
		want  answer
	}{
		{"root-token", answer{200, map[string]any{"tenant": "default", "admin": true, "role": "admin", "subject": "server"}}},
		{"alpha-token", answer{200, map[string]any{"tenant": "alpha", "admin": false, "role": "admin", "subject": "tenants-file"}}},
		{"nope", answer{401, map[string]any{"code": "unauthorized", "message": "missing or wrong bearer token"}}},
	} {
		got, _ := do(t, h, call{method: "GET", path: "/v1/whoami", header: bearer(c.token)})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("whoami with %s (-want +got):\n%s", c.token, diff)
		}
	}
}

// TestKubeEndpoint: GET /v1/kube says where the kube API is, or 404 kube_not_served.
func TestKubeEndpoint(t *testing.T) {
	h := New(Config{Engine: &fakeEngine{}, Token: "root-token"}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/kube", header: bearer("root-token")})
	if got.Status != http.StatusNotFound || got.Body.(map[string]any)["code"] != api.CodeKubeNotServed {
		t.Fatalf("without a kube API: got %+v", got)
	}
	h = New(Config{Engine: &fakeEngine{}, Token: "root-token", Kube: func() (api.KubeEndpoint, error) {
		return api.KubeEndpoint{Server: "https://127.0.0.1:6443", CA: "PEM"}, nil
	}}).Handler()
	got, _ = do(t, h, call{method: "GET", path: "/v1/kube", header: bearer("root-token")})
	if diff := cmp.Diff(answer{200, map[string]any{"server": "https://127.0.0.1:6443", "ca": "PEM"}}, got); diff != "" {
		t.Fatalf("GET /v1/kube (-want +got):\n%s", diff)
	}
}
