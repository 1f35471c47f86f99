package e2e

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/function"
)

// functionARN is how the templates address the functions: the Lambda ARN a user would write.
const functionARN = "arn:aws:lambda:us-east-1:123456789012:function:greeter"

// createFunction zips dir and creates the function greeter from it through the API.
func createFunction(t *testing.T, c apiClient, dir, runtime, handler string) api.Function {
	t.Helper()
	code, err := function.ZipDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.CreateFunction(bg, api.CreateFunctionRequest{Name: "greeter", Runtime: runtime, Handler: handler, Code: code,
		TimeoutSeconds: 30, Concurrency: 2})
	if err != nil {
		t.Fatalf("create function: %v", err)
	}
	return f
}

// seenInLogs reads the events a handler printed ("SEEN {...}") from the function's logs.
func seenInLogs(t *testing.T, c apiClient) func() []seenRequest {
	return func() []seenRequest {
		logs, err := c.FunctionLogs(bg, "greeter", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var seen []seenRequest
		for _, e := range logs {
			if rest, ok := strings.CutPrefix(e.Message, "SEEN "); ok {
				var r seenRequest
				if err := json.Unmarshal([]byte(rest), &r); err != nil {
					t.Fatalf("log line %q: %v", e.Message, err)
				}
				seen = append(seen, r)
			}
		}
		return seen
	}
}

// TestLambdaGoProvidedFunction: an unmodified aws-lambda-go cfn.LambdaWrap binary, started
// with lambda.Start and no HTTP wrapper, runs as a `provided` function over cairn's Lambda
// Runtime API and serves custom resources addressed by Lambda ARN through create,
// replacement, failed update with rollback, failed create with rollback, and delete.
func TestLambdaGoProvidedFunction(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bootstrap"), "./testdata/lambdabootstrap")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, c := startCairn(t, "", "")
	f := createFunction(t, c, dir, "provided", "")
	if f.ARN != functionARN {
		t.Errorf("ARN = %s, want %s", f.ARN, functionARN)
	}
	lifecycle(t, c, functionARN, seenInLogs(t, c), "")

	// An unknown function is a validation error that lists the registered ones.
	tmpl := strings.Replace(greeters, "!Ref Token", "arn:aws:lambda:us-east-1:1:function:nope", 1)
	if why := deployFailure(t, c, "unknown", tmpl, map[string]string{"Token": functionARN}); !strings.Contains(why,
		`function "nope" is not registered; registered functions: greeter`) {
		t.Errorf("deploy with an unknown function: %s", why)
	}
}

// deployFailure deploys and returns why it failed: the refusal, or the operation's and
// events' reasons.
func deployFailure(t *testing.T, c apiClient, stack, tmpl string, params map[string]string) string {
	t.Helper()
	op, err := c.Deploy(bg, stack, api.DeployRequest{TemplateName: "stack.yaml", Template: tmpl, Parameters: params})
	if ae, ok := err.(*api.Error); ok {
		why := ae.Message
		for _, d := range ae.Diagnostics {
			why += "\n" + d.Summary
		}
		return why
	} else if err != nil {
		t.Fatalf("deploy %s: %v", stack, err)
	}
	op = c.wait(t, op.ID)
	if op.Status == "succeeded" {
		return "the deploy succeeded"
	}
	why := op.StatusReason
	events, err := c.Events(bg, stack, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		why += "\n" + e.LogicalID + " " + e.Status + ": " + e.Reason
	}
	return why
}

// TestCfnResponseNodejsFunction: the unmodified npm cfn-response handler runs as a `nodejs`
// function (cairn's own bootstrap); cfn-response PUTs to https://host:443, so cairn serves
// TLS there and gives the function its CA.
func TestCfnResponseNodejsFunction(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat("handlers/node_modules/cfn-response"); err != nil {
		t.Skip("npm packages missing: run (cd test/e2e/handlers && npm ci)")
	}
	if ln, err := net.Listen("tcp", "127.0.0.1:443"); err != nil {
		t.Skipf("port 443 is not free or not allowed here: %v", err)
	} else {
		ln.Close()
	}
	_, c := startCairn(t, "127.0.0.1:443", "https://127.0.0.1")
	dir := t.TempDir()
	copyFile(t, "handlers/cfn-response-handler.js", filepath.Join(dir, "cfn-response-handler.js"))
	copyFile(t, "handlers/node_modules/cfn-response/index.js", filepath.Join(dir, "node_modules/cfn-response/index.js"))
	copyFile(t, "handlers/node_modules/cfn-response/package.json", filepath.Join(dir, "node_modules/cfn-response/package.json"))
	// seen.js only records the event, then calls the handler as Lambda would.
	seen := `const inner = require("./cfn-response-handler").handler;
exports.handler = function (event, context) {
  console.log("SEEN " + JSON.stringify({RequestType: event.RequestType, LogicalResourceId: event.LogicalResourceId,
    PhysicalResourceId: event.PhysicalResourceId || "", RequestId: event.RequestId,
    ResourceProperties: event.ResourceProperties, OldResourceProperties: event.OldResourceProperties || null}));
  return inner(event, context);
};
`
	if err := os.WriteFile(filepath.Join(dir, "seen.js"), []byte(seen), 0o644); err != nil {
		t.Fatal(err)
	}
	createFunction(t, c, dir, "nodejs", "seen.handler")
	lifecycle(t, c, functionARN, seenInLogs(t, c), "failed-Second")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
