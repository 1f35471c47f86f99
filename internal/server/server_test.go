package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/state"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// call is one HTTP request to the server under test.
type call struct {
	method, path, body string
	header             map[string]string
}

// answer is what came back, with the body decoded for comparison.
type answer struct {
	Status int
	Body   any
}

func do(t testing.TB, h http.Handler, c call) (answer, http.Header) {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(c.method, c.path, body)
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{Status: rec.Code, Body: decodeAny(t, rec.Body.Bytes())}, rec.Header()
}

// decodeAny decodes JSON into generic values; a body that is not JSON stays a string.
func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	return v
}

func js(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	return v
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// echoEngine answers every call with something derived from its arguments, so a test sees
// what the handler passed on.
func echoEngine() *fakeEngine {
	return &fakeEngine{
		ValidateFn: func(_ context.Context, req api.ValidateRequest) (api.ValidateResponse, error) {
			return api.ValidateResponse{Valid: true, Parameters: []api.Parameter{{Name: req.TemplateName, Type: "String", Value: req.Parameters["P"]}}}, nil
		},
		PreviewFn: func(_ context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
			return api.PreviewResponse{Stack: stack, Changes: []api.Change{{LogicalID: req.Template, Type: "Custom::X", Action: api.ActionAdd}}}, nil
		},
		DeployFn: func(_ context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
			return api.Operation{ID: "op-1", Stack: stack, Kind: "deploy", Status: "running", StatusReason: fmt.Sprint(req.DisableRollback, req.TimeoutSeconds), StartedAt: t0}, nil
		},
		DeleteFn: func(_ context.Context, stack string, req api.DeleteRequest) (api.Operation, error) {
			return api.Operation{ID: "op-2", Stack: stack, Kind: "delete", Status: "running", StatusReason: strings.Join(req.RetainResources, ","), StartedAt: t0}, nil
		},
		StacksFn: func(context.Context) ([]api.Stack, error) {
			return []api.Stack{{Name: "a", ID: "id-a", Dialect: "cloudformation", Status: "CREATE_COMPLETE", CreatedAt: t0, UpdatedAt: t0}}, nil
		},
		StackFn: func(_ context.Context, name string) (api.Stack, error) {
			return api.Stack{Name: name, ID: "id", Dialect: "ros", Status: "CREATE_COMPLETE", CreatedAt: t0, UpdatedAt: t0,
				Outputs: []api.Output{{Name: "Url", Value: "https://x"}}}, nil
		},
		OutputsFn: func(_ context.Context, _ string, showSecrets bool) ([]api.Output, error) {
			if showSecrets {
				return []api.Output{{Name: "Pass", Value: "s3cret"}}, nil
			}
			return []api.Output{{Name: "Url", Value: "https://x"}}, nil
		},
		EventsFn: func(_ context.Context, stack string, after int64, _ int) ([]api.Event, error) {
			return []api.Event{{Seq: after + 1, Stack: stack, LogicalID: stack, Type: "AWS::CloudFormation::Stack", Status: "CREATE_COMPLETE", Timestamp: t0}}, nil
		},
		OperationFn: func(_ context.Context, id string) (api.Operation, error) {
			return api.Operation{ID: id, Stack: "s", Kind: "deploy", Status: "succeeded", StartedAt: t0, EndedAt: t0}, nil
		},
		WaitFn: func(_ context.Context, id string) (api.Operation, error) {
			return api.Operation{ID: id, Stack: "s", Kind: "deploy", Status: "failed", StartedAt: t0, EndedAt: t0}, nil
		},
	}
}

// errEngine answers every call with err.
func errEngine(err error) *fakeEngine {
	return &fakeEngine{
		ValidateFn: func(context.Context, api.ValidateRequest) (api.ValidateResponse, error) {
			return api.ValidateResponse{}, err
		},
		PreviewFn: func(context.Context, string, api.DeployRequest) (api.PreviewResponse, error) {
			return api.PreviewResponse{}, err
		},
		DeployFn:    func(context.Context, string, api.DeployRequest) (api.Operation, error) { return api.Operation{}, err },
		DeleteFn:    func(context.Context, string, api.DeleteRequest) (api.Operation, error) { return api.Operation{}, err },
		StacksFn:    func(context.Context) ([]api.Stack, error) { return nil, err },
		StackFn:     func(context.Context, string) (api.Stack, error) { return api.Stack{}, err },
		EventsFn:    func(context.Context, string, int64, int) ([]api.Event, error) { return nil, err },
		OperationFn: func(context.Context, string) (api.Operation, error) { return api.Operation{}, err },
		WaitFn:      func(context.Context, string) (api.Operation, error) { return api.Operation{}, err },
	}
}

const opJSON = `{"id":"%s","stack":"%s","kind":"%s","status":"%s","statusReason":"%s","startedAt":"2026-01-02T03:04:05Z"}`

func TestRoutes(t *testing.T) {
	cases := map[string]struct {
		reason string
		req    call
		want   string // JSON, or the text of a non-JSON body
		status int
	}{
		"Validate": {
			reason: "POST /v1/validate passes the request to Engine.Validate and answers 200.",
			req:    call{method: "POST", path: "/v1/validate", body: `{"templateName":"t.yaml","template":"x","parameters":{"P":"v"}}`},
			status: 200, want: `{"valid":true,"parameters":[{"name":"t.yaml","type":"String","value":"v"}]}`,
		},
		"Preview": {
			reason: "POST /v1/stacks/{name}/preview passes the stack name and body to Engine.Preview.",
			req:    call{method: "POST", path: "/v1/stacks/demo/preview", body: `{"templateName":"t.yaml","template":"Bucket"}`},
			status: 200, want: `{"stack":"demo","changes":[{"logicalId":"Bucket","type":"Custom::X","action":"Add"}]}`,
		},
		"Deploy": {
			reason: "POST /v1/stacks/{name}/deploy answers 202 with the operation.",
			req:    call{method: "POST", path: "/v1/stacks/demo/deploy", body: `{"templateName":"t","template":"x","disableRollback":true,"timeoutSeconds":60}`},
			status: 202, want: fmt.Sprintf(opJSON, "op-1", "demo", "deploy", "running", "true 60"),
		},
		"DeleteWithBody": {
			reason: "DELETE /v1/stacks/{name} decodes the optional api.DeleteRequest.",
			req:    call{method: "DELETE", path: "/v1/stacks/demo", body: `{"retainResources":["A","B"]}`},
			status: 202, want: fmt.Sprintf(opJSON, "op-2", "demo", "delete", "running", "A,B"),
		},
		"DeleteWithoutBody": {
			reason: "DELETE /v1/stacks/{name} needs no body.",
			req:    call{method: "DELETE", path: "/v1/stacks/demo"},
			status: 202, want: `{"id":"op-2","stack":"demo","kind":"delete","status":"running","startedAt":"2026-01-02T03:04:05Z"}`,
		},
		"Stacks": {
			reason: "GET /v1/stacks wraps the list in {\"stacks\": ...}.",
			req:    call{method: "GET", path: "/v1/stacks"},
			status: 200, want: `{"stacks":[{"name":"a","id":"id-a","dialect":"cloudformation","status":"CREATE_COMPLETE","createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z"}]}`,
		},
		"Stack": {
			reason: "GET /v1/stacks/{name} answers the api.Stack.",
			req:    call{method: "GET", path: "/v1/stacks/demo"},
			status: 200, want: `{"name":"demo","id":"id","dialect":"ros","status":"CREATE_COMPLETE","createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"Outputs": {
			reason: "GET /v1/stacks/{name}/outputs answers only the outputs.",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs"},
			status: 200, want: `{"outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"OutputsShowSecrets": {
			reason: "GET /v1/stacks/{name}/outputs?show-secrets=true asks for the secrets' values.",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs?show-secrets=true"},
			status: 200, want: `{"outputs":[{"name":"Pass","value":"s3cret"}]}`,
		},
		"OutputsShowSecretsBad": {
			reason: "show-secrets takes true or false.",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs?show-secrets=yes"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter show-secrets=\"yes\": want true or false"}`,
		},
		"Events": {
			reason: "GET /v1/stacks/{name}/events?after=N passes N on and answers at once when there are events.",
			req:    call{method: "GET", path: "/v1/stacks/demo/events?after=41&wait=30s"},
			status: 200, want: `{"events":[{"seq":42,"stack":"demo","logicalId":"demo","type":"AWS::CloudFormation::Stack","status":"CREATE_COMPLETE","timestamp":"2026-01-02T03:04:05Z"}]}`,
		},
		"OperationNoWait": {
			reason: "GET /v1/operations/{id} without wait reads the operation.",
			req:    call{method: "GET", path: "/v1/operations/op-9"},
			status: 200, want: `{"id":"op-9","stack":"s","kind":"deploy","status":"succeeded","startedAt":"2026-01-02T03:04:05Z","endedAt":"2026-01-02T03:04:05Z"}`,
		},
		"OperationWait": {
			reason: "GET /v1/operations/{id}?wait=... goes through Engine.Wait.",
			req:    call{method: "GET", path: "/v1/operations/op-9?wait=10"},
			status: 200, want: `{"id":"op-9","stack":"s","kind":"deploy","status":"failed","startedAt":"2026-01-02T03:04:05Z","endedAt":"2026-01-02T03:04:05Z"}`,
		},
		"Healthz": {
			reason: "GET /healthz answers ok.",
			req:    call{method: "GET", path: "/healthz"},
			status: 200, want: `ok`,
		},
		"UnknownRoute": {
			reason: "An unknown path answers a JSON 404.",
			req:    call{method: "GET", path: "/v2/nothing"},
			status: 404, want: `{"code":"not_found","message":"no route for GET /v2/nothing"}`,
		},
		"WrongMethod": {
			reason: "A known path with another method answers 405 naming the allowed ones.",
			req:    call{method: "PATCH", path: "/v1/stacks/demo"},
			status: 405, want: `{"code":"invalid_request","message":"method PATCH is not allowed on /v1/stacks/demo; allowed: DELETE, GET, HEAD"}`,
		},
		"ResponsesWithoutHandler": {
			reason: "Without a Responses handler the response route does not exist.",
			req:    call{method: "PUT", path: "/v1/responses/r1?signature=s"},
			status: 404, want: `{"code":"not_found","message":"no route for PUT /v1/responses/r1"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := New(Config{Engine: echoEngine()}).Handler()
			got, _ := do(t, h, tc.req)
			want := answer{Status: tc.status, Body: decodeAny(t, []byte(tc.want))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n%s %s: -want +got:\n%s", tc.reason, tc.req.method, tc.req.path, diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	diags := diag.Diagnostics{
		diag.Errorf(diag.Range{Filename: "stack.yaml", Line: 3, Column: 7}, "Resources.Db.Properties.Size", "Size must be a number"),
		diag.Warnf(diag.Range{}, "", "unused parameter"),
	}
	busy := &state.BusyError{Stack: "demo", Operation: "op-7", Kind: "deploy", Since: t0}
	cases := map[string]struct {
		reason string
		err    error
		status int
		want   string
	}{
		"Validation": {
			reason: "A *engine.ValidationError is a 400 with the diagnostics in wire form.",
			err:    fmt.Errorf("cannot deploy: %w", &engine.ValidationError{Diagnostics: diags}),
			status: 400,
			want: `{"code":"validation_failed","message":"the template or its parameters are invalid","diagnostics":[
				{"severity":"error","summary":"Size must be a number","file":"stack.yaml","line":3,"column":7,"path":"Resources.Db.Properties.Size"},
				{"severity":"warning","summary":"unused parameter"}]}`,
		},
		"NotFound": {
			reason: "A wrapped state.ErrNotFound is a 404.",
			err:    fmt.Errorf("cannot find stack demo: %w", state.ErrNotFound),
			status: 404, want: `{"code":"not_found","message":"cannot find stack demo: not found"}`,
		},
		"Busy": {
			reason: "A *state.BusyError is a 409 naming the holder.",
			err:    fmt.Errorf("cannot start: %w", busy),
			status: 409, want: `{"code":"stack_busy","message":"stack demo is busy with operation op-7 (deploy) since 2026-01-02T03:04:05Z"}`,
		},
		"Internal": {
			reason: "Anything else is a 500 whose detail is not shown.",
			err:    fmt.Errorf("cannot open db: secret path /var/x"),
			status: 500, want: `{"code":"internal","message":"internal error; the server log has the detail"}`,
		},
	}
	routes := []call{
		{method: "POST", path: "/v1/validate", body: `{}`},
		{method: "POST", path: "/v1/stacks/demo/preview", body: `{}`},
		{method: "POST", path: "/v1/stacks/demo/deploy", body: `{}`},
		{method: "DELETE", path: "/v1/stacks/demo"},
		{method: "GET", path: "/v1/stacks"},
		{method: "GET", path: "/v1/stacks/demo"},
		{method: "GET", path: "/v1/stacks/demo/outputs"},
		{method: "GET", path: "/v1/stacks/demo/events"},
		{method: "GET", path: "/v1/operations/op-1"},
		{method: "GET", path: "/v1/operations/op-1?wait=1s"},
	}
	for name, tc := range cases {
		for _, rt := range routes {
			t.Run(name+rt.method+rt.path, func(t *testing.T) {
				var logs bytes.Buffer
				h := New(Config{Engine: errEngine(tc.err), Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Handler()
				got, hdr := do(t, h, rt)
				want := answer{Status: tc.status, Body: js(t, tc.want)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s\n%s %s: -want +got:\n%s", tc.reason, rt.method, rt.path, diff)
				}
				if ct := hdr.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type = %q, want application/json", ct)
				}
				if tc.status == 500 && !strings.Contains(logs.String(), "secret path") {
					t.Errorf("%s\nthe log lacks the detail of the internal error:\n%s", tc.reason, logs.String())
				}
			})
		}
	}
}

func TestBadRequests(t *testing.T) {
	cases := map[string]struct {
		reason string
		req    call
		status int
		want   string
	}{
		"MalformedJSON": {
			reason: "A body that is not JSON is invalid_request.",
			req:    call{method: "POST", path: "/v1/stacks/demo/deploy", body: `{"template":`},
			status: 400, want: `{"code":"invalid_request","message":"cannot decode request body: unexpected EOF"}`,
		},
		"UnknownField": {
			reason: "Unknown fields are refused, so a typo is not silently ignored.",
			req:    call{method: "POST", path: "/v1/validate", body: `{"templat":"x"}`},
			status: 400, want: `{"code":"invalid_request","message":"cannot decode request body: json: unknown field \"templat\""}`,
		},
		"TrailingData": {
			reason: "Data after the object is refused.",
			req:    call{method: "POST", path: "/v1/validate", body: `{} {}`},
			status: 400, want: `{"code":"invalid_request","message":"cannot decode request body: unexpected data after the JSON object"}`,
		},
		"EmptyBody": {
			reason: "Deploy needs a body.",
			req:    call{method: "POST", path: "/v1/stacks/demo/deploy"},
			status: 400, want: `{"code":"invalid_request","message":"request body is empty; expected a JSON object"}`,
		},
		"WrongType": {
			reason: "A field of the wrong type is invalid_request.",
			req:    call{method: "DELETE", path: "/v1/stacks/demo", body: `{"timeoutSeconds":"ten"}`},
			status: 400, want: `{"code":"invalid_request","message":"cannot decode request body: json: cannot unmarshal string into Go struct field DeleteRequest.timeoutSeconds of type int"}`,
		},
		"TooLarge": {
			reason: "Bodies over MaxBodyBytes are refused with 413.",
			req:    call{method: "POST", path: "/v1/validate", body: `{"template":"` + strings.Repeat("x", MaxBodyBytes) + `"}`},
			status: 413, want: `{"code":"invalid_request","message":"request body is larger than the limit of 10 MiB"}`,
		},
		"BadAfter": {
			reason: "after must be a number.",
			req:    call{method: "GET", path: "/v1/stacks/demo/events?after=x"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter after=\"x\": want a sequence number >= 0"}`,
		},
		"NegativeAfter": {
			reason: "after must not be negative.",
			req:    call{method: "GET", path: "/v1/stacks/demo/events?after=-1"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter after=\"-1\": want a sequence number >= 0"}`,
		},
		"BadWait": {
			reason: "wait must be a duration.",
			req:    call{method: "GET", path: "/v1/operations/op-1?wait=soon"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter wait=\"soon\": want a duration such as 30s"}`,
		},
		"NegativeWait": {
			reason: "wait must not be negative.",
			req:    call{method: "GET", path: "/v1/operations/op-1?wait=-1s"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter wait=\"-1s\": want a duration >= 0"}`,
		},
		"UnknownQuery": {
			reason: "Unknown query parameters are refused.",
			req:    call{method: "GET", path: "/v1/operations/op-1?after=3"},
			status: 400, want: `{"code":"invalid_request","message":"unknown query parameter \"after\""}`,
		},
		"RepeatedQuery": {
			reason: "A repeated query parameter is refused.",
			req:    call{method: "GET", path: "/v1/stacks/demo/events?after=1&after=2"},
			status: 400, want: `{"code":"invalid_request","message":"query parameter \"after\" is given 2 times"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := New(Config{Engine: echoEngine()}).Handler()
			got, _ := do(t, h, tc.req)
			want := answer{Status: tc.status, Body: js(t, tc.want)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n%s %s: -want +got:\n%s", tc.reason, tc.req.method, tc.req.path, diff)
			}
		})
	}
}
