// Package e2e runs cairn end to end against real custom-resource handler libraries: the npm
// packages cfn-response (HTTPS on port 443 only) and custom-resource-helper, served by a Node
// host as a real process, and the cairn binary itself for crash-and-resume.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/client"
)

// apiClient wraps cairn's Go client with test failures and waiting.
type apiClient struct{ *client.Client }

func newClient(base string) apiClient { return apiClient{client.New(base, "", nil)} }

// deploy deploys tmpl with params and waits for the operation to end.
func (c apiClient) deploy(t *testing.T, stack, tmpl string, params map[string]string) api.Operation {
	t.Helper()
	op, err := c.Deploy(bg, stack, api.DeployRequest{TemplateName: "stack.yaml", Template: tmpl, Parameters: params})
	if err != nil {
		t.Fatalf("deploy %s: %v", stack, err)
	}
	return c.wait(t, op.ID)
}

func (c apiClient) delete(t *testing.T, stack string) api.Operation {
	t.Helper()
	op, err := c.Delete(bg, stack, api.DeleteRequest{})
	if err != nil {
		t.Fatalf("delete %s: %v", stack, err)
	}
	return c.wait(t, op.ID)
}

func (c apiClient) wait(t *testing.T, id string) api.Operation {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		op, err := c.Operation(bg, id, 20*time.Second)
		if err != nil {
			t.Fatalf("operation %s: %v", id, err)
		}
		if op.Status != "running" {
			return op
		}
	}
	t.Fatalf("operation %s did not finish in a minute", id)
	return api.Operation{}
}

func (c apiClient) stack(t *testing.T, name string) api.Stack {
	t.Helper()
	st, err := c.Stack(bg, name)
	if err != nil {
		t.Fatalf("describe %s: %v", name, err)
	}
	return st
}

func outputs(st api.Stack) map[string]any {
	m := map[string]any{}
	for _, o := range st.Outputs {
		m[o.Name] = o.Value
	}
	return m
}

// process is a child process whose output goes to the test log on failure.
type process struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

// start runs name with args and waits for a line starting with ready on stdout; it returns
// the rest of that line.
func start(t *testing.T, env []string, ready string, name string, args ...string) (*process, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{cmd: cmd, out: out}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("%s exited before it was ready:\n%s", name, out.String())
			}
			if rest, ok := strings.CutPrefix(l, ready); ok {
				go func() {
					for l := range lines {
						out.WriteString(l + "\n")
					}
				}()
				return p, strings.TrimSpace(rest)
			}
			out.WriteString(l + "\n")
		case <-timeout:
			t.Fatalf("%s not ready after 30s:\n%s", name, out.String())
		}
	}
}

// nodeHost starts test/e2e/handlers/host.js, skipping when Node or the npm packages are
// missing (.ci/run installs them).
func nodeHost(t *testing.T, env ...string) (base string, log func() []seenRequest) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; the npm handler libraries cannot run")
	}
	if _, err := os.Stat("handlers/node_modules/cfn-response"); err != nil {
		t.Skip("npm packages missing: run (cd test/e2e/handlers && npm ci)")
	}
	_, port := start(t, env, "listening ", "node", filepath.Join("handlers", "host.js"), "0")
	base = "http://127.0.0.1:" + port
	return base, func() []seenRequest {
		resp, err := http.Get(base + "/log")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var seen []seenRequest
		json.NewDecoder(resp.Body).Decode(&seen)
		return seen
	}
}

// seenRequest is a request as the Node host logged it.
type seenRequest struct {
	RequestType, LogicalResourceId, PhysicalResourceId, RequestId string
	ResourceProperties, OldResourceProperties                     map[string]any
}

func (r seenRequest) String() string {
	return fmt.Sprintf("%s %s %s", r.RequestType, r.LogicalResourceId, r.PhysicalResourceId)
}

func summary(seen []seenRequest) []string {
	var out []string
	for _, r := range seen {
		out = append(out, r.String())
	}
	return out
}

var bg = context.Background()
