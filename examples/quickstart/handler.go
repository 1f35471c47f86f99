package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/aws/aws-lambda-go/cfn"
)

// handle is an ordinary aws-lambda-go custom-resource function: cairn calls it exactly as
// CloudFormation would, and cfn.LambdaWrap PUTs the answer to the ResponseURL.
func handle(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
	switch ev.ResourceType {
	case "Custom::RandomString":
		if ev.RequestType == cfn.RequestDelete {
			return ev.PhysicalResourceID, nil, nil
		}
		n, err := strconv.Atoi(fmt.Sprint(ev.ResourceProperties["Length"])) // CloudFormation sends "8", not 8
		if err != nil {
			return "", nil, fmt.Errorf("Length must be a number: %w", err)
		}
		if ev.RequestType == cfn.RequestUpdate && fmt.Sprint(ev.OldResourceProperties["Length"]) == fmt.Sprint(n) {
			return ev.PhysicalResourceID, map[string]any{"Value": ev.PhysicalResourceID}, nil
		}
		b := make([]byte, (n+1)/2)
		rand.Read(b)
		v := hex.EncodeToString(b)[:n]
		return v, map[string]any{"Value": v}, nil // a new id on update means replacement
	case "Custom::Greeting":
		msg := fmt.Sprintf("Hello, %s! (%s)", ev.ResourceProperties["Name"], ev.ResourceProperties["Suffix"])
		return "greeting-" + ev.LogicalResourceID, map[string]any{"Message": msg}, nil
	}
	return "", nil, fmt.Errorf("unknown resource type %s", ev.ResourceType)
}

// serve accepts cairn's requests over HTTP and answers asynchronously, as a Lambda would.
func serve(w http.ResponseWriter, r *http.Request) {
	var ev cfn.Event
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	go cfn.LambdaWrap(handle)(context.Background(), ev)
}
