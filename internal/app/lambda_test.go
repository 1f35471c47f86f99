package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// Inline handlers as people write them for AWS: the response module AWS gives ZipFile code,
// a physical id of their own, Data the template reads, and a record of every Delete (in the
// file the environment names) so the test sees which physical id each Delete carried.
const (
	nodeHandler = `const response = require('cfn-response');
const fs = require('fs');
exports.handler = function(event, context) {
  const name = event.ResourceProperties.Name;
  if (event.RequestType === 'Delete') {
    fs.appendFileSync(process.env.DELETES, event.PhysicalResourceId + '\n');
    return response.send(event, context, response.SUCCESS, {});
  }
  if (name === 'fail') {
    return response.send(event, context, response.FAILED, {}, 'greeting-fail');
  }
  response.send(event, context, response.SUCCESS, {Greeting: process.env.PREFIX + ' ' + name}, 'greeting-' + name);
};`
	pythonHandler = `import os
import cfnresponse

def handler(event, context):
    name = event['ResourceProperties'].get('Name')
    if event['RequestType'] == 'Delete':
        with open(os.environ['DELETES'], 'a') as f:
            f.write(event['PhysicalResourceId'] + '\n')
        cfnresponse.send(event, context, cfnresponse.SUCCESS, {})
        return
    if name == 'fail':
        cfnresponse.send(event, context, cfnresponse.FAILED, {}, 'greeting-fail', reason='asked to fail')
        return
    cfnresponse.send(event, context, cfnresponse.SUCCESS, {'Greeting': os.environ['PREFIX'] + ' ' + name}, 'greeting-' + name)
`
)

// lambdaTemplate is a function with inline code and the custom resource it serves.
func lambdaTemplate(runtime, code, deletes, prefix, name string) string {
	tmpl := map[string]any{
		"AWSTemplateFormatVersion": "2010-09-09",
		"Resources": map[string]any{
			"Fn": map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
				"Runtime": runtime, "Handler": "index.handler", "Timeout": 30, "MemorySize": 256,
				"Code":        map[string]any{"ZipFile": code},
				"Environment": map[string]any{"Variables": map[string]any{"PREFIX": prefix, "DELETES": deletes}},
			}},
			"Greeting": map[string]any{"Type": "Custom::Greeting", "Properties": map[string]any{
				"ServiceToken": map[string]any{"Fn::GetAtt": []string{"Fn", "Arn"}}, "Name": name,
			}},
		},
		"Outputs": map[string]any{
			"Greeting": map[string]any{"Value": map[string]any{"Fn::GetAtt": []string{"Greeting", "Greeting"}}},
			"Arn":      map[string]any{"Value": map[string]any{"Fn::GetAtt": []string{"Fn", "Arn"}}},
		},
	}
	b, _ := json.Marshal(tmpl)
	return string(b)
}

// TestLambdaFunctionInTemplate deploys, updates, fails (and rolls back) and deletes a stack of
// an AWS::Lambda::Function with inline code and the custom resource it serves, in Node with
// cfn-response and in Python with cfnresponse, against the real runtimes.
func TestLambdaFunctionInTemplate(t *testing.T) {
	cases := map[string]struct{ runtime, code, bin string }{
		"Node":   {"nodejs20.x", nodeHandler, "node"},
		"Python": {"python3.12", pythonHandler, "python3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(tc.bin); err != nil {
				t.Skipf("%s is not on PATH", tc.bin)
			}
			a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
			deletes := filepath.Join(t.TempDir(), "deletes")
			deploy := func(prefix, greeting string) api.Operation {
				t.Helper()
				var op api.Operation
				call(t, a, "POST", "/v1/stacks/demo/deploy", api.DeployRequest{TemplateName: "stack.json",
					Template: lambdaTemplate(tc.runtime, tc.code, deletes, prefix, greeting)}, http.StatusAccepted, &op)
				return waitFor(t, a, op.ID)
			}
			outputs := func() map[string]string {
				t.Helper()
				var outs struct{ Outputs []api.Output }
				call(t, a, "GET", "/v1/stacks/demo/outputs", nil, http.StatusOK, &outs)
				m := map[string]string{}
				for _, o := range outs.Outputs {
					m[o.Name] = fmt.Sprint(o.Value)
				}
				return m
			}
			deleted := func() []string {
				b, _ := os.ReadFile(deletes)
				return strings.Fields(string(b))
			}

			if op := deploy("hello", "world"); op.Status != "succeeded" {
				t.Fatalf("create ended %s: %s", op.Status, op.StatusReason)
			}
			outs := outputs()
			if outs["Greeting"] != "hello world" {
				t.Errorf("Greeting = %q, want %q", outs["Greeting"], "hello world")
			}
			functions := func() []api.Function {
				t.Helper()
				var list struct{ Functions []api.Function }
				call(t, a, "GET", "/v1/functions", nil, http.StatusOK, &list)
				return list.Functions
			}
			fns := functions()
			if len(fns) != 1 || outs["Arn"] != fns[0].ARN || !strings.HasPrefix(fns[0].Name, "demo-Fn-") {
				t.Fatalf("functions %+v, Arn output %q: want one function demo-Fn-..., whose ARN is the output", fns, outs["Arn"])
			}
			if diff := cmp.Diff([]string{"DELETES", "PREFIX"}, fns[0].EnvironmentKeys); diff != "" {
				t.Errorf("environment keys: -want +got:\n%s", diff)
			}
			var st api.Stack
			call(t, a, "GET", "/v1/stacks/demo", nil, http.StatusOK, &st)
			if b, _ := json.Marshal(st); strings.Contains(string(b), deletes) {
				t.Errorf("the stack's description shows an environment value: %s", b)
			}

			// An update of the code's environment and of the resource: the function is
			// updated in place (same name), the handler returns a new physical id, and the
			// old one is deleted.
			if op := deploy("bonjour", "monde"); op.Status != "succeeded" {
				t.Fatalf("update ended %s: %s", op.Status, op.StatusReason)
			}
			if got := outputs()["Greeting"]; got != "bonjour monde" {
				t.Errorf("after the update Greeting = %q, want %q", got, "bonjour monde")
			}
			fns = functions()
			if len(fns) != 1 || fns[0].ARN != outs["Arn"] {
				t.Errorf("after the update functions are %+v, want the same one updated in place", fns)
			}
			if diff := cmp.Diff([]string{"greeting-world"}, deleted()); diff != "" {
				t.Errorf("Deletes after the update: -want +got:\n%s", diff)
			}

			// A handler's FAILED rolls the update back; the failed resource's new id is deleted.
			op := deploy("hola", "fail")
			if op.Status != "failed" {
				t.Fatalf("failing update ended %s, want failed", op.Status)
			}
			call(t, a, "GET", "/v1/stacks/demo", nil, http.StatusOK, &st)
			if st.Status != "UPDATE_ROLLBACK_COMPLETE" {
				t.Errorf("after the failing update the stack is %s, want UPDATE_ROLLBACK_COMPLETE", st.Status)
			}
			if got := outputs()["Greeting"]; got != "bonjour monde" {
				t.Errorf("after the rollback Greeting = %q, want %q", got, "bonjour monde")
			}

			call(t, a, "DELETE", "/v1/stacks/demo", nil, http.StatusAccepted, &op)
			if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
				t.Fatalf("delete ended %s: %s", op.Status, op.StatusReason)
			}
			if got := deleted(); len(got) == 0 || got[len(got)-1] != "greeting-monde" {
				t.Errorf("Deletes: %v, want the last one for greeting-monde", got)
			}
			if fns = functions(); len(fns) != 0 {
				t.Errorf("after the stack's delete functions are %+v, want none", fns)
			}
		})
	}
}

// iamTemplate gives the function a role, as AWS templates do.
const iamTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Code:
        ZipFile: |
          import cfnresponse
          def handler(event, context):
              cfnresponse.send(event, context, cfnresponse.SUCCESS, {"Role": event["ResourceProperties"]["Role"]}, "thing")
  Thing:
    Type: Custom::Thing
    Properties:
      ServiceToken: !GetAtt Fn.Arn
      Role: !GetAtt Role.Arn
Outputs:
  Role: {Value: !GetAtt Thing.Role}
`

// TestIAMNoopNeedsTheFlag: without --accept-iam-noop a role is a validation error naming the
// resource and the flag; with it, the role is recorded and its Arn is what the template reads.
func TestIAMNoopNeedsTheFlag(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	var refusal api.Error
	call(t, a, "POST", "/v1/stacks/demo/deploy", api.DeployRequest{TemplateName: "stack.yaml", Template: iamTemplate},
		http.StatusBadRequest, &refusal)
	if b, _ := json.Marshal(refusal); refusal.Code != api.CodeValidationFailed || !strings.Contains(string(b), "Resources.Role") ||
		!strings.Contains(string(b), "--accept-iam-noop") {
		t.Errorf("deploy without the flag: %s; want validation_failed naming Resources.Role and --accept-iam-noop", b)
	}

	a = start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", AcceptIAMNoop: true})
	var op api.Operation
	call(t, a, "POST", "/v1/stacks/demo/deploy", api.DeployRequest{TemplateName: "stack.yaml", Template: iamTemplate},
		http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("deploy with the flag ended %s: %s", op.Status, op.StatusReason)
	}
	var outs struct{ Outputs []api.Output }
	call(t, a, "GET", "/v1/stacks/demo/outputs", nil, http.StatusOK, &outs)
	if len(outs.Outputs) != 1 || !strings.HasPrefix(fmt.Sprint(outs.Outputs[0].Value), "arn:aws:iam::123456789012:role/demo-Role-") {
		t.Errorf("outputs %+v, want the role's Arn", outs.Outputs)
	}
	call(t, a, "DELETE", "/v1/stacks/demo", nil, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("delete ended %s: %s", op.Status, op.StatusReason)
	}
}

// rosTemplate is Function Compute's form: a service, a function with inline SourceCode, and
// a ROS custom resource whose ServiceToken is the function's ARN.
const rosTemplate = `ROSTemplateFormatVersion: "2015-09-01"
Resources:
  Service:
    Type: ALIYUN::FC::Service
    Properties: {ServiceName: tools}
  Fn:
    Type: ALIYUN::FC::Function
    Properties:
      ServiceName: !GetAtt Service.ServiceName
      FunctionName: greeter
      Runtime: nodejs20
      Handler: index.handler
      Timeout: 10
      EnvironmentVariables: {PREFIX: hello}
      Code:
        SourceCode: |
          const response = require('cfn-response');
          exports.handler = (event, context) => {
            response.send(event, context, response.SUCCESS, {Greeting: process.env.PREFIX + ' ' + event.ResourceProperties.Name}, 'g1');
          };
  Greeting:
    Type: ALIYUN::ROS::CustomResource
    Properties:
      ServiceToken: !GetAtt Fn.ARN
      Timeout: 60
      Parameters: {Name: ros}
Outputs:
  Greeting: {Value: !GetAtt Greeting.Greeting}
  Token: {Value: !GetAtt Fn.ARN}
`

// TestFunctionComputeTemplate deploys and deletes the Function Compute form with the real
// Node runtime.
func TestFunctionComputeTemplate(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	var op api.Operation
	call(t, a, "POST", "/v1/stacks/fc/deploy", api.DeployRequest{TemplateName: "stack.yaml", Template: rosTemplate}, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("deploy ended %s: %s", op.Status, op.StatusReason)
	}
	var outs struct{ Outputs []api.Output }
	call(t, a, "GET", "/v1/stacks/fc/outputs", nil, http.StatusOK, &outs)
	got := map[string]string{}
	for _, o := range outs.Outputs {
		got[o.Name] = fmt.Sprint(o.Value)
	}
	if diff := cmp.Diff(map[string]string{"Greeting": "hello ros",
		"Token": "acs:fc:us-east-1:123456789012:services/tools/functions/greeter"}, got); diff != "" {
		t.Errorf("outputs: -want +got:\n%s", diff)
	}
	call(t, a, "DELETE", "/v1/stacks/fc", nil, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("delete ended %s: %s", op.Status, op.StatusReason)
	}
	var list struct{ Functions []api.Function }
	call(t, a, "GET", "/v1/functions", nil, http.StatusOK, &list)
	if len(list.Functions) != 0 {
		t.Errorf("functions after the delete: %+v", list.Functions)
	}
}
