package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-dev/cairn/api"
)

func TestAuth(t *testing.T) {
	unauthorized := `{"code":"unauthorized","message":"missing or wrong bearer token"}`
	cases := map[string]struct {
		reason string
		token  string // the server's
		req    call
		status int
		want   string
	}{
		"NoAuthConfigured": {
			reason: "With no token, requests need no Authorization header.",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs"},
			status: 200, want: `{"outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"RightToken": {
			reason: "The right bearer token is accepted.",
			token:  "s3cret",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs", header: bearer("s3cret")},
			status: 200, want: `{"outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"LowerCaseScheme": {
			reason: "The scheme is case-insensitive (RFC 7235): bearer and BEARER are Bearer.",
			token:  "s3cret",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs", header: map[string]string{"Authorization": "bearer s3cret"}},
			status: 200, want: `{"outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"UpperCaseScheme": {
			reason: "The scheme is case-insensitive (RFC 7235).",
			token:  "s3cret",
			req:    call{method: "GET", path: "/v1/stacks/demo/outputs", header: map[string]string{"Authorization": "BEARER  s3cret"}},
			status: 200, want: `{"outputs":[{"name":"Url","value":"https://x"}]}`,
		},
		"MissingToken": {
			reason: "A missing token is a 401.",
			token:  "s3cret",
			req:    call{method: "GET", path: "/v1/stacks"},
			status: 401, want: unauthorized,
		},
		"WrongToken": {
			reason: "A wrong token is a 401.",
			token:  "s3cret",
			req:    call{method: "POST", path: "/v1/stacks/demo/deploy", body: `{}`, header: bearer("s3cre")},
			status: 401, want: unauthorized,
		},
		"NotBearer": {
			reason: "Another scheme is a 401.",
			token:  "s3cret",
			req:    call{method: "DELETE", path: "/v1/stacks/demo", header: map[string]string{"Authorization": "Basic s3cret"}},
			status: 401, want: unauthorized,
		},
		"AuthBeforeBody": {
			reason: "Auth is checked before the body is read, so an unauthenticated caller learns nothing.",
			token:  "s3cret",
			req:    call{method: "POST", path: "/v1/validate", body: `not json`},
			status: 401, want: unauthorized,
		},
		"HealthzOpen": {
			reason: "/healthz needs no token.",
			token:  "s3cret",
			req:    call{method: "GET", path: "/healthz"},
			status: 200, want: `ok`,
		},
		"ResponsesOpen": {
			reason: "Response URLs are pre-signed and need no token.",
			token:  "s3cret",
			req:    call{method: "PUT", path: "/v1/responses/req-1?expires=1&signature=abc", body: `{"Status":"SUCCESS"}`},
			status: 200, want: `{"path":"/v1/responses/req-1","query":"expires=1\u0026signature=abc","body":"{\"Status\":\"SUCCESS\"}"}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := New(Config{Engine: echoEngine(), Token: tc.token, Responses: echoResponses()}).Handler()
			got, hdr := do(t, h, tc.req)
			want := answer{Status: tc.status, Body: decodeAny(t, []byte(tc.want))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n%s %s: -want +got:\n%s", tc.reason, tc.req.method, tc.req.path, diff)
			}
			if wa := hdr.Get("WWW-Authenticate"); (tc.status == 401) != (wa != "") {
				t.Errorf("%s\nWWW-Authenticate = %q with status %d", tc.reason, wa, tc.status)
			}
		})
	}
}

// echoResponses stands in for the custom-resource response handler: it echoes what it got.
func echoResponses() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		writeJSON(w, http.StatusOK, map[string]string{"path": r.URL.Path, "query": r.URL.RawQuery, "body": string(b)})
	})
}

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	h := New(Config{Engine: echoEngine(), Token: "tok", Responses: echoResponses(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Handler()
	do(t, h, call{method: "PUT", path: "/v1/responses/req-1?expires=99&signature=SIGNATURE", body: `{"Data":"BODYSECRET"}`})
	do(t, h, call{method: "POST", path: "/v1/stacks/demo/deploy", body: `{"template":"TEMPLATESECRET"}`, header: bearer("tok")})
	do(t, h, call{method: "GET", path: "/v1/stacks/demo/events?after=3"})

	out := logs.String()
	for _, secret := range []string{"SIGNATURE", "expires", "BODYSECRET", "TEMPLATESECRET", "tok"} {
		if strings.Contains(out, secret) {
			t.Errorf("the access log contains %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{
		`method=PUT route=/v1/responses/ status=200`,
		`method=POST route="POST /v1/stacks/{name}/deploy" status=202`,
		`method=GET route="GET /v1/stacks/{name}/events" status=401`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the access log lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "duration=") {
		t.Errorf("the access log lacks durations:\n%s", out)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := New(Config{Engine: echoEngine(), Metrics: reg}).Handler()
	New(Config{Engine: echoEngine(), Metrics: reg}) // a second server on the same registry must not panic
	do(t, h, call{method: "GET", path: "/v1/stacks/a"})
	do(t, h, call{method: "GET", path: "/v1/stacks/b"})
	do(t, h, call{method: "GET", path: "/nope/secret-path"})

	got, _ := do(t, h, call{method: "GET", path: "/metrics"})
	text, _ := got.Body.(string)
	for _, want := range []string{
		`cairn_http_requests_total{code="200",method="GET",route="GET /v1/stacks/{name}"} 2`,
		`cairn_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`cairn_http_request_duration_seconds_count{method="GET",route="GET /v1/stacks/{name}"} 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "secret-path") {
		t.Errorf("/metrics labels an unmatched path:\n%s", text)
	}
}

func TestPanicIsInternalError(t *testing.T) {
	eng := echoEngine()
	eng.StacksFn = func(context.Context) ([]api.Stack, error) { panic("boom") }
	var logs bytes.Buffer
	h := New(Config{Engine: eng, Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Handler()
	got, _ := do(t, h, call{method: "GET", path: "/v1/stacks"})
	want := answer{Status: 500, Body: js(t, `{"code":"internal","message":"internal error; the server log has the detail"}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a panicking engine: -want +got:\n%s", diff)
	}
	if !strings.Contains(logs.String(), "boom") {
		t.Errorf("the log lacks the panic:\n%s", logs.String())
	}
}
