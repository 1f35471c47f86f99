package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// customTemplate is a stack of one custom resource with token.
func customTemplate(token string) string {
	return fmt.Sprintf(`{"AWSTemplateFormatVersion": "2010-09-09",
		"Resources": {"Thing": {"Type": "Custom::Thing", "Properties": {"ServiceToken": %q, "Name": "hello"}}}}`, token)
}

// thingEvents lists "STATUS: reason" of the Thing resource's events.
func thingEvents(t *testing.T, a *App, stack string) []string {
	t.Helper()
	var evs struct{ Events []api.Event }
	call(t, a, "GET", "/v1/stacks/"+stack+"/events", nil, http.StatusOK, &evs)
	var out []string
	for _, ev := range evs.Events {
		if ev.LogicalID == "Thing" {
			out = append(out, ev.Status+": "+ev.Reason)
		}
	}
	return out
}

// TestRefusedCreateIsNotRolledBack drives a real server over HTTP: a Create whose endpoint
// never accepted it (nothing listens on the port; a 404, as a mistyped token gets, with a huge,
// dirty body) ends
// ROLLBACK_COMPLETE without a Delete, and its events quote only a short, sanitised excerpt.
func TestRefusedCreateIsNotRolledBack(t *testing.T) {
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there now

	var mu sync.Mutex
	var got []string // RequestType of every POST the 404 handler received
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ RequestType string }
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		got = append(got, ev.RequestType)
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.Copy(w, bytes.NewReader(bytes.Repeat([]byte("\x1b[31mstack trace\x00\r\n\u202e"), 1<<20/24)))
	}))
	defer failing.Close()

	cases := map[string]struct {
		token, failed, skipped string
	}{
		"NothingListens": {token: closed, failed: "Cannot deliver the Create request to the ServiceToken endpoint",
			skipped: "Delete skipped: the ServiceToken endpoint never accepted the Create request (cairn could not connect to it), so nothing was created"},
		"Answers404": {token: failing.URL + "/", failed: "The ServiceToken endpoint answered 404 Not Found to the Create request",
			skipped: "Delete skipped: the ServiceToken endpoint never accepted the Create request (it answered 404), so nothing was created"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stack := strings.ToLower(name)
			var op api.Operation
			call(t, a, "POST", "/v1/stacks/"+stack+"/deploy", api.DeployRequest{TemplateName: "stack.json", Template: customTemplate(tc.token)},
				http.StatusAccepted, &op)
			if op = waitFor(t, a, op.ID); op.StackStatus != "ROLLBACK_COMPLETE" {
				t.Fatalf("deploy ended %s (%s): %s", op.Status, op.StackStatus, op.StatusReason)
			}
			evs := thingEvents(t, a, stack)
			statuses := make([]string, len(evs))
			for i, ev := range evs {
				statuses[i], _, _ = strings.Cut(ev, ":")
			}
			if diff := cmp.Diff([]string{"CREATE_IN_PROGRESS", "CREATE_FAILED", "DELETE_SKIPPED"}, statuses); diff != "" {
				t.Fatalf("events of Thing: -want +got:\n%s\n%q", diff, evs)
			}
			if !strings.HasPrefix(evs[1], "CREATE_FAILED: "+tc.failed) {
				t.Errorf("CREATE_FAILED reason %q, want it to start with %q", evs[1], tc.failed)
			}
			if want := "DELETE_SKIPPED: " + tc.skipped; evs[2] != want {
				t.Errorf("DELETE_SKIPPED event %q, want %q", evs[2], want)
			}
			if len(evs[1]) > 600 {
				t.Errorf("CREATE_FAILED reason is %d bytes: %q", len(evs[1]), evs[1])
			}
			for _, c := range evs[1] {
				if unicode.IsControl(c) || c == '\u202e' {
					t.Fatalf("CREATE_FAILED reason %q keeps control character %U", evs[1], c)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"Create"}, got); diff != "" {
		t.Errorf("requests the 404 handler got: -want +got:\n%s", diff)
	}
}

// TestServiceTokenPolicy: a server with tenants refuses a ServiceToken on its own loopback
// unless --service-token-allow lists it.
func TestServiceTokenPolicy(t *testing.T) {
	var posts sync.WaitGroup
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		posts.Add(1)
		go func() {
			defer posts.Done()
			body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": "thing-1",
				"StackId": ev["StackId"], "RequestId": ev["RequestId"], "LogicalResourceId": ev["LogicalResourceId"]})
			req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
	defer posts.Wait()
	tenants := map[string]string{"token-a": "a"}

	t.Run("Refused", func(t *testing.T) {
		a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", Tenants: tenants})
		var e api.Error
		call(t, a, "POST", "/v1/stacks/s/deploy", api.DeployRequest{TemplateName: "stack.json", Template: customTemplate(handler.URL + "/")},
			http.StatusBadRequest, &e)
		if e.Code != "validation_failed" || !strings.Contains(fmt.Sprint(e), "it is a loopback address") {
			t.Errorf("deploy answered %+v, want a validation failure naming the loopback refusal", e)
		}
	})
	t.Run("Listed", func(t *testing.T) {
		a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", Tenants: tenants, ServiceTokenAllow: []string{"10.0.0.0/8,127.0.0.1"}})
		var op api.Operation
		call(t, a, "POST", "/v1/stacks/s/deploy", api.DeployRequest{TemplateName: "stack.json", Template: customTemplate(handler.URL + "/")},
			http.StatusAccepted, &op)
		if op = waitFor(t, a, op.ID); op.StackStatus != "CREATE_COMPLETE" {
			t.Fatalf("deploy ended %s: %s", op.StackStatus, op.StatusReason)
		}
	})
	t.Run("MadeTokenTenant", func(t *testing.T) {
		// No tenants file: the server's own tenant reaches loopback handlers as ever, but a
		// tenant of a token made with `cairn token create` is guarded as a tenants file's
		// would be, and may not run code on the server.
		a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
		var tok api.Token
		call(t, a, "POST", "/v1/tokens", api.TokenCreateRequest{Tenant: "alpha", Role: "deployer"}, http.StatusCreated, &tok)
		as := func(method, path string, in any) (int, string) {
			b, _ := json.Marshal(in)
			req, _ := http.NewRequest(method, a.URL()+path, bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+tok.Secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		deploy := api.DeployRequest{TemplateName: "stack.json", Template: customTemplate(handler.URL + "/")}
		if code, body := as("POST", "/v1/stacks/s/deploy", deploy); code != http.StatusBadRequest || !strings.Contains(body, "it is a loopback address") {
			t.Errorf("alpha's deploy to a loopback handler: %d %s, want refused", code, body)
		}
		fn := api.CreateFunctionRequest{Name: "f", Runtime: "python", Handler: "index.handler", Code: pythonFunction(t)}
		if code, body := as("POST", "/v1/functions", fn); code != http.StatusBadRequest || !strings.Contains(body, "runs code on the cairn server") {
			t.Errorf("alpha's function with code: %d %s, want refused", code, body)
		}
		var op api.Operation
		call(t, a, "POST", "/v1/stacks/s/deploy", deploy, http.StatusAccepted, &op)
		if op = waitFor(t, a, op.ID); op.StackStatus != "CREATE_COMPLETE" {
			t.Fatalf("the server's own deploy to a loopback handler ended %s: %s", op.StackStatus, op.StatusReason)
		}
	})
	t.Run("DefaultTenantDeployer", func(t *testing.T) {
		// A deployer (or a viewer with a grant) of tenant default is not the server's admin:
		// it may not run code on the server, which would hand it the server's own token.
		a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
		var tok api.Token
		call(t, a, "POST", "/v1/tokens", api.TokenCreateRequest{Role: "deployer"}, http.StatusCreated, &tok)
		as := func(method, path string, in any) (int, string) {
			b, _ := json.Marshal(in)
			req, _ := http.NewRequest(method, a.URL()+path, bytes.NewReader(b))
			req.Header.Set("Authorization", "Bearer "+tok.Secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		fn := api.CreateFunctionRequest{Name: "f", Runtime: "python", Handler: "index.handler", Code: pythonFunction(t)}
		if code, body := as("POST", "/v1/functions", fn); code != http.StatusBadRequest || !strings.Contains(body, "runs code on the cairn server") {
			t.Errorf("a default deployer's function with code: %d %s, want refused", code, body)
		}
		exec := api.DeployRequest{Files: map[string]string{"main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" { command = "cat token" }
}`}}
		if code, body := as("POST", "/v1/stacks/x/deploy", exec); code != http.StatusBadRequest || !strings.Contains(body, "Provisioner not allowed") {
			t.Errorf("a default deployer's local-exec: %d %s, want refused", code, body)
		}
		loop := api.DeployRequest{TemplateName: "stack.json", Template: customTemplate(handler.URL + "/")}
		if code, body := as("POST", "/v1/stacks/s/deploy", loop); code != http.StatusBadRequest || !strings.Contains(body, "it is a loopback address") {
			t.Errorf("a default deployer's deploy to a loopback handler: %d %s, want refused", code, body)
		}
		// The server's own token may.
		var f api.Function
		call(t, a, "POST", "/v1/functions", fn, http.StatusCreated, &f)
	})
	t.Run("BadList", func(t *testing.T) {
		_, err := Start(t.Context(), Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", ServiceTokenAllow: []string{"https://x"}})
		if err == nil || !strings.Contains(err.Error(), "--service-token-allow") {
			t.Errorf("Start = %v, want an error naming --service-token-allow", err)
		}
	})
}
