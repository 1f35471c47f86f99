package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
)

// TestMigrateToPostgres: a SQLite state with a stack (a NoEcho parameter, a custom resource,
// events), a function with code, a token and an audit log moves into PostgreSQL; a server on
// PostgreSQL in another directory (another machine) then shows the same stack and secrets,
// honours the token, invokes the function from the code kept in the database, goes on with
// event numbers, and a deploy of the same template changes nothing (no handler call).
func TestMigrateToPostgres(t *testing.T) {
	url := pgtest.Start(t)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	var calls atomic.Int32
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		go func() {
			body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "PhysicalResourceId": "thing-1", "StackId": ev["StackId"],
				"RequestId": ev["RequestId"], "LogicalResourceId": ev["LogicalResourceId"], "Data": map[string]string{"Greeting": "hi"}})
			req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
	tmpl := fmt.Sprintf(`{"Parameters": {"Pass": {"Type": "String", "NoEcho": true}},
		"Resources": {"Thing": {"Type": "Custom::Thing", "Properties": {"ServiceToken": %q, "Pass": {"Ref": "Pass"}}}},
		"Outputs": {"Greeting": {"Value": {"Fn::GetAtt": ["Thing", "Greeting"]}}, "Pass": {"Value": {"Ref": "Pass"}}}}`, handler.URL+"/")
	deploy := api.DeployRequest{TemplateName: "stack.json", Template: tmpl, Parameters: map[string]string{"Pass": "s3cret"}}

	dirA := filepath.Join(t.TempDir(), "a")
	a, err := Start(context.Background(), Config{Dir: dirA, Listen: "127.0.0.1:0", Token: "root", SecretsKey: key})
	if err != nil {
		t.Fatal(err)
	}
	var op api.Operation
	call(t, a, "POST", "/v1/stacks/demo/deploy", deploy, http.StatusAccepted, &op)
	if op = waitFor(t, a, op.ID); op.Status != "succeeded" {
		t.Fatalf("deploy on SQLite: %+v", op)
	}
	code := pythonFunction(t)
	var fn api.Function
	call(t, a, "POST", "/v1/functions", api.CreateFunctionRequest{Name: "echo", Runtime: "python", Handler: "index.handler", Code: code},
		http.StatusCreated, &fn)
	var tok api.Token
	call(t, a, "POST", "/v1/tokens", api.TokenCreateRequest{Tenant: "alpha", Role: "viewer"}, http.StatusCreated, &tok)
	var before struct{ Outputs []api.Output }
	call(t, a, "GET", "/v1/stacks/demo/outputs?show-secrets=true", nil, http.StatusOK, &before)
	var evs struct{ Events []api.Event }
	call(t, a, "GET", "/v1/stacks/demo/events", nil, http.StatusOK, &evs)
	lastSeq := evs.Events[len(evs.Events)-1].Seq
	if err := a.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	m, err := Migrate(context.Background(), Config{Dir: dirA, SecretsKey: key}, url)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	for table, least := range map[string]int64{"stacks": 1, "resources": 1, "journal": 2, "operations": 1, "events": 3,
		"keys": 2, "custom_requests": 1, "functions": 1, "tokens": 1, "audit": 3} {
		if m.Tables[table] < least {
			t.Errorf("migrated %d rows of %s, want at least %d (all: %v)", m.Tables[table], table, least, m.Tables)
		}
	}
	if _, err := Migrate(context.Background(), Config{Dir: dirA, SecretsKey: key}, url); err == nil {
		t.Error("a second migration into the same database: want an error (it holds state)")
	}

	// Another machine: another directory, the database and the key; the old directory's
	// function code is not there.
	if err := os.RemoveAll(filepath.Join(dirA, "functions")); err != nil {
		t.Fatal(err)
	}
	b := start(t, Config{Dir: filepath.Join(t.TempDir(), "b"), Listen: "127.0.0.1:0", Token: "root", SecretsKey: key, Database: url})
	var after struct{ Outputs []api.Output }
	call(t, b, "GET", "/v1/stacks/demo/outputs?show-secrets=true", nil, http.StatusOK, &after)
	if diff := cmp.Diff(before.Outputs, after.Outputs); diff != "" {
		t.Errorf("outputs (secrets shown) after the migration: -SQLite +PostgreSQL\n%s", diff)
	}
	req, _ := http.NewRequest("GET", b.URL()+"/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the migrated token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	var inv api.InvokeResponse
	call(t, b, "POST", "/v1/functions/echo/invoke", api.InvokeRequest{Payload: json.RawMessage(`{"n":1}`)}, http.StatusOK, &inv)
	var echoed map[string]map[string]int
	if err := json.Unmarshal(inv.Payload, &echoed); err != nil || echoed["echo"]["n"] != 1 {
		t.Errorf("the function on the other machine answered %s (error %v)", inv.Payload, inv.Error)
	}
	before4 := calls.Load()
	call(t, b, "POST", "/v1/stacks/demo/deploy", deploy, http.StatusAccepted, &op)
	if op = waitFor(t, b, op.ID); op.Status != "succeeded" {
		t.Fatalf("deploy after the migration: %+v", op)
	}
	if n := calls.Load() - before4; n != 0 {
		t.Errorf("the deploy of the same template after the migration called the handler %d times, want none", n)
	}
	call(t, b, "GET", "/v1/stacks/demo/events", nil, http.StatusOK, &evs)
	if last := evs.Events[len(evs.Events)-1].Seq; last <= lastSeq {
		t.Errorf("events after the migration end at seq %d, want past %d", last, lastSeq)
	}
}

// pythonFunction is the zip of a python function that echoes its event.
func pythonFunction(t *testing.T) []byte {
	dir := t.TempDir()
	src := "def handler(event, context):\n    return {\"echo\": event}\n"
	if err := os.WriteFile(filepath.Join(dir, "index.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, err := function.ZipDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return code
}
