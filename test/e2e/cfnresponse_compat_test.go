package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cfnResponseCapture runs module's send with node, its http and https requests captured
// instead of sent, and prints what would have gone out as JSON.
const cfnResponseCapture = `const http = require("http"), https = require("https");
http.request = https.request = function (target, options) {
  const o = options && typeof options === "object" ? options : target; // (url, options, cb) or (options, cb)
  const chunks = [];
  return {
    on() { return this; },
    write(b) { chunks.push(String(b)); },
    end(b) {
      if (b !== undefined) chunks.push(String(b));
      const body = JSON.parse(chunks.join(""));
      console.log("CAPTURED " + JSON.stringify({method: o.method, contentType: (o.headers || {})["content-type"], body}));
    },
  };
};
const m = require(process.argv[1]);
const event = {ResponseURL: "https://cairn.example/v1/responses/r1?sig=x", StackId: "arn:stack", RequestId: "req-1", LogicalResourceId: "Thing"};
const context = {logStreamName: "2026/11/25/[$LATEST]abc", done: () => {}};
m.send(event, context, m.SUCCESS, {Answer: 42, Name: "x"}, process.argv[2] || undefined);`

// TestCfnResponseModulesAgree: the cfn-response module cairn gives inline (Code.ZipFile) Node
// functions sends what the real npm cfn-response sends for the same call — a PUT with an
// empty content type and the same response fields — so handlers written against AWS's
// module work unchanged. Reason's wording is cairn's own, and NoEcho (documented by AWS, not
// in npm's 1.0.1) is cairn's addition.
func TestCfnResponseModulesAgree(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat("handlers/node_modules/cfn-response"); err != nil {
		t.Skip("npm packages missing: run (cd test/e2e/handlers && npm ci)")
	}
	type request struct {
		Method, ContentType string
		Body                map[string]any
	}
	sent := func(module, physicalID string) request {
		t.Helper()
		abs, err := filepath.Abs(module)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("node", "-e", cfnResponseCapture, abs, physicalID).Output()
		if err != nil {
			t.Fatalf("node with %s: %v\n%s", module, err, out)
		}
		var r struct {
			Method, ContentType string
			Body                map[string]any
		}
		_, captured, _ := strings.Cut(string(out), "CAPTURED ") // the modules log lines of their own
		if err := json.Unmarshal([]byte(captured), &r); err != nil {
			t.Fatalf("%s: %v\n%s", module, err, out)
		}
		delete(r.Body, "Reason")
		delete(r.Body, "NoEcho")
		return request(r)
	}
	for _, id := range []string{"phys-1", ""} { // without an id, both use the log stream's name
		ours := sent("../../internal/provider/lambda/modules/cfn-response.js", id)
		theirs := sent("handlers/node_modules/cfn-response", id)
		if theirs.Method != "PUT" || theirs.Body["Status"] != "SUCCESS" {
			t.Fatalf("the capture did not see npm's request: %+v", theirs)
		}
		if d := cmp.Diff(theirs, ours); d != "" {
			t.Errorf("physical id %q: cairn's cfn-response differs from npm's (-npm +cairn):\n%s", id, d)
		}
	}
}
