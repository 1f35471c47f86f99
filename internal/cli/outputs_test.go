package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/app"
)

// TestRememberedParametersAndSecretOutputs drives the CLI in-process: a redeploy without
// --parameter keeps the values of the last deploy (NoEcho one included), preview shows them
// (masked), and outputs masks a secret unless --show-secrets.
func TestRememberedParametersAndSecretOutputs(t *testing.T) {
	var mu sync.Mutex
	var words []string // the Word each request carried
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			RequestType, ResponseURL, StackId, RequestId, LogicalResourceId string
			ResourceProperties                                              map[string]any
		}
		json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		words = append(words, ev.RequestType+" "+ev.ResourceProperties["Word"].(string))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev.StackId, "RequestId": ev.RequestId,
			"LogicalResourceId": ev.LogicalResourceId, "PhysicalResourceId": "phys-1"})
		go func() {
			req, _ := http.NewRequest(http.MethodPut, ev.ResponseURL, bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "stack.yaml")
	tmpl := `Parameters:
  Url: {Type: String}
  Pass: {Type: String, NoEcho: true}
  Label: {Type: String, Default: first}
Resources:
  Hello:
    Type: Custom::Hello
    Properties: {ServiceToken: !Ref Url, Word: !Ref Pass, Label: !Ref Label}
Outputs:
  Secret: {Value: !Ref Pass}
  Label: {Value: !Ref Label}
`
	if err := os.WriteFile(file, []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
			Getenv: func(k string) string { return map[string]string{"CAIRN_DIR": filepath.Join(dir, ".cairn")}[k] }}
		if code := Run(context.Background(), args, env); code != 0 {
			t.Fatalf("cairn %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}

	run("deploy", "-f", file, "--stack", "s", "-p", "Url="+handler.URL, "-p", "Pass=s3cret", "-p", "Label=given")
	if out := run("outputs", "--stack", "s"); !strings.Contains(out, "Secret = ****") || strings.Contains(out, "s3cret") {
		t.Errorf("outputs: want the secret masked:\n%s", out)
	}
	if out := run("outputs", "--stack", "s", "--show-secrets"); !strings.Contains(out, "Secret = s3cret") {
		t.Errorf("outputs --show-secrets: want the secret's value:\n%s", out)
	}
	// Preview without --parameter: nothing changes, and the kept values are shown, NoEcho masked.
	out := run("preview", "-f", file, "--stack", "s")
	if !strings.Contains(out, "No changes.") || !strings.Contains(out, "= given") || !regexp.MustCompile(`Pass +String += \*\*\*\*`).MatchString(out) ||
		strings.Contains(out, "s3cret") {
		t.Errorf("preview without --parameter: want no change and the kept values:\n%s", out)
	}
	// A new template version without any --parameter keeps Url, Pass and Label; Label= takes the Default.
	os.WriteFile(file, []byte(strings.Replace(tmpl, "Label: !Ref Label}", "Label: !Ref Label, V: 2}", 1)), 0o644)
	run("deploy", "-f", file, "--stack", "s")
	run("deploy", "-f", file, "--stack", "s", "-p", "Label=")
	if out := run("outputs", "--stack", "s", "--show-secrets"); !strings.Contains(out, "Secret = s3cret") || !strings.Contains(out, "Label = first") {
		t.Errorf("outputs after the redeploys: want the kept secret and the Default label:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"Create s3cret", "Update s3cret", "Update s3cret"}; strings.Join(words, ",") != strings.Join(want, ",") {
		t.Errorf("the handler's requests: got %v, want %v", words, want)
	}
}
