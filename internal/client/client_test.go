package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

func TestClient(t *testing.T) {
	type seen struct{ method, uri, auth, body string }
	tests := []struct {
		name    string
		status  int
		answer  string
		call    func(*Client) (any, error)
		want    any
		wantErr *api.Error
		wantReq seen
	}{
		{
			name: "stacks", status: 200, answer: `{"stacks":[{"name":"a","status":"CREATE_COMPLETE"}]}`,
			call:    func(c *Client) (any, error) { return c.Stacks(context.Background()) },
			want:    []api.Stack{{Name: "a", Status: "CREATE_COMPLETE"}},
			wantReq: seen{"GET", "/v1/stacks", "Bearer tok", ""},
		},
		{
			name: "events with after and wait", status: 200, answer: `{"events":[{"seq":4,"logicalId":"X"}]}`,
			call:    func(c *Client) (any, error) { return c.Events(context.Background(), "my stack", 3, 20*time.Second) },
			want:    []api.Event{{Seq: 4, LogicalID: "X"}},
			wantReq: seen{"GET", "/v1/stacks/my%20stack/events?after=3&wait=20s", "Bearer tok", ""},
		},
		{
			name: "deploy", status: 202, answer: `{"id":"op1","status":"running"}`,
			call: func(c *Client) (any, error) {
				return c.Deploy(context.Background(), "s", api.DeployRequest{TemplateName: "t.yaml", Template: "x"})
			},
			want:    api.Operation{ID: "op1", Status: "running"},
			wantReq: seen{"POST", "/v1/stacks/s/deploy", "Bearer tok", `{"templateName":"t.yaml","template":"x"}`},
		},
		{
			name: "api error", status: 409, answer: `{"code":"stack_busy","message":"busy"}`,
			call:    func(c *Client) (any, error) { return c.Delete(context.Background(), "s", api.DeleteRequest{}) },
			want:    api.Operation{},
			wantErr: &api.Error{Code: "stack_busy", Message: "busy"},
			wantReq: seen{"DELETE", "/v1/stacks/s", "Bearer tok", `{}`},
		},
		{
			name: "non-JSON error", status: 502, answer: "bad gateway",
			call:    func(c *Client) (any, error) { return c.Operation(context.Background(), "op1", 0) },
			want:    api.Operation{},
			wantErr: &api.Error{Code: api.CodeInternal, Message: "HTTP 502: bad gateway"},
			wantReq: seen{"GET", "/v1/operations/op1", "Bearer tok", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got = seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), string(b)}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.answer)
			}))
			defer srv.Close()
			v, err := tt.call(New(srv.URL+"/", "tok", srv.Client()))
			if diff := cmp.Diff(tt.wantReq, got, cmp.AllowUnexported(seen{})); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if tt.wantErr != nil {
				var ae *api.Error
				if !errors.As(err, &ae) {
					t.Fatalf("err = %v, want *api.Error", err)
				}
				if diff := cmp.Diff(tt.wantErr, ae); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, v); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
		})
	}
}
