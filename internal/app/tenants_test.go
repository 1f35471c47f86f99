package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
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

// TestTenantsAreABoundaryOverHTTP: with --tenants, tenant B gets 404 for every object of
// tenant A (stacks, outputs, events, operations, cancel, delete, import, functions and their
// logs) and sees none of them listed; B's stack or function of the same name is B's own; and
// the private-provider hijack is closed: B cannot delete A's function, and its own function of
// the same name never receives A's provider calls.
func TestTenantsAreABoundaryOverHTTP(t *testing.T) {
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", Token: "default-token",
		Tenants:           map[string]string{"token-a": "a", "token-b": "b"},
		ServiceTokenAllow: []string{"127.0.0.1"}}) // the test's handlers listen on loopback
	type answer struct {
		status int
		body   string
	}
	send := func(tok, method, path string, in any) answer {
		t.Helper()
		var body io.Reader
		if in != nil {
			b, _ := json.Marshal(in)
			body = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, a.URL()+path, body)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Client-Request-Id", "3f9c2a70-5d1e-4b8e-9a61-0c7d2e4f1b22")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, string(b)}
	}
	handler := func(greeting string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var ev map[string]any
			_ = json.NewDecoder(r.Body).Decode(&ev)
			w.WriteHeader(http.StatusOK)
			go func() {
				body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": "thing-" + greeting,
					"StackId": ev["StackId"], "RequestId": ev["RequestId"], "LogicalResourceId": ev["LogicalResourceId"],
					"Data": map[string]string{"Greeting": greeting}})
				req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}))
	}
	ha, hb := handler("from-a"), handler("from-b")
	defer ha.Close()
	defer hb.Close()
	tmpl := func(url string) api.DeployRequest {
		return api.DeployRequest{TemplateName: "stack.json", Template: fmt.Sprintf(`{"Resources": {"Thing": {"Type": "Custom::Thing",
			"Properties": {"ServiceToken": %q}}}, "Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Thing", "Greeting"]}}}}`, url)}
	}
	wait := func(tok, id string) api.Operation {
		t.Helper()
		for range 60 {
			var op api.Operation
			ans := send(tok, "GET", "/v1/operations/"+id+"?wait=5s", nil)
			if err := json.Unmarshal([]byte(ans.body), &op); err != nil || ans.status != 200 {
				t.Fatalf("GET operation %s: %d %s", id, ans.status, ans.body)
			}
			if op.Status != "running" {
				return op
			}
		}
		t.Fatalf("operation %s did not end", id)
		return api.Operation{}
	}
	deploy := func(tok, url string) api.Operation {
		t.Helper()
		ans := send(tok, "POST", "/v1/stacks/app/deploy", tmpl(url))
		var op api.Operation
		if err := json.Unmarshal([]byte(ans.body), &op); err != nil || ans.status != 202 {
			t.Fatalf("deploy: %d %s", ans.status, ans.body)
		}
		if op = wait(tok, op.ID); op.Status != "succeeded" {
			t.Fatalf("deploy ended %s: %s", op.Status, op.StatusReason)
		}
		return op
	}
	opA := deploy("token-a", ha.URL)
	if ans := send("token-a", "POST", "/v1/functions", api.CreateFunctionRequest{Name: "prov", URL: "https://a.invalid/provider"}); ans.status != 201 && ans.status != 200 {
		t.Fatalf("create function: %d %s", ans.status, ans.body)
	}

	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/stacks/app"},
		{"GET", "/v1/stacks/app/outputs"},
		{"GET", "/v1/stacks/app/events"},
		{"GET", "/v1/operations/" + opA.ID},
		{"POST", "/v1/stacks/app/cancel"},
		{"DELETE", "/v1/stacks/app"},
		{"GET", "/v1/functions/prov"},
		{"GET", "/v1/functions/prov/logs"},
		{"POST", "/v1/functions/prov/invoke"},
		{"DELETE", "/v1/functions/prov"},
	} {
		if ans := send("token-b", c.method, c.path, nil); ans.status != 404 {
			t.Errorf("tenant b: %s %s = %d %s, want 404", c.method, c.path, ans.status, ans.body)
		}
	}
	// An escaped slash names no stack or function: a/app is tenant a's key, not a name.
	for _, tok := range []string{"token-b", "default-token"} {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/stacks/a%2Fapp"},
			{"GET", "/v1/stacks/a%2Fapp/outputs"},
			{"GET", "/v1/stacks/a%2Fapp/events"},
			{"POST", "/v1/stacks/a%2Fapp/cancel"},
			{"DELETE", "/v1/stacks/a%2Fapp"},
			{"GET", "/v1/functions/a~prov"},
			{"GET", "/v1/functions/a%2Fprov"},
			{"GET", "/v1/functions/a%2Fprov/logs"},
			{"POST", "/v1/functions/a%2Fprov/invoke"},
		} {
			if ans := send(tok, c.method, c.path, nil); ans.status != 404 && ans.status != 400 {
				t.Errorf("%s: %s %s = %d %.200s, want 404", tok, c.method, c.path, ans.status, ans.body)
			}
		}
	}
	if ans := send("token-b", "GET", "/v1/stacks", nil); strings.Contains(ans.body, `"app"`) {
		t.Errorf("tenant b lists tenant a's stack: %s", ans.body)
	}
	if ans := send("token-b", "GET", "/v1/functions", nil); strings.Contains(ans.body, "prov") {
		t.Errorf("tenant b lists tenant a's function: %s", ans.body)
	}

	// B's stack "app" is its own: deploying it leaves A's untouched.
	deploy("token-b", hb.URL)
	for tok, want := range map[string]string{"token-a": "from-a", "token-b": "from-b"} {
		if ans := send(tok, "GET", "/v1/stacks/app/outputs", nil); !strings.Contains(ans.body, want) {
			t.Errorf("%s's outputs of app: %d %s, want %s", tok, ans.status, ans.body, want)
		}
	}
	if ans := send("token-b", "GET", "/v1/stacks/app/events", nil); strings.Contains(ans.body, "from-a") || strings.Contains(ans.body, "thing-from-a") {
		t.Errorf("tenant b's events show tenant a's: %s", ans.body)
	}

	// The hijack: A's private provider version points at A's function "prov". B creates its
	// own "prov" aimed at B's server; A's provider calls must still go to A's function.
	stolen := make(chan string, 16)
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		stolen <- string(b)
		http.Error(w, "no", 500)
	}))
	defer thief.Close()
	if ans := send("token-b", "POST", "/v1/functions", api.CreateFunctionRequest{Name: "prov", URL: thief.URL + "/provider"}); ans.status != 201 && ans.status != 200 {
		t.Fatalf("tenant b cannot create its own function prov: %d %s", ans.status, ans.body)
	}
	urn := "urn:fss:cn-north-4:0123456789abcdef0123456789abcdef:function:default:prov:latest"
	if ans := send("token-a", "POST", "/v1/private-providers", map[string]any{"provider_name": "acme",
		"provider_version": "1.0.0", "function_graph_urn": urn}); ans.status != 201 {
		t.Fatalf("register a's provider: %d %s", ans.status, ans.body)
	}
	tf := `terraform {
  required_providers {
    acme = { source = "huawei.com/private-provider/acme", version = "1.0.0" }
  }
}
resource "acme_thing" "x" {}
`
	send("token-a", "POST", "/v1/validate", api.ValidateRequest{Files: map[string]string{"main.tf": tf}})
	send("token-a", "POST", "/v1/stacks/tf/preview", api.DeployRequest{Files: map[string]string{"main.tf": tf}})
	select {
	case body := <-stolen:
		t.Errorf("tenant b's function received tenant a's provider call: %.200s", body)
	default:
	}
}
