package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

func init() { timeZone = time.UTC }

// fakeServer answers a few routes of the API for one stack "web": a deploy that emits two
// events and ends as opStatus.
type fakeServer struct {
	t        *testing.T
	opStatus string
	block    bool // long polls of events block until the request ends

	mu      sync.Mutex
	events  []api.Event
	opDone  bool
	deploys []api.DeployRequest
}

var at = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

func (f *fakeServer) handler() http.Handler {
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /v1/stacks/{name}/events", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			reply(w, 401, api.Error{Code: api.CodeUnauthorized, Message: "missing or wrong bearer token"})
			return
		}
		if r.PathValue("name") != "web" {
			reply(w, 404, api.Error{Code: api.CodeNotFound, Message: "stack " + r.PathValue("name") + ": not found"})
			return
		}
		var after int64
		if s := r.URL.Query().Get("after"); s != "" {
			_ = json.Unmarshal([]byte(s), &after)
		}
		f.mu.Lock()
		var out []api.Event
		for _, ev := range f.events {
			if ev.Seq > after {
				out = append(out, ev)
			}
		}
		f.mu.Unlock()
		if len(out) == 0 && f.block && r.URL.Query().Get("wait") != "" {
			<-r.Context().Done()
			return
		}
		reply(w, 200, map[string]any{"events": nonNil(out)})
	})
	mux.HandleFunc("POST /v1/stacks/{name}/deploy", func(w http.ResponseWriter, r *http.Request) {
		var req api.DeployRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deploys = append(f.deploys, req)
		if !f.block {
			n := int64(len(f.events))
			f.events = append(f.events,
				api.Event{Seq: n + 1, Stack: "web", LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "UPDATE_IN_PROGRESS", Reason: "User Initiated", Timestamp: at},
				api.Event{Seq: n + 2, Stack: "web", LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "UPDATE_COMPLETE", Timestamp: at})
			f.opDone = true
		}
		reply(w, 202, api.Operation{ID: "op1", Stack: "web", Kind: "deploy", Status: "running"})
	})
	mux.HandleFunc("GET /v1/operations/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		op := api.Operation{ID: "op1", Stack: "web", Kind: "deploy", Status: "running", StartedAt: at}
		if f.opDone {
			op.Status, op.StackStatus = f.opStatus, "UPDATE_COMPLETE"
			if f.opStatus == "failed" {
				op.StackStatus, op.StatusReason = "UPDATE_ROLLBACK_COMPLETE", "Thing failed"
			}
		}
		reply(w, 200, op)
	})
	mux.HandleFunc("GET /v1/stacks/{name}/outputs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"outputs": []api.Output{{Name: "Url", Value: "http://web"}}})
	})
	mux.HandleFunc("GET /v1/stacks", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"stacks": []api.Stack{{Name: "web", Status: "UPDATE_COMPLETE", UpdatedAt: at}}})
	})
	mux.HandleFunc("POST /v1/validate", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, api.ValidateResponse{Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "needs a resource", File: "t.yaml", Line: 1, Column: 1, Path: "Resources"}}})
	})
	mux.HandleFunc("POST /v1/stacks/{name}/preview", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 400, api.Error{Code: api.CodeValidationFailed, Message: "the template or its parameters are invalid",
			Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "unknown parameter", Path: "Parameters.X"}}})
	})
	return mux
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, ctx context.Context, f *fakeServer, args ...string) result {
	t.Helper()
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	var stdout, stderr strings.Builder
	env := Env{Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string {
			return map[string]string{"CAIRN_SERVER": srv.URL, "CAIRN_TOKEN": "tok"}[k]
		},
		Start: func(context.Context, app.Config) (*app.App, error) {
			t.Error("started in-process with a server given")
			return nil, os.ErrInvalid
		}}
	code := Run(ctx, args, env)
	return result{code, stdout.String(), stderr.String()}
}

func writeTemplate(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, []byte("Resources: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunDeploy(t *testing.T) {
	tmpl := writeTemplate(t)
	old := api.Event{Seq: 1, Stack: "web", LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "CREATE_COMPLETE", Timestamp: at}
	events := "" +
		"15:04:05  web               AWS::CloudFormation::Stack  UPDATE_IN_PROGRESS    User Initiated\n" +
		"15:04:05  web               AWS::CloudFormation::Stack  UPDATE_COMPLETE\n"
	tests := []struct {
		name     string
		opStatus string
		args     []string
		want     result
	}{
		{"succeeded", "succeeded", []string{"--parameter", "Env=a=b"}, result{0, events + "Outputs:\n  Url = http://web\n", ""}},
		{"failed", "failed", nil, result{1, events, "error: deploy of web failed (UPDATE_ROLLBACK_COMPLETE): Thing failed\n"}},
		{"json", "succeeded", []string{"-o", "json"}, result{0, `{
  "operation": {
    "id": "op1",
    "stack": "web",
    "kind": "deploy",
    "status": "succeeded",
    "startedAt": "2025-01-02T15:04:05Z",
    "stackStatus": "UPDATE_COMPLETE"
  },
  "outputs": [
    {
      "name": "Url",
      "value": "http://web"
    }
  ]
}
`, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{t: t, opStatus: tt.opStatus, events: []api.Event{old}}
			got := run(t, context.Background(), f, append([]string{"deploy", "-f", tmpl, "--stack", "web"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(f.deploys) != 1 || f.deploys[0].Template != "Resources: {}\n" || f.deploys[0].TemplateName != tmpl {
				t.Errorf("deploy requests = %+v", f.deploys)
			}
		})
	}
}

func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeServer{t: t, block: true}
	go func() {
		for { // cancel once the deploy has been sent
			f.mu.Lock()
			n := len(f.deploys)
			f.mu.Unlock()
			if n > 0 {
				time.Sleep(50 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	got := run(t, ctx, f, "deploy", "-f", writeTemplate(t), "--stack", "web")
	want := result{130, "", "interrupted: the operation goes on (on the server)\n"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRunOthers(t *testing.T) {
	tmpl := writeTemplate(t)
	tests := []struct {
		name string
		args []string
		want result
	}{
		{"stacks", []string{"stacks"}, result{0, "NAME  STATUS           UPDATED              DESCRIPTION\nweb   UPDATE_COMPLETE  2025-01-02 15:04:05\n", ""}},
		{"stacks json", []string{"stacks", "--output=json"}, result{0, "[\n  {\n    \"name\": \"web\",\n    \"id\": \"\",\n    \"dialect\": \"\",\n    \"status\": \"UPDATE_COMPLETE\",\n    \"createdAt\": \"0001-01-01T00:00:00Z\",\n    \"updatedAt\": \"2025-01-02T15:04:05Z\"\n  }\n]\n", ""}},
		{"validate invalid", []string{"validate", "-f", tmpl}, result{1, "t.yaml:1:1: Resources: needs a resource\n", ""}},
		{"preview api error", []string{"preview", "-f", tmpl, "--stack", "web"}, result{1, "", "error: the template or its parameters are invalid\nParameters.X: unknown parameter\n"}},
		{"events not found", []string{"events", "--stack", "nope"}, result{1, "", "error: stack nope: not found\n"}},
		{"wrong token", []string{"events", "--stack", "web", "--token", "bad"}, result{1, "", "error: missing or wrong bearer token\n"}},
		{"bad parameter", []string{"validate", "-f", tmpl, "--parameter", "X"}, result{2, "", "error: --parameter \"X\": want KEY=VALUE\nRun 'cairn --help' for usage.\n"}},
		{"missing stack", []string{"deploy", "-f", tmpl}, result{2, "", "error: --stack is required\nRun 'cairn --help' for usage.\n"}},
		{"unknown flag", []string{"stacks", "--bogus"}, result{2, "", "error: unknown flag: --bogus\nRun 'cairn --help' for usage.\n"}},
		{"unknown command", []string{"bogus"}, result{2, "", "error: unknown command \"bogus\" for \"cairn\"\nRun 'cairn --help' for usage.\n"}},
		{"bad output", []string{"stacks", "-o", "yaml"}, result{2, "", "error: --output must be text or json, not \"yaml\"\nRun 'cairn --help' for usage.\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, context.Background(), &fakeServer{t: t}, tt.args...)
			got.stdout = strings.ReplaceAll(got.stdout, tmpl, "t.yaml")
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(result{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
