package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

func TestClient(t *testing.T) {
	type seen struct{ Method, URI, Auth, ContentType, Body string }
	ctx := context.Background()
	tests := map[string]struct {
		reason  string
		token   string // default "tok"; "-" for none
		status  int
		answer  string
		call    func(*Client) (any, error)
		want    any
		wantErr *api.Error
		wantReq seen
	}{
		"Validate": {
			reason: "Validate POSTs the request and decodes the answer.",
			status: 200, answer: `{"valid":false,"diagnostics":[{"severity":"error","summary":"bad","file":"t.yaml","line":1,"column":2}]}`,
			call: func(c *Client) (any, error) {
				return c.Validate(ctx, api.ValidateRequest{TemplateName: "t.yaml", Template: "x", Parameters: map[string]string{"A": "1"}})
			},
			want:    api.ValidateResponse{Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "bad", File: "t.yaml", Line: 1, Column: 2}}},
			wantReq: seen{"POST", "/v1/validate", "Bearer tok", "application/json", `{"templateName":"t.yaml","template":"x","parameters":{"A":"1"}}`},
		},
		"Preview": {
			reason: "Preview POSTs to the stack's preview route.",
			status: 200, answer: `{"stack":"s","changes":[{"logicalId":"A","type":"T","action":"Add"}]}`,
			call: func(c *Client) (any, error) {
				return c.Preview(ctx, "s", api.DeployRequest{TemplateName: "t.yaml", Template: "x"})
			},
			want:    api.PreviewResponse{Stack: "s", Changes: []api.Change{{LogicalID: "A", Type: "T", Action: "Add"}}},
			wantReq: seen{"POST", "/v1/stacks/s/preview", "Bearer tok", "application/json", `{"templateName":"t.yaml","template":"x"}`},
		},
		"Deploy": {
			reason: "Deploy takes 202 as success.",
			status: 202, answer: `{"id":"op1","status":"running"}`,
			call: func(c *Client) (any, error) {
				return c.Deploy(ctx, "s", api.DeployRequest{TemplateName: "t.yaml", Template: "x", DisableRollback: true, TimeoutSeconds: 60})
			},
			want: api.Operation{ID: "op1", Status: "running"},
			wantReq: seen{"POST", "/v1/stacks/s/deploy", "Bearer tok", "application/json",
				`{"templateName":"t.yaml","template":"x","disableRollback":true,"timeoutSeconds":60}`},
		},
		"Delete": {
			reason: "Delete sends its options as the body of DELETE.",
			status: 202, answer: `{"id":"op2","kind":"delete","status":"running"}`,
			call: func(c *Client) (any, error) {
				return c.Delete(ctx, "s", api.DeleteRequest{RetainResources: []string{"A"}})
			},
			want:    api.Operation{ID: "op2", Kind: "delete", Status: "running"},
			wantReq: seen{"DELETE", "/v1/stacks/s", "Bearer tok", "application/json", `{"retainResources":["A"]}`},
		},
		"OperationWait": {
			reason: "Operation passes wait as a duration.",
			status: 200, answer: `{"id":"op1","status":"succeeded","startedAt":"2025-01-02T15:04:05Z"}`,
			call:    func(c *Client) (any, error) { return c.Operation(ctx, "op1", 30*time.Second) },
			want:    api.Operation{ID: "op1", Status: "succeeded", StartedAt: time.Date(2025, 1, 2, 15, 4, 5, 0, time.UTC)},
			wantReq: seen{"GET", "/v1/operations/op1?wait=30s", "Bearer tok", "", ""},
		},
		"Stack": {
			reason: "Stack GETs the stack's description.",
			status: 200, answer: `{"name":"s","status":"CREATE_COMPLETE","outputs":[{"name":"O","value":1}]}`,
			call:    func(c *Client) (any, error) { return c.Stack(ctx, "s") },
			want:    api.Stack{Name: "s", Status: "CREATE_COMPLETE", Outputs: []api.Output{{Name: "O", Value: json.Number("1")}}},
			wantReq: seen{"GET", "/v1/stacks/s", "Bearer tok", "", ""},
		},
		"Stacks": {
			reason: "Stacks unwraps the list.",
			status: 200, answer: `{"stacks":[{"name":"a","status":"CREATE_COMPLETE"}]}`,
			call:    func(c *Client) (any, error) { return c.Stacks(ctx) },
			want:    []api.Stack{{Name: "a", Status: "CREATE_COMPLETE"}},
			wantReq: seen{"GET", "/v1/stacks", "Bearer tok", "", ""},
		},
		"Outputs": {
			reason: "Outputs unwraps the list.",
			status: 200, answer: `{"outputs":[{"name":"Url","value":"http://x"}]}`,
			call:    func(c *Client) (any, error) { return c.Outputs(ctx, "s") },
			want:    []api.Output{{Name: "Url", Value: "http://x"}},
			wantReq: seen{"GET", "/v1/stacks/s/outputs", "Bearer tok", "", ""},
		},
		"EventsAfterAndWait": {
			reason: "Events passes after and wait, and escapes the stack name.",
			status: 200, answer: `{"events":[{"seq":4,"logicalId":"X"}]}`,
			call:    func(c *Client) (any, error) { return c.Events(ctx, "my stack", 3, 20*time.Second) },
			want:    []api.Event{{Seq: 4, LogicalID: "X"}},
			wantReq: seen{"GET", "/v1/stacks/my%20stack/events?after=3&wait=20s", "Bearer tok", "", ""},
		},
		"EventsFromStart": {
			reason: "Events from the start with no wait sends no query.",
			token:  "-", status: 200, answer: `{"events":[]}`,
			call:    func(c *Client) (any, error) { return c.Events(ctx, "s", 0, 0) },
			want:    []api.Event{},
			wantReq: seen{"GET", "/v1/stacks/s/events", "", "", ""},
		},
		"APIError": {
			reason: "A JSON error body comes back as that *api.Error.",
			status: 400, answer: `{"code":"validation_failed","message":"invalid","diagnostics":[{"severity":"error","summary":"bad","path":"Resources"}]}`,
			call: func(c *Client) (any, error) { return c.Preview(ctx, "s", api.DeployRequest{}) },
			want: api.PreviewResponse{},
			wantErr: &api.Error{Code: api.CodeValidationFailed, Message: "invalid",
				Diagnostics: []api.Diagnostic{{Severity: "error", Summary: "bad", Path: "Resources"}}},
			wantReq: seen{"POST", "/v1/stacks/s/preview", "Bearer tok", "application/json", `{"templateName":"","template":""}`},
		},
		"BusyError": {
			reason: "409 with a code is decoded the same way.",
			status: 409, answer: `{"code":"stack_busy","message":"busy"}`,
			call:    func(c *Client) (any, error) { return c.Delete(ctx, "s", api.DeleteRequest{}) },
			want:    api.Operation{},
			wantErr: &api.Error{Code: api.CodeStackBusy, Message: "busy"},
			wantReq: seen{"DELETE", "/v1/stacks/s", "Bearer tok", "application/json", `{}`},
		},
		"NonJSONError": {
			reason: "A body that is not an api.Error gives code internal with the status.",
			status: 502, answer: "bad gateway\n",
			call:    func(c *Client) (any, error) { return c.Operation(ctx, "op1", 0) },
			want:    api.Operation{},
			wantErr: &api.Error{Code: api.CodeInternal, Message: "HTTP 502: bad gateway"},
			wantReq: seen{"GET", "/v1/operations/op1", "Bearer tok", "", ""},
		},
		"EmptyError": {
			reason: "An empty error body gives the status text.",
			status: 404, answer: "",
			call:    func(c *Client) (any, error) { return c.Stack(ctx, "s") },
			want:    api.Stack{},
			wantErr: &api.Error{Code: api.CodeInternal, Message: "HTTP 404: Not Found"},
			wantReq: seen{"GET", "/v1/stacks/s", "Bearer tok", "", ""},
		},
		"JSONWithoutCode": {
			reason: "JSON without a code is not an api.Error either.",
			status: 500, answer: `{"error":"boom"}`,
			call:    func(c *Client) (any, error) { return c.Stacks(ctx) },
			want:    []api.Stack(nil),
			wantErr: &api.Error{Code: api.CodeInternal, Message: `HTTP 500: {"error":"boom"}`},
			wantReq: seen{"GET", "/v1/stacks", "Bearer tok", "", ""},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got seen
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.answer)
			}))
			defer srv.Close()
			token := tc.token
			switch token {
			case "":
				token = "tok"
			case "-":
				token = ""
			}
			v, err := tc.call(New(srv.URL+"/", token, srv.Client()))
			if diff := cmp.Diff(tc.wantReq, got); diff != "" {
				t.Errorf("%s\nrequest: -want +got:\n%s", tc.reason, diff)
			}
			if tc.wantErr != nil {
				var ae *api.Error
				if !errors.As(err, &ae) {
					t.Fatalf("%s\nerr = %v, want *api.Error", tc.reason, err)
				}
				if diff := cmp.Diff(tc.wantErr, ae); diff != "" {
					t.Errorf("%s\nerror: -want +got:\n%s", tc.reason, diff)
				}
			} else if err != nil {
				t.Fatalf("%s\nerr = %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, v); diff != "" {
				t.Errorf("%s\nvalue: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestClientFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "not json")
	}))
	defer srv.Close()
	c := New(srv.URL, "", nil, WithRetry(Retry{})) // the server stays down: no retry

	_, err := c.Stacks(context.Background())
	var ae *api.Error
	if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "cannot decode the answer to GET /v1/stacks") {
		t.Errorf("a 200 that is not JSON: err = %v, want a decoding error that is no *api.Error", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Events(ctx, "s", 0, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a long poll cut by its context: err = %v, want context.DeadlineExceeded", err)
	}

	srv.Close()
	var ue *UnreachableError
	if _, err := c.Stack(context.Background(), "s"); !errors.As(err, &ue) || ue.Attempts != 1 || errors.As(err, &ae) {
		t.Errorf("an unreachable server: err = %v, want an *UnreachableError after one try", err)
	}
}
