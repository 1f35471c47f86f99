// Command lambdabootstrap is a custom-resource handler written as for AWS Lambda: an
// unmodified aws-lambda-go cfn.LambdaWrap handler started with lambda.Start, no HTTP wrapper.
// cairn runs it as the bootstrap of a `provided` function. It prints each event on a line
// starting "SEEN " so that the test can read what it got from the function's logs.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
)

func greeter(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
	p := ev.ResourceProperties
	if ev.RequestType == cfn.RequestDelete {
		return ev.PhysicalResourceID, nil, nil
	}
	if p["Fail"] == "true" {
		return "", nil, errors.New("asked to fail")
	}
	version := fmt.Sprint(p["Version"])
	if p["Version"] == nil {
		version = "1"
	}
	return fmt.Sprintf("%v-v%s", p["Name"], version), map[string]any{"Greeting": fmt.Sprintf("hello %v", p["Name"]), "Version": version}, nil
}

func main() {
	wrapped := cfn.LambdaWrap(greeter)
	lambda.Start(func(ctx context.Context, ev cfn.Event) (string, error) {
		b, _ := json.Marshal(map[string]any{"RequestType": ev.RequestType, "LogicalResourceId": ev.LogicalResourceID,
			"PhysicalResourceId": ev.PhysicalResourceID, "RequestId": ev.RequestID,
			"ResourceProperties": ev.ResourceProperties, "OldResourceProperties": ev.OldResourceProperties})
		fmt.Println("SEEN " + string(b))
		return wrapped(ctx, ev)
	})
}
