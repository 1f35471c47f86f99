package server

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestCancel: POST .../cancel cancels, or with {"force": true} force-unlocks naming who forced
// it; a stack with nothing running is a 409 with its own code.
func TestCancel(t *testing.T) {
	eng := &fakeEngine{
		CancelFn: func(_ context.Context, stack string) (api.Operation, error) {
			if stack == "idle" {
				return api.Operation{}, &engine.NoOperationError{Stack: stack, Status: "CREATE_COMPLETE"}
			}
			return api.Operation{ID: "op-1", Stack: stack, Kind: "deploy", Status: "running", StartedAt: t0}, nil
		},
		ForceUnlockFn: func(_ context.Context, stack, by string) (api.Operation, error) {
			return api.Operation{ID: "op-1", Stack: stack, Kind: "deploy", Status: "failed", StatusReason: "forced by " + by, StartedAt: t0}, nil
		},
	}
	cases := map[string]struct {
		reason string
		call   call
		want   answer
	}{
		"Cancel": {
			reason: "Without a body the operation is cancelled (and still running: 202).",
			call:   call{method: "POST", path: "/v1/stacks/web/cancel"},
			want:   answer{Status: 202, Body: js(t, `{"id":"op-1","stack":"web","kind":"deploy","status":"running","startedAt":"2026-01-02T03:04:05Z"}`)},
		},
		"NothingRunning": {
			reason: "Cancelling a stack with no running operation is a conflict with a code of its own, not a 404.",
			call:   call{method: "POST", path: "/v1/stacks/idle/cancel", body: `{}`},
			want: answer{Status: 409, Body: js(t, `{"code":"no_operation",
				"message":"stack idle has no running operation to cancel (it is CREATE_COMPLETE)"}`)},
		},
		"Force": {
			reason: "force ends it at once (200, ended), naming who forced it.",
			call:   call{method: "POST", path: "/v1/stacks/web/cancel", body: `{"force":true,"by":"alice@box"}`},
			want: answer{Status: 200, Body: js(t, `{"id":"op-1","stack":"web","kind":"deploy","status":"failed",
				"statusReason":"forced by alice@box","startedAt":"2026-01-02T03:04:05Z"}`)},
		},
		"ForceByControlCharacters": {
			reason: "by goes into events as it is: control characters are refused.",
			call:   call{method: "POST", path: "/v1/stacks/web/cancel", body: `{"force":true,"by":"a\nFAKE EVENT"}`},
			want: answer{Status: 400, Body: js(t, `{"code":"invalid_request",
				"message":"by must be at most 200 characters, without control characters"}`)},
		},
	}
	h := New(Config{Engine: eng}).Handler()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := do(t, h, tc.call)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
