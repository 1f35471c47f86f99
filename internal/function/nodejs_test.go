package function

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const nodeHandlers = `
exports.async = async (event, context) => ({ got: event.x, left: context.getRemainingTimeInMillis() > 0,
  fn: context.functionName, id: context.awsRequestId, stream: context.logStreamName, arn: context.invokedFunctionArn,
  mem: context.memoryLimitInMB });
exports.callback = (event, context, callback) => { setTimeout(() => callback(null, "cb"), 5); };
exports.done = (event, context) => { console.log("before done"); setTimeout(() => context.done(null, { done: true }), 5); };
exports.succeed = (event, context) => context.succeed("ok");
exports.fail = (event, context) => context.fail(new Error("failed via context"));
exports.throws = async () => { throw new TypeError("bad thing"); };
exports.hang = () => { setInterval(() => {}, 1000); };
exports.empty = () => {};
`

// TestNodejsRuntime: cairn's bootstrap ends an invocation on a promise, the callback or the
// context methods, and reports errors with their type.
func TestNodejsRuntime(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(nodeHandlers), 0o644); err != nil {
		t.Fatal(err)
	}
	code := must(ZipDir(dir))
	cases := map[string]struct {
		want    string // substring of the payload
		errType string
	}{
		"async":    {want: `"got":1,"left":true,"fn":"f-async"`},
		"callback": {want: `"cb"`},
		"done":     {want: `{"done":true}`},
		"succeed":  {want: `"ok"`},
		"fail":     {errType: "Error", want: "failed via context"},
		"throws":   {errType: "TypeError", want: "bad thing"},
		"empty":    {want: "null"},
		"hang":     {errType: "Sandbox.Timedout", want: "Task timed out after 1.00 seconds"},
	}
	m := newManager(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := m.Create(context.Background(), Definition{Name: "f-" + name, Kind: KindNodejs, Handler: "index." + name,
				Timeout: time.Second}, code)
			if err != nil {
				t.Fatal(err)
			}
			r, err := m.Invoke(context.Background(), "f-"+name, []byte(`{"x":1}`))
			if err != nil {
				t.Fatal(err)
			}
			typ := ""
			if r.Error != nil {
				typ = r.Error.Type
			}
			if typ != tc.errType || !strings.Contains(string(r.Payload), tc.want) {
				t.Errorf("result: error type %q payload %s; want %q containing %s", typ, r.Payload, tc.errType, tc.want)
			}
		})
	}
}

func TestNodejsMissingModule(t *testing.T) {
	m := newManager(t)
	_, err := m.Create(context.Background(), Definition{Name: "f", Kind: KindNodejs, Handler: "main.handler"}, must(ZipDir(t.TempDir())))
	if err == nil || !strings.Contains(err.Error(), "needs the module main.js") {
		t.Fatalf("Create: %v", err)
	}
}

func TestURLFunction(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "fail") {
			http.Error(w, "nope", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	m := newManager(t)
	for _, n := range []string{"ok", "fail"} {
		if _, err := m.Create(context.Background(), Definition{Name: n, Kind: KindURL, URL: srv.URL + "/" + n}, nil); err != nil {
			t.Fatal(err)
		}
	}
	r, err := m.Invoke(context.Background(), "ok", nil)
	if err != nil || r.Error != nil || string(r.Payload) != `{"ok":true}` {
		t.Errorf("ok: %s %v %v", r.Payload, r.Error, err)
	}
	r, _ = m.Invoke(context.Background(), "fail", nil)
	if r.Error == nil || r.Error.Type != "Http.Status" || !strings.Contains(r.Error.Message, "500") {
		t.Errorf("fail: %+v", r.Error)
	}
}

// TestRuntimeAPIRefusals: the Runtime API answers like Lambda's to what no healthy runtime
// sends.
func TestRuntimeAPIRefusals(t *testing.T) {
	w := &worker{next: make(chan *invocation), stop: make(chan struct{}), exited: make(chan struct{})}
	srv := httptest.NewServer(w.runtimeAPI())
	defer srv.Close()
	inv := newInvocation([]byte(`{}`), "arn")
	inv.deadline = time.Now().Add(time.Minute)
	go func() { w.next <- inv }()
	resp, err := http.Get(srv.URL + runtimePrefix + "/invocation/next")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, h := range []string{"Lambda-Runtime-Aws-Request-Id", "Lambda-Runtime-Deadline-Ms", "Lambda-Runtime-Invoked-Function-Arn", "Lambda-Runtime-Trace-Id"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("/next lacks %s", h)
		}
	}
	cases := map[string]struct {
		path string
		body string
		want int
	}{
		"UnknownID":     {path: "/invocation/other/response", body: "{}", want: 400},
		"TooLarge":      {path: "/invocation/" + inv.id + "/response", body: strings.Repeat("x", MaxPayloadBytes+1), want: 413},
		"Extension":     {path: "/../../2020-01-01/extension/register", body: "{}", want: 404},
		"AfterTooLarge": {path: "/invocation/" + inv.id + "/response", body: "{}", want: 400},
	}
	for _, name := range []string{"UnknownID", "TooLarge", "Extension", "AfterTooLarge"} {
		tc := cases[name]
		u := srv.URL + runtimePrefix + tc.path
		if name == "Extension" {
			u = srv.URL + "/2020-01-01/extension/register"
		}
		resp, err := http.Post(u, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, tc.want)
		}
	}
	if r := <-inv.done; r.Error == nil || r.Error.Type != "Function.ResponseSizeTooLarge" {
		t.Errorf("oversized response: %+v", r.Error)
	}
}

// TestNodejsLoadErrors: a handler file that is missing, and one that exists but cannot load,
// are told apart; the latter reports Node's own error (with the require stack for a module
// that is not bundled), as the invocation's error and in the invocation's logs.
func TestNodejsLoadErrors(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	cases := map[string]struct {
		code     string // index.js; "" removes it after create
		errType  string
		want     []string // substrings of the error message; {dir} is the code directory
		wantNot  string
		wantLogs string
	}{
		"RequiresMissingModule": {
			code:     "const response = require('cfn-response');\nexports.handler = async () => 1;\n",
			errType:  "Runtime.ImportModuleError",
			want:     []string{"Error: Cannot find module 'cfn-response'\nRequire stack:\n- {dir}/index.js\n- "},
			wantLogs: "Init error Runtime.ImportModuleError: Error: Cannot find module 'cfn-response'",
		},
		"HandlerFileMissing": {
			errType:  "Runtime.ImportModuleError",
			want:     []string{"Cannot find module 'index'"},
			wantNot:  "Require stack",
			wantLogs: "Init error Runtime.ImportModuleError: Cannot find module 'index'",
		},
		"ThrowsWhileLoading": {
			code:     "throw new TypeError('no config');\n",
			errType:  "TypeError",
			want:     []string{"no config"},
			wantLogs: "Init error TypeError: no config",
		},
		"SyntaxError": {
			code:     "exports.handler = (;\n",
			errType:  "Runtime.UserCodeSyntaxError",
			want:     []string{"SyntaxError: "},
			wantLogs: "Init error Runtime.UserCodeSyntaxError: SyntaxError: ",
		},
	}
	m := newManager(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code := tc.code
			if code == "" {
				code = "exports.handler = async () => 1;\n"
			}
			if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := m.Create(context.Background(), Definition{Name: name, Kind: KindNodejs, Handler: "index.handler",
				Timeout: 5 * time.Second}, must(ZipDir(dir)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.code == "" {
				if err := os.Remove(filepath.Join(d.CodeDir, "index.js")); err != nil {
					t.Fatal(err)
				}
			}
			r, err := m.Invoke(context.Background(), name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Error == nil {
				t.Fatalf("no error; payload %s", r.Payload)
			}
			if r.Error.Type != tc.errType {
				t.Errorf("error type %q, want %q (%s)", r.Error.Type, tc.errType, r.Error.Message)
			}
			for _, w := range tc.want {
				w = strings.ReplaceAll(w, "{dir}", d.CodeDir)
				if !strings.Contains(r.Error.Message, w) {
					t.Errorf("error message %q lacks %q", r.Error.Message, w)
				}
			}
			if tc.wantNot != "" && strings.Contains(r.Error.Message, tc.wantNot) {
				t.Errorf("error message %q has %q", r.Error.Message, tc.wantNot)
			}
			logs, err := m.Logs(context.Background(), name, r.RequestID, 0)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range logs {
				lines = append(lines, e.Stream+" "+e.Message)
			}
			all := strings.Join(lines, "\n")
			if !strings.Contains(all, "stderr "+tc.wantLogs) || !strings.Contains(all, "cairn ERROR RequestId: "+r.RequestID+" "+tc.errType) {
				t.Errorf("logs of %s:\n%s\nwant stderr %q and the ERROR line", r.RequestID, all, tc.wantLogs)
			}
		})
	}
}

// TestLogsByCustomResourceRequestID: the logs of an invocation whose event is a custom-resource
// request are found by the event's RequestId (the one a stack's events show) as well as by the
// invocation's own request id; the START line names both.
func TestLogsByCustomResourceRequestID(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	code := "exports.handler = async (event) => { console.log('handling', event.LogicalResourceId); return null; };\n"
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t)
	if _, err := m.Create(context.Background(), Definition{Name: "cr", Kind: KindNodejs, Handler: "index.handler"}, must(ZipDir(dir))); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{} // custom-resource RequestId -> invocation request id
	for _, cr := range []string{"cr-req-1", "cr-req-2"} {
		ev := `{"RequestType":"Create","ResponseURL":"https://127.0.0.1/x","RequestId":"` + cr + `","LogicalResourceId":"L-` + cr + `"}`
		r, err := m.Invoke(context.Background(), "cr", []byte(ev))
		if err != nil || r.Error != nil {
			t.Fatalf("invoke: %v %v", err, r.Error)
		}
		ids[cr] = r.RequestID
	}
	if _, err := m.Invoke(context.Background(), "cr", []byte(`{"RequestId":"cr-req-1"}`)); err != nil { // not a custom-resource event
		t.Fatal(err)
	}
	for cr, id := range ids {
		byEvent, err := m.Logs(context.Background(), "cr", cr, 0)
		if err != nil {
			t.Fatal(err)
		}
		byID, _ := m.Logs(context.Background(), "cr", id, 0)
		var got []string
		for _, e := range byEvent {
			if e.RequestID != id || e.EventRequestID != cr {
				t.Errorf("%s: entry %+v is not the invocation's", cr, e)
			}
			got = append(got, e.Stream+" "+e.Message)
		}
		all := strings.Join(got, "\n")
		for _, want := range []string{"cairn START RequestId: " + id + " Version: $LATEST CustomResourceRequestId: " + cr,
			"stdout handling L-" + cr, "cairn END RequestId: " + id} {
			if !strings.Contains(all, want) {
				t.Errorf("logs of %s:\n%s\nlack %q", cr, all, want)
			}
		}
		if len(byID) != len(byEvent) {
			t.Errorf("%s: %d entries by the request id, %d by the custom-resource RequestId", cr, len(byID), len(byEvent))
		}
	}
}
