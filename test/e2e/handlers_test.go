package e2e

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
)

// greeters is a stack of two custom resources served by one handler: Second reads First's
// Data through Fn::GetAtt. Version replaces First (its handler returns a new physical id);
// Fail makes Second's handler answer FAILED.
const greeters = `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Token: {Type: String}
  Version: {Type: Number, Default: 1}
  Fail: {Type: String, Default: "false", AllowedValues: ["true", "false"]}
Resources:
  First:
    Type: Custom::Greeter
    Properties: {ServiceToken: !Ref Token, Name: first, Version: !Ref Version}
  Second:
    Type: AWS::CloudFormation::CustomResource
    Properties: {ServiceToken: !Ref Token, Name: !GetAtt First.Greeting, Fail: !Ref Fail, Count: 3}
Outputs:
  Greeting: {Value: !GetAtt Second.Greeting}
  FirstId: {Value: !Ref First}
`

// startCairn runs the cairn server in-process (the same code `cairn server` runs) with state
// in a temporary directory; tlsListen "" means plain HTTP only.
func startCairn(t *testing.T, tlsListen, tlsPublicURL string) (*app.App, apiClient) {
	t.Helper()
	a, err := app.Start(bg, app.Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", TLSListen: tlsListen,
		TLSPublicURL: tlsPublicURL, NoAuth: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		if errors.Is(err, syscall.EACCES) || strings.Contains(err.Error(), "permission denied") {
			t.Skipf("cannot listen on %s (port 443 needs root; CI runs as root): %v", tlsListen, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown(bg) })
	return a, newClient(a.URL())
}

// lifecycle runs create, replacement, failed update with rollback, failed create with
// rollback, and delete against one handler, checking what the handler saw each time.
func lifecycle(t *testing.T, c apiClient, token string, log func() []seenRequest, failedID string) {
	params := map[string]string{"Token": token}
	if op := c.deploy(t, "greet", greeters, params); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v", op)
	}
	want := map[string]any{"Greeting": "hello hello first", "FirstId": "first-v1"}
	if diff := cmp.Diff(want, outputs(c.stack(t, "greet"))); diff != "" {
		t.Errorf("outputs after create: -want +got\n%s", diff)
	}
	created := log()
	if got := created[0].ResourceProperties; got["Version"] != "1" || got["ServiceToken"] != token {
		t.Errorf("CloudFormation stringifies properties and includes ServiceToken: %v", got)
	}

	// A new Version makes First's handler return a new physical id: replacement. The old
	// copy is deleted only after the whole update succeeded.
	params["Version"] = "2"
	if op := c.deploy(t, "greet", greeters, params); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("replace: %+v", op)
	}
	if diff := cmp.Diff([]string{"Update First first-v1", "Delete First first-v1"}, summary(log()[len(created):])); diff != "" {
		t.Errorf("replacement requests: -want +got\n%s", diff)
	}
	if got := outputs(c.stack(t, "greet"))["FirstId"]; got != "first-v2" {
		t.Errorf("FirstId after replacement = %v", got)
	}

	// A failing update rolls back with properties swapped.
	before := len(log())
	params["Fail"] = "true"
	if op := c.deploy(t, "greet", greeters, params); op.StackStatus != "UPDATE_ROLLBACK_COMPLETE" {
		t.Fatalf("failed update: %+v", op)
	}
	seen := log()[before:]
	if diff := cmp.Diff([]string{"Update Second hello first-v1", "Update Second hello first-v1"}, summary(seen)); diff != "" {
		t.Errorf("failed update requests: -want +got\n%s", diff)
	} else if seen[1].ResourceProperties["Fail"] != "false" || seen[1].OldResourceProperties["Fail"] != "true" {
		t.Errorf("rollback update must swap properties: new %v old %v", seen[1].ResourceProperties, seen[1].OldResourceProperties)
	}

	// A failing create rolls back: the failed resource gets a Delete with the id it reported.
	before = len(log())
	if op := c.deploy(t, "broken", greeters, params); op.StackStatus != "ROLLBACK_COMPLETE" {
		t.Fatalf("failed create: %+v", op)
	}
	seen = log()[before:]
	if failedID == "" && len(seen) > 1 { // aws-lambda-go falls back to the Create's RequestId
		failedID = seen[1].RequestId
	}
	want2 := []string{"Create First ", "Create Second ", "Delete Second " + failedID, "Delete First first-v2"}
	if diff := cmp.Diff(want2, summary(seen)); diff != "" {
		t.Errorf("failed create requests: -want +got\n%s", diff)
	}

	before = len(log())
	if op := c.delete(t, "greet"); op.StackStatus != "DELETE_COMPLETE" {
		t.Fatalf("delete: %+v", op)
	}
	if diff := cmp.Diff([]string{"Delete Second hello first-v1", "Delete First first-v2"}, summary(log()[before:])); diff != "" {
		t.Errorf("delete requests: -want +got\n%s", diff)
	}
}

// TestCfnResponseOverHTTPS443: cfn-response always PUTs to https://<host>:443, so cairn
// serves its response URLs with TLS on port 443 and the handler trusts cairn's own CA.
func TestCfnResponseOverHTTPS443(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.1:443"); err != nil {
		t.Skipf("port 443 is not free or not allowed here: %v", err)
	} else {
		ln.Close()
	}
	a, c := startCairn(t, "127.0.0.1:443", "https://127.0.0.1")
	if a.CAFile() == "" {
		t.Fatal("no CA file for the self-made certificate")
	}
	if _, err := os.Stat(a.CAFile()); err != nil {
		t.Fatal(err)
	}
	base, log := nodeHost(t, "NODE_EXTRA_CA_CERTS="+a.CAFile())
	lifecycle(t, c, base+"/cfn-response", log, "failed-Second")
}

// TestCustomResourceHelper: custom-resource-helper (axios) honours the URL's scheme and port,
// so plain HTTP works.
func TestCustomResourceHelper(t *testing.T) {
	_, c := startCairn(t, "", "")
	base, log := nodeHost(t)
	// custom-resource-helper reports the literal physical id "None" when a handler throws.
	lifecycle(t, c, base+"/custom-resource-helper", log, "None")
}
