package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

func init() { timeZone = time.UTC }

var at = time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)

// fakeServer answers the API's routes with canned answers for one stack, "web". A deploy or
// a delete emits two stack events and ends as opStatus, leaving the stack in stackStatus.
// Stack "bad" fails validation; templates containing "bad" are invalid.
type fakeServer struct {
	opStatus    string // final status of operations; default "succeeded"
	stackStatus string // stack status after them; default "UPDATE_COMPLETE"
	block       bool   // operations never end, and long polls wait for the request to end

	mu       sync.Mutex
	events   []api.Event
	op       api.Operation
	deploys  []api.DeployRequest
	deletes  []api.DeleteRequest
	previews []api.DeployRequest
}

func (f *fakeServer) emit(status string, reason string) {
	f.events = append(f.events, api.Event{Seq: int64(len(f.events) + 1), Stack: "web", LogicalID: "web",
		Type: "AWS::CloudFormation::Stack", Status: status, Reason: reason, Timestamp: at})
}

func (f *fakeServer) handler() http.Handler {
	if f.opStatus == "" {
		f.opStatus = "succeeded"
	}
	if f.stackStatus == "" {
		f.stackStatus = "UPDATE_COMPLETE"
	}
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter, name string) {
		reply(w, 404, api.Error{Code: api.CodeNotFound, Message: "stack " + name + ": not found"})
	}
	invalid := api.Error{Code: api.CodeValidationFailed, Message: "the template or its parameters are invalid",
		Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "unknown parameter", File: "t.yaml", Line: 2, Column: 3, Path: "Parameters.X"}}}
	// begin starts an operation of kind; the caller holds f.mu.
	begin := func(w http.ResponseWriter, kind, verb string) {
		f.op = api.Operation{ID: "op" + strconv.Itoa(len(f.deploys)+len(f.deletes)), Stack: "web", Kind: kind, Status: "running", StartedAt: at}
		if !f.block {
			f.emit(verb+"_IN_PROGRESS", "User Initiated")
			f.emit(f.stackStatus, "")
			f.op.Status, f.op.StackStatus = f.opStatus, f.stackStatus
			if f.opStatus == "failed" {
				f.op.StatusReason = "Thing failed"
			}
		}
		op := f.op
		op.Status, op.StackStatus, op.StatusReason = "running", "", ""
		reply(w, 202, op)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/stacks/{name}/events", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "web" {
			notFound(w, r.PathValue("name"))
			return
		}
		after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
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
		if r.PathValue("name") == "bad" {
			reply(w, 400, invalid)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deploys = append(f.deploys, req)
		begin(w, "deploy", "UPDATE")
	})
	mux.HandleFunc("DELETE /v1/stacks/{name}", func(w http.ResponseWriter, r *http.Request) {
		var req api.DeleteRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.deletes = append(f.deletes, req)
		begin(w, "delete", "DELETE")
	})
	mux.HandleFunc("GET /v1/operations/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.PathValue("id") != f.op.ID {
			reply(w, 404, api.Error{Code: api.CodeNotFound, Message: "no operation " + r.PathValue("id")})
			return
		}
		reply(w, 200, f.op)
	})
	mux.HandleFunc("GET /v1/stacks/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "web" {
			notFound(w, r.PathValue("name"))
			return
		}
		reply(w, 200, api.Stack{Name: "web", ID: "arn:web", Dialect: "cloudformation", Status: f.stackStatus, CreatedAt: at, UpdatedAt: at,
			Parameters: []api.Parameter{{Name: "Env", Type: "String", Value: "prod"}},
			Resources:  []api.Resource{{LogicalID: "Site", Type: "Custom::Site", Status: "CREATE_COMPLETE", PhysicalID: "site-1", UpdatedAt: at}},
			Outputs:    []api.Output{{Name: "Url", Value: "http://web"}}})
	})
	mux.HandleFunc("GET /v1/stacks/{name}/outputs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"outputs": []api.Output{{Name: "Url", Value: "http://web"}, {Name: "Ports", Value: []any{80.0, 443.0}}}})
	})
	mux.HandleFunc("GET /v1/stacks", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"stacks": []api.Stack{{Name: "web", Status: "UPDATE_COMPLETE", UpdatedAt: at}}})
	})
	mux.HandleFunc("POST /v1/validate", func(w http.ResponseWriter, r *http.Request) {
		var req api.ValidateRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if strings.Contains(req.Template, "bad") {
			reply(w, 200, api.ValidateResponse{Diagnostics: []api.Diagnostic{
				{Severity: "error", Summary: "needs a resource", File: req.TemplateName, Line: 1, Column: 1, Path: "Resources"},
				{Severity: "warning", Summary: "unused parameter", File: req.TemplateName, Line: 3, Column: 3, Path: "Parameters.P"}}})
			return
		}
		reply(w, 200, api.ValidateResponse{Valid: true, Parameters: []api.Parameter{{Name: "Env", Type: "String", Value: req.Parameters["Env"]}}})
	})
	mux.HandleFunc("POST /v1/stacks/{name}/preview", func(w http.ResponseWriter, r *http.Request) {
		var req api.DeployRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		if r.PathValue("name") == "bad" {
			reply(w, 400, invalid)
			return
		}
		f.mu.Lock()
		f.previews = append(f.previews, req)
		f.mu.Unlock()
		reply(w, 200, api.PreviewResponse{Stack: "web", Changes: []api.Change{
			{LogicalID: "Site", Type: "Custom::Site", Action: api.ActionModify, Replacement: api.ReplaceMaybe,
				Details: []api.PropertyChange{{Name: "Name", Before: "a", After: api.UnknownMarker}}}}})
	})
	// Every route checks the token, as the real server does.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			reply(w, 401, api.Error{Code: api.CodeUnauthorized, Message: "missing or wrong bearer token"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

type result struct {
	Code           int
	Stdout, Stderr string
}

// run runs the CLI against f with CAIRN_SERVER and CAIRN_TOKEN set, stdin holding stdin.
func run(t *testing.T, ctx context.Context, f *fakeServer, stdin string, args ...string) result {
	t.Helper()
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	var stdout, stderr strings.Builder
	env := Env{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
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

func writeTemplate(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	updateEvents = "" +
		"15:04:05  web               AWS::CloudFormation::Stack  UPDATE_IN_PROGRESS           User Initiated\n" +
		"15:04:05  web               AWS::CloudFormation::Stack  UPDATE_COMPLETE\n"
	opJSON = `{
  "operation": {
    "id": "op1",
    "stack": "web",
    "kind": "%s",
    "status": "succeeded",
    "startedAt": "2025-01-02T15:04:05Z",
    "stackStatus": "%s"
  }%s
}
`
)

func TestRunDeploy(t *testing.T) {
	tmpl := writeTemplate(t, "Resources: {}\n")
	old := api.Event{Seq: 1, Stack: "web", LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "CREATE_COMPLETE", Timestamp: at}
	rolledBack := strings.ReplaceAll(updateEvents, "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE")
	tests := map[string]struct {
		reason      string
		f           *fakeServer
		args        []string
		want        result
		wantDeploys []api.DeployRequest
	}{
		"Succeeded": {
			reason: "Events after the ones before the deploy are printed, then the outputs.",
			args:   []string{"--parameter", "Env=a=b", "-p", "N=1", "--disable-rollback", "--timeout", "90s"},
			want:   result{0, updateEvents + "Outputs:\n  Url = http://web\n", ""},
			wantDeploys: []api.DeployRequest{{TemplateName: tmpl, Template: "Resources: {}\n",
				Parameters: map[string]string{"Env": "a=b", "N": "1"}, DisableRollback: true, TimeoutSeconds: 90}},
		},
		"OperationFailed": {
			reason: "A failed operation exits 1 with its reason, without outputs.",
			f:      &fakeServer{opStatus: "failed", stackStatus: "UPDATE_ROLLBACK_COMPLETE"},
			want:   result{1, rolledBack, "error: deploy of web failed (UPDATE_ROLLBACK_COMPLETE): Thing failed\n"},
		},
		"RolledBack": {
			reason: "A stack that rolled back fails the command even if the operation says succeeded.",
			f:      &fakeServer{stackStatus: "UPDATE_ROLLBACK_COMPLETE"},
			want:   result{1, rolledBack, "error: deploy of web ended (UPDATE_ROLLBACK_COMPLETE)\n"},
		},
		"JSON": {
			reason: "--output json prints no events, and the operation with the outputs as one object.",
			args:   []string{"-o", "json"},
			want: result{0, sprintf(opJSON, "deploy", "UPDATE_COMPLETE",
				",\n  \"outputs\": [\n    {\n      \"name\": \"Url\",\n      \"value\": \"http://web\"\n    }\n  ]"), ""},
		},
		"ValidationFailed": {
			reason: "Diagnostics of a refused deploy are printed one a line, file:line:col: Path: summary.",
			args:   []string{"--stack", "bad"},
			want: result{1, "", "error: the template or its parameters are invalid\n" +
				"t.yaml:2:3: Parameters.X: unknown parameter\n"},
		},
		"FromStdin": {
			reason:      "-f - reads the template from stdin.",
			args:        []string{"-f", "-"},
			want:        result{0, updateEvents + "Outputs:\n  Url = http://web\n", ""},
			wantDeploys: []api.DeployRequest{{TemplateName: "<stdin>", Template: "Resources: {Stdin: x}\n"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := tc.f
			if f == nil {
				f = &fakeServer{}
			}
			f.events = []api.Event{old}
			args := append([]string{"deploy", "-f", tmpl, "--stack", "web"}, tc.args...)
			got := run(t, context.Background(), f, "Resources: {Stdin: x}\n", args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ncairn %s: -want +got:\n%s", tc.reason, strings.Join(args, " "), diff)
			}
			if tc.wantDeploys != nil {
				if diff := cmp.Diff(tc.wantDeploys, f.deploys); diff != "" {
					t.Errorf("%s\ndeploy requests: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func sprintf(format string, args ...any) string {
	s := format
	for _, a := range args {
		s = strings.Replace(s, "%s", a.(string), 1)
	}
	return s
}

func TestRunDelete(t *testing.T) {
	events := strings.ReplaceAll(updateEvents, "UPDATE", "DELETE")
	tests := map[string]struct {
		reason string
		f      *fakeServer
		args   []string
		want   result
	}{
		"Text": {reason: "Delete prints the events and nothing else.",
			f: &fakeServer{stackStatus: "DELETE_COMPLETE"}, want: result{0, events, ""}},
		"JSON": {reason: "With JSON, only the final operation.", f: &fakeServer{stackStatus: "DELETE_COMPLETE"}, args: []string{"-o", "json"},
			want: result{0, sprintf(opJSON, "delete", "DELETE_COMPLETE", ""), ""}},
		"Failed": {reason: "DELETE_FAILED exits 1.", f: &fakeServer{stackStatus: "DELETE_FAILED"},
			want: result{1, strings.ReplaceAll(events, "DELETE_COMPLETE", "DELETE_FAILED"), "error: delete of web ended (DELETE_FAILED)\n"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := tc.f
			args := append([]string{"delete", "--stack", "web", "--retain", "A", "--retain", "B", "--timeout", "1m"}, tc.args...)
			got := run(t, context.Background(), f, "", args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff([]api.DeleteRequest{{RetainResources: []string{"A", "B"}, TimeoutSeconds: 60}}, f.deletes); diff != "" {
				t.Errorf("delete requests: -want +got:\n%s", diff)
			}
		})
	}
}

// cancelWhen cancels the returned context shortly after cond holds.
func cancelWhen(t *testing.T, f *fakeServer, cond func() bool) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			f.mu.Lock()
			ok := cond()
			f.mu.Unlock()
			if ok {
				time.Sleep(50 * time.Millisecond) // let the CLI reach its long poll
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return ctx
}

func TestRunInterrupted(t *testing.T) {
	f := &fakeServer{block: true}
	ctx := cancelWhen(t, f, func() bool { return len(f.deploys) > 0 })
	got := run(t, ctx, f, "", "deploy", "-f", writeTemplate(t, "Resources: {}\n"), "--stack", "web")
	want := result{130, "", "interrupted: the operation goes on (on the server)\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Ctrl-C while following a deploy: -want +got:\n%s", diff)
	}

	f = &fakeServer{block: true, events: []api.Event{{Seq: 1, Stack: "web", LogicalID: "web", Type: "AWS::CloudFormation::Stack", Status: "CREATE_COMPLETE", Timestamp: at}}}
	ctx = cancelWhen(t, f, func() bool { return true })
	got = run(t, ctx, f, "", "events", "--stack", "web", "--follow", "-o", "json")
	want = result{130, `{"seq":1,"stack":"web","logicalId":"web","type":"AWS::CloudFormation::Stack","status":"CREATE_COMPLETE","timestamp":"2025-01-02T15:04:05Z"}` + "\n", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Ctrl-C while following events: -want +got:\n%s", diff)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = run(t, ctx, &fakeServer{}, "", "stacks")
	want = result{130, "", "interrupted\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Ctrl-C before any answer: -want +got:\n%s", diff)
	}
}

func TestRunOthers(t *testing.T) {
	tmpl := writeTemplate(t, "Resources: {}\n")
	bad := writeTemplate(t, "bad\n")
	tests := map[string]struct {
		args []string
		want result
	}{
		"Stacks":     {[]string{"stacks"}, result{0, "NAME  STATUS           UPDATED              DESCRIPTION\nweb   UPDATE_COMPLETE  2025-01-02 15:04:05\n", ""}},
		"StacksJSON": {[]string{"stacks", "--output=json"}, result{0, "[\n  {\n    \"name\": \"web\",\n    \"id\": \"\",\n    \"dialect\": \"\",\n    \"status\": \"UPDATE_COMPLETE\",\n    \"createdAt\": \"0001-01-01T00:00:00Z\",\n    \"updatedAt\": \"2025-01-02T15:04:05Z\"\n  }\n]\n", ""}},
		"Describe": {[]string{"describe", "--stack", "web"}, result{0, "" +
			"Name:    web\nID:      arn:web\nDialect: cloudformation\nStatus:  UPDATE_COMPLETE\n" +
			"Created: 2025-01-02 15:04:05\nUpdated: 2025-01-02 15:04:05\n" +
			"Parameters:\n  Env  String  = prod\n" +
			"Resources:\n  LOGICAL ID  TYPE          STATUS           PHYSICAL ID  REASON\n  Site        Custom::Site  CREATE_COMPLETE  site-1\n" +
			"Outputs:\n  Url = http://web\n", ""}},
		"DescribeNotFound": {[]string{"describe", "--stack", "nope"}, result{1, "", "error: stack nope: not found\n"}},
		"Outputs":          {[]string{"outputs", "--stack", "web"}, result{0, "Url = http://web\nPorts = [80,443]\n", ""}},
		"OutputsJSON": {[]string{"outputs", "--stack", "web", "-o", "json"}, result{0,
			"[\n  {\n    \"name\": \"Url\",\n    \"value\": \"http://web\"\n  },\n  {\n    \"name\": \"Ports\",\n    \"value\": [\n      80,\n      443\n    ]\n  }\n]\n", ""}},
		"EventsEmpty":     {[]string{"events", "--stack", "web", "-o", "json"}, result{0, "[]\n", ""}},
		"Validate":        {[]string{"validate", "-f", tmpl, "-p", "Env=prod"}, result{0, "template is valid\nParameters:\n  Env  String  = prod\n", ""}},
		"ValidateInvalid": {[]string{"validate", "-f", bad}, result{1, "t.yaml:1:1: Resources: needs a resource\nt.yaml:3:3: Parameters.P: warning: unused parameter\n", ""}},
		"ValidateJSON": {[]string{"validate", "-f", tmpl, "-o", "json"}, result{0,
			"{\n  \"valid\": true,\n  \"parameters\": [\n    {\n      \"name\": \"Env\",\n      \"type\": \"String\"\n    }\n  ]\n}\n", ""}},
		"Preview": {[]string{"preview", "-f", tmpl, "--stack", "web"}, result{0, "" +
			"~ Modify  Site  Custom::Site  (replacement: Conditional)\n" +
			"      Name: \"a\" → (known after apply)\n\n0 to add, 1 to modify, 0 to remove.\n", ""}},
		"PreviewJSON": {[]string{"preview", "-f", tmpl, "--stack", "web", "-o", "json"}, result{0, `{
  "stack": "web",
  "changes": [
    {
      "logicalId": "Site",
      "type": "Custom::Site",
      "action": "Modify",
      "replacement": "Conditional",
      "details": [
        {
          "name": "Name",
          "before": "a",
          "after": "(known after apply)"
        }
      ]
    }
  ]
}
`, ""}},
		"PreviewInvalid":  {[]string{"preview", "-f", tmpl, "--stack", "bad"}, result{1, "", "error: the template or its parameters are invalid\nt.yaml:2:3: Parameters.X: unknown parameter\n"}},
		"EventsNotFound":  {[]string{"events", "--stack", "nope"}, result{1, "", "error: stack nope: not found\n"}},
		"WrongToken":      {[]string{"events", "--stack", "web", "--token", "bad"}, result{1, "", "error: missing or wrong bearer token\n"}},
		"MissingFile":     {[]string{"validate", "-f", "/nonexistent/t.yaml"}, result{1, "", "error: cannot read the template: open /nonexistent/t.yaml: no such file or directory\n"}},
		"BadParameter":    {[]string{"validate", "-f", tmpl, "--parameter", "X"}, result{2, "", "error: --parameter \"X\": want KEY=VALUE\nRun 'cairn --help' for usage.\n"}},
		"MissingStack":    {[]string{"deploy", "-f", tmpl}, result{2, "", "error: --stack is required\nRun 'cairn --help' for usage.\n"}},
		"MissingFileFlag": {[]string{"preview", "--stack", "web"}, result{2, "", "error: -f FILE is required\nRun 'cairn --help' for usage.\n"}},
		"NegativeTimeout": {[]string{"delete", "--stack", "web", "--timeout", "-1s"}, result{2, "", "error: --timeout must not be negative, got -1s\nRun 'cairn --help' for usage.\n"}},
		"BadDuration":     {[]string{"delete", "--stack", "web", "--timeout", "soon"}, result{2, "", "error: invalid argument \"soon\" for \"--timeout\" flag: time: invalid duration \"soon\"\nRun 'cairn --help' for usage.\n"}},
		"UnexpectedArg":   {[]string{"stacks", "extra"}, result{2, "", "error: unexpected argument \"extra\"\nRun 'cairn --help' for usage.\n"}},
		"UnknownFlag":     {[]string{"stacks", "--bogus"}, result{2, "", "error: unknown flag: --bogus\nRun 'cairn --help' for usage.\n"}},
		"UnknownCommand":  {[]string{"bogus"}, result{2, "", "error: unknown command \"bogus\" for \"cairn\"\nRun 'cairn --help' for usage.\n"}},
		"BadOutput":       {[]string{"stacks", "-o", "yaml"}, result{2, "", "error: --output must be text or json, not \"yaml\"\nRun 'cairn --help' for usage.\n"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := run(t, context.Background(), &fakeServer{}, "", tc.args...)
			got.Stdout = strings.NewReplacer(tmpl, "t.yaml", bad, "t.yaml").Replace(got.Stdout)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cairn %s: -want +got:\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}

func TestRunInProcessStart(t *testing.T) {
	var got app.Config
	env := Env{Stderr: new(strings.Builder), Getenv: func(k string) string {
		return map[string]string{"CAIRN_DIR": "/state", "CAIRN_PUBLIC_URL": "http://me:8080", "CAIRN_TLS_LISTEN": ":8443",
			"CAIRN_TLS_CERT": "c.pem", "CAIRN_TLS_KEY": "k.pem", "CAIRN_TLS_PUBLIC_URL": "https://me:8443",
			"CAIRN_REGION": "eu-west-1", "CAIRN_ACCOUNT_ID": "123", "CAIRN_LISTEN": "0.0.0.0:80", "CAIRN_RESPONSE_NOTICE": "90s"}[k]
	}, Start: func(_ context.Context, cfg app.Config) (*app.App, error) {
		got = cfg
		return nil, os.ErrPermission
	}}
	code := Run(context.Background(), []string{"stacks"}, env)
	want := app.Config{Dir: "/state", Listen: "127.0.0.1:0", PublicURL: "http://me:8080", TLSListen: ":8443",
		TLSCert: "c.pem", TLSKey: "k.pem", TLSPublicURL: "https://me:8443", Region: "eu-west-1", AccountID: "123", InProcess: true,
		RememberListen: true, ResponseNotice: 90 * time.Second}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Logger" }, cmp.Ignore())); diff != "" {
		t.Errorf("in-process config: -want +got:\n%s", diff)
	}
	if got.Logger == nil || got.Logger.Enabled(context.Background(), slog.LevelInfo) {
		t.Errorf("in-process logger must log warnings only without --verbose")
	}
	if diff := cmp.Diff("error: cannot start cairn in-process: permission denied\n", env.Stderr.(*strings.Builder).String()); code != 1 || diff != "" {
		t.Errorf("exit %d; stderr -want +got:\n%s", code, diff)
	}

	env.Start = nil
	env.Stderr = new(strings.Builder)
	if code := Run(context.Background(), []string{"stacks"}, env); code != 1 {
		t.Errorf("without Start: exit %d, stderr %s", code, env.Stderr)
	}
}
