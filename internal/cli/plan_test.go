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

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/app"
)

// planCLI runs the CLI in-process over one state directory with a custom-resource handler
// that echoes its Label property; terminal says whether stdin and stdout are a terminal.
type planCLI struct {
	t        *testing.T
	dir      string
	url      string
	requests atomic.Int32
}

func newPlanCLI(t *testing.T) *planCLI {
	c := &planCLI{t: t, dir: t.TempDir()}
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		var ev struct {
			ResponseURL, StackId, RequestId, LogicalResourceId, PhysicalResourceId string
			ResourceProperties                                                     map[string]any
		}
		json.NewDecoder(r.Body).Decode(&ev)
		id := ev.PhysicalResourceId
		if id == "" {
			id = "phys-" + ev.LogicalResourceId
		}
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev.StackId, "RequestId": ev.RequestId,
			"LogicalResourceId": ev.LogicalResourceId, "PhysicalResourceId": id, "Data": map[string]any{"Label": ev.ResourceProperties["Label"]}})
		w.WriteHeader(http.StatusOK)
		go func() {
			req, _ := http.NewRequest(http.MethodPut, ev.ResponseURL, bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	t.Cleanup(handler.Close)
	c.url = handler.URL
	return c
}

func (c *planCLI) template(label string) string {
	path := filepath.Join(c.dir, "stack.yaml")
	tmpl := "Parameters:\n  Url: {Type: String}\nResources:\n  Hello:\n    Type: Custom::Hello\n    Properties: {ServiceToken: !Ref Url, Label: " + label +
		"}\nOutputs:\n  Label: {Value: !GetAtt Hello.Label}\n"
	if err := os.WriteFile(path, []byte(tmpl), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return path
}

func (c *planCLI) run(terminal bool, stdin string, args ...string) (int, string) {
	var out bytes.Buffer
	env := Env{Stdout: &out, Stderr: &out, Stdin: strings.NewReader(stdin), Start: app.Start,
		IsTerminal: func(any) bool { return terminal },
		Getenv: func(k string) string {
			return map[string]string{"CAIRN_DIR": filepath.Join(c.dir, ".cairn"), "NO_COLOR": "1"}[k]
		}}
	code := Run(context.Background(), args, env)
	return code, out.String()
}

func (c *planCLI) label() string {
	c.t.Helper()
	code, out := c.run(false, "", "outputs", "--stack", "s", "--output", "json")
	var outs []api.Output
	if code != 0 || json.Unmarshal([]byte(out), &outs) != nil || len(outs) != 1 {
		c.t.Fatalf("outputs: exit %d\n%s", code, out)
	}
	return outs[0].Value.(string)
}

func TestSavedPlanCLI(t *testing.T) {
	c := newPlanCLI(t)
	if code, out := c.run(false, "", "deploy", "-f", c.template("one"), "--stack", "s", "-p", "Url="+c.url); code != 0 {
		t.Fatalf("deploy: exit %d\n%s", code, out)
	}
	planPath := filepath.Join(c.dir, "plan.cairn")
	code, out := c.run(false, "", "preview", "-f", c.template("two"), "--stack", "s", "-p", "Url="+c.url, "--out", planPath)
	if code != 0 || !strings.Contains(out, "Modify  Hello") || !strings.Contains(out, "Changes to Outputs:") ||
		!strings.Contains(out, `~ Label = "one" -> (known after apply)`) || !strings.Contains(out, "cairn deploy --plan "+planPath) {
		t.Fatalf("preview --out: exit %d\n%s", code, out)
	}
	if fi, err := os.Stat(planPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("plan file: %v, %v", fi, err)
	}
	// The template on disk changes after the preview: the saved plan still applies what it
	// showed, as terraform apply PLANFILE does.
	c.template("three")
	if code, out := c.run(false, "", "deploy", "--plan", planPath); code != 0 || !strings.Contains(out, "UPDATE_COMPLETE") {
		t.Fatalf("deploy --plan: exit %d\n%s", code, out)
	}
	if got := c.label(); got != "two" {
		t.Errorf("Label after deploy --plan = %q, want two", got)
	}
	// Applying it again: the stack moved since the plan was made.
	code, out = c.run(false, "", "deploy", "--plan", planPath)
	if code != 1 || !strings.Contains(out, "plan_stale") && !strings.Contains(out, "no longer applies") || !strings.Contains(out, "resource Hello changed") {
		t.Errorf("deploy --plan of a stale plan: exit %d\n%s", code, out)
	}
	if code, out := c.run(false, "", "deploy", "--plan", planPath, "-f", c.template("x")); code != 2 || !strings.Contains(out, "--file cannot be used with --plan") {
		t.Errorf("deploy --plan -f: exit %d\n%s", code, out)
	}
	if code, out := c.run(false, "", "deploy", "--plan", planPath, "--stack", "other"); code != 2 || !strings.Contains(out, "is for stack s, not other") {
		t.Errorf("deploy --plan --stack other: exit %d\n%s", code, out)
	}
}

func TestDeployAndDeleteAsk(t *testing.T) {
	c := newPlanCLI(t)
	path := c.template("one")
	// Not a terminal: no question, as in CI.
	if code, out := c.run(false, "", "deploy", "-f", path, "--stack", "s", "-p", "Url="+c.url); code != 0 || strings.Contains(out, "Enter a value") {
		t.Fatalf("deploy without a terminal: exit %d\n%s", code, out)
	}
	path = c.template("two")
	before := c.requests.Load()
	code, out := c.run(true, "no\n", "deploy", "-f", path, "--stack", "s", "-p", "Url="+c.url)
	if code != 1 || !strings.Contains(out, "Modify  Hello") || !strings.Contains(out, "Only 'yes' will be accepted") || !strings.Contains(out, "Deploy cancelled.") {
		t.Fatalf("deploy answered no: exit %d\n%s", code, out)
	}
	if c.requests.Load() != before || c.label() != "one" {
		t.Fatalf("a refused deploy changed the stack: label %q, %d handler calls", c.label(), c.requests.Load()-before)
	}
	if code, out := c.run(true, "yes\n", "deploy", "-f", path, "--stack", "s", "-p", "Url="+c.url); code != 0 || c.label() != "two" {
		t.Fatalf("deploy answered yes: exit %d\n%s", code, out)
	}
	// --yes does not ask; nothing to change does not ask either.
	if code, out := c.run(true, "", "deploy", "-f", path, "--stack", "s", "-p", "Url="+c.url); code != 0 || strings.Contains(out, "Enter a value") {
		t.Fatalf("deploy with nothing to change: exit %d\n%s", code, out)
	}
	if code, out := c.run(true, "", "deploy", "-f", c.template("three"), "--stack", "s", "-p", "Url="+c.url, "--yes"); code != 0 || strings.Contains(out, "Enter a value") || c.label() != "three" {
		t.Fatalf("deploy --yes: exit %d\n%s", code, out)
	}
	code, out = c.run(true, "nope\n", "delete", "--stack", "s")
	if code != 1 || !strings.Contains(out, "Hello  Custom::Hello  phys-Hello") || !strings.Contains(out, "Delete cancelled.") {
		t.Fatalf("delete answered nope: exit %d\n%s", code, out)
	}
	if c.label() != "three" {
		t.Fatal("a refused delete deleted")
	}
	if code, out := c.run(true, "yes\n", "delete", "--stack", "s"); code != 0 || !strings.Contains(out, "DELETE_COMPLETE") {
		t.Fatalf("delete answered yes: exit %d\n%s", code, out)
	}
}
