package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
)

const rosStack = `ROSTemplateFormatVersion: '2015-09-01'
Parameters:
  Url: {Type: String}
  Size: {Type: Number, Default: 2}
Resources:
  Sync:
    Type: ALIYUN::ROS::CustomResource
    Properties:
      ServiceToken: !Sub "web[sync]:${Url}"
      Timeout: 10
      Parameters: {Size: !Ref Size, Flag: true, Nested: {A: 1}}
Outputs:
  Message: {Value: !GetAtt Sync.Message}
  All: {Value: !GetAtt Sync.Outputs}
`

// recorder is a handler that keeps every request body it got.
type recorder struct {
	mu   sync.Mutex
	reqs []map[string]any
}

func (r *recorder) add(ev map[string]any) {
	r.mu.Lock()
	r.reqs = append(r.reqs, ev)
	r.mu.Unlock()
}

func (r *recorder) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.reqs...)
}

// TestROSWebSync: a ROS custom resource with a web[sync]: token is answered in the body of
// the HTTP response; ROS passes Parameters with their JSON types and adds its own fields.
func TestROSWebSync(t *testing.T) {
	rec := &recorder{}
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		rec.add(ev)
		props, _ := ev["ResourceProperties"].(map[string]any)
		json.NewEncoder(w).Encode(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": fmt.Sprintf("sync-%v", props["Size"]),
			"Data": map[string]any{"Message": fmt.Sprintf("size %v", props["Size"])}})
	}))
	defer handler.Close()
	_, c := startCairn(t, "", "")
	params := map[string]string{"Url": handler.URL}
	if op := c.deploy(t, "ros", rosStack, params); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v", op)
	}
	want := map[string]any{"Message": "size 2", "All": map[string]any{"Message": "size 2"}}
	if diff := cmp.Diff(want, outputs(c.stack(t, "ros"))); diff != "" {
		t.Errorf("outputs: -want +got\n%s", diff)
	}
	create := rec.all()[0]
	wantProps := map[string]any{"Size": float64(2), "Flag": true, "Nested": map[string]any{"A": float64(1)}}
	if diff := cmp.Diff(wantProps, create["ResourceProperties"]); diff != "" {
		t.Errorf("ROS ResourceProperties are the Parameters, types kept: -want +got\n%s", diff)
	}
	for _, f := range []string{"ResponseURL", "IntranetResponseURL", "InnerResponseURL", "StackName", "RegionId", "ResourceOwnerId", "CallerId"} {
		if s, _ := create[f].(string); s == "" {
			t.Errorf("ROS request lacks %s: %v", f, create)
		}
	}
	if _, ok := create["ServiceToken"]; ok {
		t.Errorf("ROS requests carry no top-level ServiceToken")
	}

	params["Size"] = "3"
	if op := c.deploy(t, "ros", rosStack, params); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("update: %+v", op)
	}
	if op := c.delete(t, "ros"); op.StackStatus != "DELETE_COMPLETE" {
		t.Fatalf("delete: %+v", op)
	}
	var got []string
	for _, r := range rec.all() {
		got = append(got, fmt.Sprintf("%v %v", r["RequestType"], r["PhysicalResourceId"]))
	}
	// Size 3 returns a new physical id: a replacement, whose old copy is deleted afterwards.
	if diff := cmp.Diff([]string{"Create <nil>", "Update sync-2", "Delete sync-2", "Delete sync-3"}, got); diff != "" {
		t.Errorf("requests: -want +got\n%s", diff)
	}
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretsNeverLeak: NoEcho parameters and NoEcho response data are masked in outputs,
// events and descriptions, and neither they nor response-URL signatures reach the logs.
func TestSecretsNeverLeak(t *testing.T) {
	const secret, dataSecret = "hunter2-param-secret", "data-secret-from-handler"
	var signatures []string
	var mu sync.Mutex
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		url := ev["ResponseURL"].(string)
		mu.Lock()
		signatures = append(signatures, url[strings.Index(url, "signature=")+len("signature="):])
		mu.Unlock()
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "res-1", "NoEcho": true,
			"Data": map[string]any{"Token": dataSecret}})
		go func() {
			req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
	logs := &syncBuffer{}
	a, err := app.Start(bg, app.Config{Dir: t.TempDir(), Listen: "127.0.0.1:0", NoAuth: true,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(bg)
	c := newClient(a.URL())
	tmpl := `Parameters:
  Url: {Type: String}
  Password: {Type: String, NoEcho: true}
Resources:
  R:
    Type: Custom::Secretive
    Properties: {ServiceToken: !Ref Url, Password: !Ref Password}
Outputs:
  Pass: {Value: !Sub "p=${Password}"}
  Tok: {Value: !GetAtt R.Token}
`
	if op := c.deploy(t, "secret", tmpl, map[string]string{"Url": handler.URL, "Password": secret}); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("deploy: %+v", op)
	}
	var everything bytes.Buffer
	evs, err := c.Events(bg, "secret", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := c.Outputs(bg, "secret")
	if err != nil {
		t.Fatal(err)
	}
	json.NewEncoder(&everything).Encode([]any{c.stack(t, "secret"), evs, outs})
	if want := map[string]any{"Pass": "****", "Tok": "****"}; !cmp.Equal(want, outputs(c.stack(t, "secret"))) {
		t.Errorf("outputs = %v, want masked", outputs(c.stack(t, "secret")))
	}
	a.Shutdown(bg)
	everything.WriteString(logs.String())
	for _, s := range append([]string{secret, dataSecret}, signatures...) {
		if s != "" && strings.Contains(everything.String(), s) {
			t.Errorf("%q leaked into the API output or the logs", s)
		}
	}
	if !strings.Contains(logs.String(), "/v1/responses/") {
		t.Logf("logs:\n%s", logs.String())
		t.Errorf("expected the response endpoint's access log (without its query) to be there")
	}
}
