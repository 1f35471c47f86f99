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
