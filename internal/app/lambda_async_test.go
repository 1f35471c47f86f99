package app

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// workerHandler hands the ResponseURL to a worker that outlives the invocation (a timer in the
// warm process) and returns at once. The worker answers after Delay seconds with a physical id
// of its own; every Delete is recorded with the physical id it names.
const workerHandler = `const response = require('cfn-response');
const fs = require('fs');
exports.handler = async (event, context) => {
  if (event.RequestType === 'Delete') fs.appendFileSync(process.env.DELETES, event.PhysicalResourceId + '\n');
  const id = event.RequestType === 'Create' ? 'worker-' + event.RequestId : event.PhysicalResourceId;
  setTimeout(() => response.send(event, context, response.SUCCESS, {By: 'worker'}, id), Number(event.ResourceProperties.Delay) * 1000);
  return 'handed to the worker';
};`

func workerTemplate(deletes string, delay int) string {
	b, _ := json.Marshal(map[string]any{
		"Resources": map[string]any{
			"Fn": map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
				"Runtime": "nodejs20.x", "Handler": "index.handler", "Code": map[string]any{"ZipFile": workerHandler},
				"Environment": map[string]any{"Variables": map[string]any{"DELETES": deletes}},
			}},
			"Thing": map[string]any{"Type": "Custom::Thing", "Properties": map[string]any{
				"ServiceToken": map[string]any{"Fn::GetAtt": []string{"Fn", "Arn"}}, "ServiceTimeout": 60, "Delay": delay,
			}},
		},
	})
	return string(b)
}

// thingID is the physical id the stack records for Thing.
func thingID(t *testing.T, a *App, stack string) string {
	t.Helper()
	var st api.Stack
	call(t, a, "GET", "/v1/stacks/"+stack, nil, http.StatusOK, &st)
	for _, r := range st.Resources {
		if r.LogicalID == "Thing" {
			return r.PhysicalID
		}
	}
	return ""
}

func lines(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// TestAsyncHandlerPattern: a function that hands the ResponseURL to a worker answering 5 s
// later (after the function's own 3 s timeout), with ServiceTimeout 60, creates the resource with the worker's physical id, and the
// stack's delete sends Delete for that id.
func TestAsyncHandlerPattern(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	t.Parallel()
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	deletes := filepath.Join(t.TempDir(), "deletes")
	var op api.Operation
	call(t, a, "POST", "/v1/stacks/async/deploy", api.DeployRequest{TemplateName: "stack.json", Template: workerTemplate(deletes, 5)},
		http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("deploy ended %s: %s", op.Status, op.StatusReason)
	}
	id := thingID(t, a, "async")
	if !strings.HasPrefix(id, "worker-") {
		t.Fatalf("Thing's physical id is %q, want the worker's", id)
	}
	if evs := strings.Join(thingEvents(t, a, "async"), "\n"); !strings.Contains(evs, "returned without answering") {
		t.Errorf("events do not say cairn waits for the worker:\n%s", evs)
	}
	call(t, a, "DELETE", "/v1/stacks/async", nil, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("delete ended %s: %s", op.Status, op.StatusReason)
	}
	if got := lines(deletes); len(got) != 1 || got[0] != id {
		t.Errorf("Deletes sent for %v, want one for %s", got, id)
	}
}

// TestLateAnswerDuringRollback: the create is cancelled while the worker works; the rollback
// begins, the worker's SUCCESS arrives during it, and the rollback's Delete names the physical
// id that answer gave, so nothing leaks.
func TestLateAnswerDuringRollback(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	t.Parallel()
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	deletes := filepath.Join(t.TempDir(), "deletes")
	var op api.Operation
	call(t, a, "POST", "/v1/stacks/late/deploy", api.DeployRequest{TemplateName: "stack.json", Template: workerTemplate(deletes, 6)},
		http.StatusAccepted, &op)

	// Cancel once the function has returned without answering.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(strings.Join(thingEvents(t, a, "late"), "\n"), "returned without answering") {
		if time.Now().After(deadline) {
			t.Fatalf("the function never returned; events:\n%s", strings.Join(thingEvents(t, a, "late"), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	var cancelled map[string]any
	call(t, a, "POST", "/v1/stacks/late/cancel", nil, http.StatusAccepted, &cancelled)
	if op = waitFor(t, a, op.ID); op.Status == "succeeded" {
		t.Fatalf("the cancelled deploy succeeded")
	}
	var st api.Stack
	call(t, a, "GET", "/v1/stacks/late", nil, http.StatusOK, &st)
	if st.Status != "ROLLBACK_COMPLETE" {
		t.Errorf("stack status %s, want ROLLBACK_COMPLETE", st.Status)
	}
	got := lines(deletes)
	if len(got) != 1 || !strings.HasPrefix(got[0], "worker-") {
		t.Errorf("the rollback sent Deletes for %v, want one for the worker's physical id; events:\n%s", got,
			strings.Join(thingEvents(t, a, "late"), "\n"))
	}
}
