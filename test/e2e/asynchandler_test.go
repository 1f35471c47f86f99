package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// asyncHandler returns at once and leaves a timer that PUTs SUCCESS to the ResponseURL 2 s
// later: the asynchronous handler pattern (the function hands the ResponseURL to a worker).
const asyncHandler = `exports.handler = async (event) => {
  setTimeout(() => {
    const u = new URL(event.ResponseURL);
    const mod = require(u.protocol === "https:" ? "https" : "http");
    const body = JSON.stringify({Status: "SUCCESS", PhysicalResourceId: "async-" + event.LogicalResourceId,
      StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId,
      Data: {Greeting: "late hello"}});
    const req = mod.request(u, {method: "PUT", headers: {"Content-Type": "", "Content-Length": Buffer.byteLength(body)}},
      (res) => { console.log("PUT " + res.statusCode); res.resume(); });
    req.on("error", (e) => console.log("PUT error " + e));
    req.end(body);
  }, 2000);
  return "returned before answering";
};
`

// TestAsyncHandlerNodejsFunction: a real node function that returns without answering and
// answers from a timer 2 s later completes its create and its delete; the create's events say
// cairn waited for the answer.
func TestAsyncHandlerNodejsFunction(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	_, c := startCairn(t, "", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(asyncHandler), 0o644); err != nil {
		t.Fatal(err)
	}
	createFunction(t, c, dir, "nodejs", "index.handler")
	tmpl := `Resources:
  Late:
    Type: Custom::Late
    Properties: {ServiceToken: "` + functionARN + `", ServiceTimeout: 60}
Outputs:
  Greeting: {Value: !GetAtt Late.Greeting}
  Id: {Value: !Ref Late}
`
	op := c.deploy(t, "async", tmpl, nil)
	events, err := c.Events(bg, "async", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var why []string
	waited := 0
	for _, e := range events {
		why = append(why, e.LogicalID+" "+e.Status+": "+e.Reason)
		if e.LogicalID == "Late" && e.Status == "CREATE_IN_PROGRESS" && strings.Contains(e.Reason, "the function returned without answering; waiting") {
			waited++
		}
	}
	if op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %s %s\n%s", op.StackStatus, op.StatusReason, strings.Join(why, "\n"))
	}
	if waited != 1 {
		t.Errorf("want one event saying cairn waits for the answer:\n%s", strings.Join(why, "\n"))
	}
	if got := outputs(c.stack(t, "async")); got["Greeting"] != "late hello" || got["Id"] != "async-Late" {
		t.Errorf("outputs: %v", got)
	}
	if op := c.delete(t, "async"); op.StackStatus != "DELETE_COMPLETE" {
		t.Errorf("delete: %+v", op)
	}
}
