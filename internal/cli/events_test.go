package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

// answering is a custom-resource handler that answers every request SUCCESS at once.
func answering(t *testing.T) *httptest.Server {
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "phys-1"})
		go func() {
			req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	t.Cleanup(h.Close)
	return h
}

// TestEventsFollowEndsOnDelete: `events --follow` on a real server ends, exit 0 and a last line
// on stderr, when the stack is deleted while it follows, and at once on a stack already deleted.
func TestEventsFollowEndsOnDelete(t *testing.T) {
	handler := answering(t)
	a, err := app.Start(context.Background(), app.Config{Dir: filepath.Join(t.TempDir(), "state"), Listen: "127.0.0.1:0", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(context.Background())
	file := writeTemplate(t, "Parameters:\n  Url: {Type: String}\nResources:\n  Hello:\n    Type: Custom::Hello\n    Properties: {ServiceToken: !Ref Url}\n")
	run := func(ctx context.Context, args ...string) result {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr,
			Getenv: func(k string) string { return map[string]string{"CAIRN_SERVER": a.URL()}[k] }}
		code := Run(ctx, args, env)
		return result{code, stdout.String(), stderr.String()}
	}
	if got := run(context.Background(), "deploy", "-f", file, "--stack", "web", "--parameter", "Url="+handler.URL); got.Code != 0 {
		t.Fatalf("deploy: %+v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	followed := make(chan result, 1)
	go func() { followed <- run(ctx, "events", "--stack", "web", "--follow") }()
	time.Sleep(300 * time.Millisecond) // let it reach its long poll
	select {
	case got := <-followed:
		t.Fatalf("events --follow ended before the delete: %+v", got)
	default:
	}
	if got := run(context.Background(), "delete", "--stack", "web"); got.Code != 0 {
		t.Fatalf("delete: %+v", got)
	}
	var got result
	select {
	case got = <-followed:
	case <-time.After(30 * time.Second):
		t.Fatal("events --follow still waits 30 s after the stack was deleted")
	}
	const last = "stack web was deleted (DELETE_COMPLETE): no more events\n"
	lines := strings.Split(strings.TrimSpace(got.Stdout), "\n")
	if got.Code != 0 || got.Stderr != last || !strings.Contains(lines[len(lines)-1], "DELETE_COMPLETE") ||
		!strings.Contains(got.Stdout, "CREATE_COMPLETE") {
		t.Errorf("events --follow across a delete = %+v; want exit 0, every event up to the stack's DELETE_COMPLETE, and %q on stderr", got, last)
	}

	// Following a stack that is already deleted prints its events and ends.
	got = run(ctx, "events", "--stack", "web", "--follow", "-o", "json")
	var evs []api.Event
	for _, line := range strings.Split(strings.TrimSpace(got.Stdout), "\n") {
		var ev api.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("events --follow -o json printed %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	if got.Code != 0 || got.Stderr != last || len(evs) == 0 || evs[len(evs)-1].Status != "DELETE_COMPLETE" {
		t.Errorf("events --follow -o json of a deleted stack = %+v; want its events, one JSON object a line, and %q on stderr", got, last)
	}
}

// TestEventsFollowEndsWhenGone: a stack that does not exist any more ends the follow, exit 0.
func TestEventsFollowEndsWhenGone(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) > 1 {
			w.WriteHeader(404)
			json.NewEncoder(w).Encode(api.Error{Code: api.CodeNotFound, Message: "stack web: not found"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"events": []api.Event{{Seq: 1, Stack: "web", LogicalID: "web",
			Type: "AWS::CloudFormation::Stack", Status: "CREATE_COMPLETE", Timestamp: at}}})
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"events", "--stack", "web", "--follow", "-o", "json"}, Env{Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return map[string]string{"CAIRN_SERVER": srv.URL}[k] },
		Start:  func(context.Context, app.Config) (*app.App, error) { return nil, os.ErrInvalid }})
	got := result{code, stdout.String(), stderr.String()}
	want := result{0, `{"seq":1,"stack":"web","logicalId":"web","type":"AWS::CloudFormation::Stack","status":"CREATE_COMPLETE","timestamp":"2025-01-02T15:04:05Z"}` + "\n",
		"stack web does not exist any more: no more events\n"}
	if got != want {
		t.Errorf("events --follow when the stack disappears = %+v\nwant %+v", got, want)
	}
}
