package function

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const pythonHandlers = `import os, time

def ctx(event, context):
    return {"got": event["x"], "left": context.get_remaining_time_in_millis() > 0, "fn": context.function_name,
            "id": context.aws_request_id, "stream": context.log_stream_name, "arn": context.invoked_function_arn,
            "mem": context.memory_limit_in_mb, "greeting": os.environ.get("GREETING")}

def throws(event, context):
    raise ValueError("bad thing")

def none(event, context):
    print("said something")

def unmarshalable(event, context):
    return {"x": object()}

def hang(event, context):
    time.sleep(60)
`

// TestPythonRuntime: cairn's Python bootstrap calls handler(event, context) with Lambda's
// context, reports errors with their type and traceback, and times out a hung handler.
func TestPythonRuntime(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.py"), []byte(pythonHandlers), 0o644); err != nil {
		t.Fatal(err)
	}
	code := must(ZipDir(dir))
	cases := map[string]struct {
		want    []string // substrings of the payload
		errType string
	}{
		"ctx":           {want: []string{`"got": 1`, `"left": true`, `"fn": "p-ctx"`, `"mem": "128"`, `"greeting": "hi"`, `"id": "`, `"arn": "arn:aws:lambda:`}},
		"throws":        {errType: "ValueError", want: []string{"bad thing", "index.py", "in throws"}},
		"none":          {want: []string{"null"}},
		"unmarshalable": {errType: "Runtime.MarshalError", want: []string{"Unable to marshal response"}},
		"hang":          {errType: "Sandbox.Timedout", want: []string{"Task timed out after 1.00 seconds"}},
	}
	m := newManager(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			timeout := 30 * time.Second // a busy machine can take seconds to start Python
			if tc.errType == "Sandbox.Timedout" {
				timeout = time.Second
			}
			_, err := m.Create(context.Background(), Definition{Name: "p-" + name, Kind: KindPython, Handler: "index." + name,
				Timeout: timeout, Env: map[string]string{"GREETING": "hi"}}, code)
			if err != nil {
				t.Fatal(err)
			}
			r, err := m.Invoke(context.Background(), "p-"+name, []byte(`{"x":1}`))
			if err != nil {
				t.Fatal(err)
			}
			typ := ""
			if r.Error != nil {
				typ = r.Error.Type
			}
			for _, want := range tc.want {
				if typ != tc.errType || !strings.Contains(string(r.Payload), want) {
					t.Errorf("result: error type %q payload %s; want %q containing %s", typ, r.Payload, tc.errType, want)
				}
			}
			if name != "none" {
				return
			}
			// The output pipe may deliver the line after the result: poll.
			var text string
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				logs, err := m.Logs(context.Background(), "p-"+name, r.RequestID, 0)
				if err != nil {
					t.Fatal(err)
				}
				if text = logText(logs); strings.Contains(text, "said something") {
					return
				}
			}
			t.Errorf("logs of p-none lack the handler's print:\n%s", text)
		})
	}
}

// TestPythonImportErrorIsReal: a handler module importing a module that is not there fails
// with Python's own message and traceback, not a generic one.
func TestPythonImportErrorIsReal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.py"), []byte("import cfnresponse_missing\n\ndef handler(e, c):\n    return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t)
	if _, err := m.Create(context.Background(), Definition{Name: "p", Kind: KindPython, Handler: "index.handler"}, must(ZipDir(dir))); err != nil {
		t.Fatal(err)
	}
	r, err := m.Invoke(context.Background(), "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Type != "Runtime.ImportModuleError" ||
		!strings.Contains(r.Error.Message, "Unable to import module 'index': No module named 'cfnresponse_missing'") {
		t.Fatalf("result %+v, want Runtime.ImportModuleError naming cfnresponse_missing", r.Error)
	}
	logs, _ := m.Logs(context.Background(), "p", r.RequestID, 0)
	if text := logText(logs); !strings.Contains(text, "No module named 'cfnresponse_missing'") || !strings.Contains(text, "index.py") {
		t.Errorf("logs lack the traceback:\n%s", text)
	}
}

// TestPythonHandlerChecked: Create refuses a handler whose module is not in the code.
func TestPythonHandlerChecked(t *testing.T) {
	m := newManager(t)
	_, err := m.Create(context.Background(), Definition{Name: "p", Kind: KindPython, Handler: "main.handler"}, must(ZipDir(t.TempDir())))
	if err == nil || !strings.Contains(err.Error(), "needs the module main.py") {
		t.Fatalf("Create: %v", err)
	}
}

// TestEnvironmentChecked: reserved and malformed names are refused, naming the variable and
// never its value.
func TestEnvironmentChecked(t *testing.T) {
	m := newManager(t)
	for name, env := range map[string]map[string]string{
		"AWS_LAMBDA_RUNTIME_API": {"AWS_LAMBDA_RUNTIME_API": "s3cret"},
		"1BAD":                   {"1BAD": "s3cret"},
		"PATH":                   {"PATH": "s3cret"},
	} {
		_, err := m.Create(context.Background(), Definition{Name: "u", Kind: KindURL, URL: "http://example.com/"}, nil)
		_ = m.Delete(context.Background(), "u")
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Create(context.Background(), Definition{Name: "p", Kind: KindPython, Handler: "index.h", Env: env}, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("env %s: Create error %v; want one naming %s without its value", name, err, name)
		}
	}
}

// TestKindOfRuntime maps Lambda's runtime names.
func TestKindOfRuntime(t *testing.T) {
	for rt, want := range map[string]Kind{"nodejs20.x": KindNodejs, "nodejs": KindNodejs, "python3.12": KindPython,
		"python": KindPython, "provided.al2023": KindProvided, "provided": KindProvided, "java21": "java21"} {
		if got := KindOfRuntime(rt); got != want {
			t.Errorf("KindOfRuntime(%q) = %q, want %q", rt, got, want)
		}
	}
}

func logText(es []LogEntry) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.Message + "\n")
	}
	return b.String()
}
