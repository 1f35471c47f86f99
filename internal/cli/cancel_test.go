package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
)

// TestCancelForceAsks: cancel --force asks before it ends an operation, takes only "yes", and
// refuses without --yes when stdin is not a terminal; the request it sends names who forced it.
func TestCancelForceAsks(t *testing.T) {
	var forced []api.CancelRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /v1/stacks/s":
			json.NewEncoder(w).Encode(api.Stack{Name: "s", Status: "UPDATE_IN_PROGRESS", Operation: "op-1"})
		case "GET /v1/operations/op-1":
			json.NewEncoder(w).Encode(api.Operation{ID: "op-1", Stack: "s", Kind: "deploy", Status: "running"})
		case "POST /v1/stacks/s/cancel":
			var req api.CancelRequest
			json.NewDecoder(r.Body).Decode(&req)
			forced = append(forced, req)
			json.NewEncoder(w).Encode(api.Operation{ID: "op-1", Stack: "s", Kind: "deploy", Status: "failed", StackStatus: "UPDATE_FAILED"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	run := func(terminal bool, stdin string, args ...string) (int, string) {
		var out bytes.Buffer
		env := Env{Stdout: &out, Stderr: &out, Stdin: strings.NewReader(stdin), IsTerminal: func(any) bool { return terminal },
			Getenv: func(k string) string { return map[string]string{"USER": "alice", "NO_COLOR": "1"}[k] }}
		code := Run(context.Background(), append([]string{"--server", srv.URL}, args...), env)
		return code, out.String()
	}

	if code, out := run(false, "yes\n", "cancel", "--stack", "s", "--force"); code != exitUsage || !strings.Contains(out, "stdin is not a terminal; add --yes") {
		t.Errorf("--force without a terminal: exit %d\n%s", code, out)
	}
	if code, out := run(true, "y\n", "cancel", "--stack", "s", "--force"); code != exitFailed ||
		!strings.Contains(out, "Do you really want to force-unlock stack s?") || !strings.Contains(out, "Force-unlock cancelled") {
		t.Errorf("--force answered y: exit %d\n%s", code, out)
	}
	if len(forced) != 0 {
		t.Fatalf("unconfirmed force-unlocks were sent: %+v", forced)
	}
	if code, out := run(true, "yes\n", "cancel", "--stack", "s", "--force"); code != 0 || !strings.Contains(out, "has been unlocked") {
		t.Errorf("--force answered yes: exit %d\n%s", code, out)
	}
	if code, out := run(false, "", "cancel", "--stack", "s", "--force", "--yes"); code != 0 {
		t.Errorf("--force --yes: exit %d\n%s", code, out)
	}
	if len(forced) != 2 || !forced[0].Force || !strings.HasPrefix(forced[0].By, "alice@") || !strings.HasSuffix(forced[0].By, "(cairn cancel --force)") {
		t.Errorf("force-unlock requests = %+v, want two, by alice@HOST (cairn cancel --force)", forced)
	}
}
