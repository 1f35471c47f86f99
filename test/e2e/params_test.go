package e2e

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// remembering is a custom resource steered by two parameters given once: Name (NoEcho) and
// Version make its physical id, so a redeploy that lost them would replace it.
const remembering = `AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Token: {Type: String}
  Name: {Type: String, NoEcho: true}
  Version: {Type: Number, Default: 1}
Resources:
  First:
    Type: Custom::Greeter
    Properties: {ServiceToken: !Ref Token, Name: !Ref Name, Version: !Ref Version, Revision: r1}
Outputs:
  Name: {Value: !Ref Name}
  FirstId: {Value: !Ref First}
`

// TestCloudFormationParametersRemembered: a redeploy of a new template revision without
// any parameter keeps the values of the last deploy, NoEcho included, and the real handler
// (custom-resource-helper) receives them: an Update of the same physical id, no replacement.
// Version= then takes the Default again. The NoEcho output is masked unless asked for.
func TestCloudFormationParametersRemembered(t *testing.T) {
	_, c := startCairn(t, "", "")
	base, log := nodeHost(t)
	params := map[string]string{"Token": base + "/custom-resource-helper", "Name": "s3cret", "Version": "2"}
	if op := c.deploy(t, "remember", remembering, params); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v", op)
	}
	created := len(log())
	if op := c.deploy(t, "remember", strings.Replace(remembering, "Revision: r1", "Revision: r2", 1), nil); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("redeploy without parameters: %+v", op)
	}
	seen := log()[created:]
	if diff := cmp.Diff([]string{"Update First s3cret-v2"}, summary(seen)); diff != "" {
		t.Fatalf("redeploy without parameters: the handler's requests -want +got\n%s", diff)
	}
	if p := seen[0].ResourceProperties; p["Name"] != "s3cret" || p["Version"] != "2" || p["Revision"] != "r2" {
		t.Errorf("redeploy without parameters: the handler got %v, want the kept Name and Version", p)
	}
	if got := outputs(c.stack(t, "remember")); got["Name"] != "****" || got["FirstId"] != "s3cret-v2" {
		t.Errorf("outputs: %v, want Name masked", got)
	}
	shown, err := c.OutputsWithSecrets(bg, "remember")
	if err != nil {
		t.Fatal(err)
	}
	if got := outputs(api.Stack{Outputs: shown}); got["Name"] != "s3cret" {
		t.Errorf("outputs with secrets: %v, want Name's value", got)
	}
	for _, p := range c.stack(t, "remember").Parameters {
		if p.Name == "Name" && p.Value != "****" {
			t.Errorf("described NoEcho parameter = %q, want ****", p.Value)
		}
	}

	// Version= takes the Default: a new physical id, the old one deleted after the update.
	before := len(log())
	if op := c.deploy(t, "remember", strings.Replace(remembering, "Revision: r1", "Revision: r2", 1),
		map[string]string{"Version": ""}); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("redeploy with Version=: %+v", op)
	}
	if diff := cmp.Diff([]string{"Update First s3cret-v2", "Delete First s3cret-v2"}, summary(log()[before:])); diff != "" {
		t.Errorf("redeploy with Version=: the handler's requests -want +got\n%s", diff)
	}
	if got := outputs(c.stack(t, "remember"))["FirstId"]; got != "s3cret-v1" {
		t.Errorf("FirstId after Version= = %v, want s3cret-v1 (the Default)", got)
	}
}
