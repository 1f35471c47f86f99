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
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

// TestInProcess runs the CLI the way a user does with no server configured: every command
// starts cairn in-process over the same state directory, as the README's quickstart does.
func TestInProcess(t *testing.T) {
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "phys-1", "Data": map[string]any{"Said": "hi"}})
		go func() {
			req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "stack.yaml")
	tmpl := "Parameters:\n  Url: {Type: String}\nResources:\n  Hello:\n    Type: Custom::Hello\n    Properties: {ServiceToken: !Ref Url}\nOutputs:\n  Said: {Value: !GetAtt Hello.Said}\n"
	if err := os.WriteFile(file, []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
			Getenv: func(k string) string { return map[string]string{"CAIRN_DIR": filepath.Join(dir, ".cairn")}[k] }}
		code := Run(context.Background(), args, env)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := run("deploy", "-f", file, "--stack", "hello", "--parameter", "Url="+handler.URL)
	if code != 0 || !strings.Contains(out, "Hello") || !strings.Contains(out, "CREATE_COMPLETE") || !strings.Contains(out, "Said = hi") {
		t.Fatalf("deploy: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, _ = run("describe", "--stack", "hello", "--output", "json")
	var st api.Stack
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Status != "CREATE_COMPLETE" || len(st.Resources) != 1 || st.Resources[0].PhysicalID != "phys-1" {
		t.Fatalf("describe: exit %d\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("Resources:\n  X:\n    Type: Nope::Thing\n  Y:\n    Type: Custom::Y\n    Properties: {ServiceToken: arn:aws:lambda:us-east-1:1:function:f}\n"), 0o644)
	code, out, errOut = run("validate", "-f", bad)
	errOut += out
	if code != 1 || !strings.Contains(errOut, bad+":3:11: Resources.X.Type: no provider serves resource type \"Nope::Thing\"") ||
		!strings.Contains(errOut, "Resources.Y.Properties.ServiceToken") {
		t.Errorf("validate: exit %d, stderr:\n%s", code, errOut)
	}
}
