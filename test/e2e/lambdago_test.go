package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/cfn"
)

// TestAWSLambdaGo: an unmodified github.com/aws/aws-lambda-go/cfn handler (cfn.LambdaWrap)
// behind an HTTP ServiceToken, through the same lifecycle as the npm libraries.
func TestAWSLambdaGo(t *testing.T) {
	var mu sync.Mutex
	var seen []seenRequest
	fn := func(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
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
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev cfn.Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen = append(seen, seenRequest{RequestType: string(ev.RequestType), LogicalResourceId: ev.LogicalResourceID,
			PhysicalResourceId: ev.PhysicalResourceID, RequestId: ev.RequestID, ResourceProperties: ev.ResourceProperties,
			OldResourceProperties: ev.OldResourceProperties})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		go cfn.LambdaWrap(fn)(context.Background(), ev) // answers at the ResponseURL, as in Lambda
	}))
	defer handler.Close()
	_, c := startCairn(t, "", "")
	log := func() []seenRequest {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenRequest(nil), seen...)
	}
	// A failed Create from aws-lambda-go reports the RequestId as its physical id.
	lifecycle(t, c, handler.URL, log, "")
}
