package app

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// TestDeployCustomResourceOverHTTPS runs the whole path a cfn-response handler takes: cairn
// POSTs the request to the handler, the handler PUTs its answer to the HTTPS ResponseURL
// trusting only cairn's CA, and the stack's outputs carry the handler's Data.
func TestDeployCustomResourceOverHTTPS(t *testing.T) {
	a := start(t, Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", TLSListen: "127.0.0.1:0"})
	pem, err := os.ReadFile(a.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer trusting.CloseIdleConnections()

	urls := make(chan string, 4)
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.WriteHeader(http.StatusOK) // answer the invocation, then PUT the result, as Lambda does
		go func() {
			url, _ := ev["ResponseURL"].(string)
			urls <- url
			body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": "thing-1",
				"StackId": ev["StackId"], "RequestId": ev["RequestId"], "LogicalResourceId": ev["LogicalResourceId"],
				"Data": map[string]string{"Greeting": "hi"}})
			req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "")
			resp, err := trusting.Do(req)
			if err != nil {
				t.Errorf("PUT to the ResponseURL: %v", err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("PUT to the ResponseURL answered %d, want 200", resp.StatusCode)
			}
		}()
	}))
	defer handler.Close()

	tmpl := fmt.Sprintf(`{"AWSTemplateFormatVersion": "2010-09-09",
		"Resources": {"Thing": {"Type": "Custom::Thing", "Properties": {"ServiceToken": %q, "Name": "hello"}}},
		"Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Thing", "Greeting"]}}}}`, handler.URL+"/")

	var op api.Operation
	call(t, a, "POST", "/v1/stacks/demo/deploy", api.DeployRequest{TemplateName: "stack.json", Template: tmpl}, http.StatusAccepted, &op)
	op = waitFor(t, a, op.ID)
	if op.Status != "succeeded" {
		t.Fatalf("deploy ended %s: %s", op.Status, op.StatusReason)
	}
	if url := <-urls; !strings.HasPrefix(url, a.TLSURL()+"/v1/responses/") {
		t.Errorf("ResponseURL = %q, want one under %s/v1/responses/", url, a.TLSURL())
	}

	var outs struct{ Outputs []api.Output }
	call(t, a, "GET", "/v1/stacks/demo/outputs", nil, http.StatusOK, &outs)
	if diff := cmp.Diff([]api.Output{{Name: "Greeting", Value: "hi"}}, outs.Outputs); diff != "" {
		t.Errorf("outputs: -want +got:\n%s", diff)
	}

	call(t, a, "DELETE", "/v1/stacks/demo", nil, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("delete ended %s: %s", op.Status, op.StatusReason)
	}

	// /metrics names the replica and has the provider calls and operations it ran.
	_, metrics := get(t, http.DefaultClient, a.URL()+"/metrics", a.Token())
	for _, want := range []string{
		`cairn_replica_info{database="sqlite",replica="`,
		`cairn_provider_call_duration_seconds_count{kind="create",result="ok",type="Custom::*"} 1`,
		`cairn_provider_call_duration_seconds_count{kind="delete",result="ok",type="Custom::*"} 1`,
		`cairn_operation_duration_seconds_count{kind="deploy",status="succeeded"} 1`,
		`cairn_operation_duration_seconds_count{kind="delete",status="succeeded"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// call sends a JSON request to the app's API with its token and decodes the answer.
func call(t *testing.T, a *App, method, path string, in any, wantStatus int, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.URL()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, b, wantStatus)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: cannot decode %s: %v", method, path, b, err)
	}
}

// waitFor long-polls an operation until it is no longer running.
func waitFor(t *testing.T, a *App, id string) api.Operation {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // only so that a broken run fails instead of hanging
	for {
		var op api.Operation
		call(t, a, "GET", "/v1/operations/"+id+"?wait=30s", nil, http.StatusOK, &op)
		if op.Status != "running" || time.Now().After(deadline) {
			return op
		}
	}
}
