package function

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRuntimeAPIConformance: aws-lambda-go's own client gets the request id, deadline,
// ARN and environment Lambda gives it, and a warm process serves the next invocation.
func TestRuntimeAPIConformance(t *testing.T) {
	m := newManager(t)
	d := create(t, m, "echo", "echo", func(d *Definition) { d.Timeout = 7 * time.Second; d.MemoryMB = 256 })
	r, out := invoke(t, m, "echo", `{"say":"hi"}`)
	if r.Error != nil {
		t.Fatalf("invoke: %v", r.Error)
	}
	if out["requestId"] != r.RequestID || r.RequestID == "" {
		t.Errorf("handler saw request id %v, result has %q", out["requestId"], r.RequestID)
	}
	if want := "arn:aws:lambda:us-east-1:123456789012:function:echo"; out["arn"] != want {
		t.Errorf("invoked ARN = %v, want %s", out["arn"], want)
	}
	if in := out["deadlineIn"].(float64); in < 5000 || in > 7000 {
		t.Errorf("deadline is %vms away, want about 7s", in)
	}
	env := out["env"].(map[string]any)
	want := map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "echo", "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": fmt.Sprint(d.MemoryMB), "AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/echo", "AWS_REGION": "us-east-1",
		"LAMBDA_TASK_ROOT": d.CodeDir, "_HANDLER": "test:echo", "TZ": ":UTC", "EXTRA": "yes"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s = %q, want %q", k, env[k], v)
		}
	}
	if s, _ := env["AWS_LAMBDA_LOG_STREAM_NAME"].(string); !strings.Contains(s, "[$LATEST]") {
		t.Errorf("log stream name %q", s)
	}
	if s, _ := env["_X_AMZN_TRACE_ID"].(string); !strings.HasPrefix(s, "Root=1-") {
		t.Errorf("trace id %q", s)
	}
	if out["cwd"] != d.CodeDir {
		t.Errorf("cwd = %v, want the code directory %s", out["cwd"], d.CodeDir)
	}
	_, again := invoke(t, m, "echo", `{}`)
	if again["pid"] != out["pid"] {
		t.Errorf("second invocation ran in process %v, want the warm process %v", again["pid"], out["pid"])
	}
}

// TestAnotherReplicaInvokes: a function created through one replica runs on another that
// shares its database but not its disk: the other unpacks the stored zip into its own
// directory, once.
func TestAnotherReplicaInvokes(t *testing.T) {
	store := &memStore{m: map[string]Definition{}}
	a, err := New(Config{Store: store, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	bDir := t.TempDir()
	b, err := New(Config{Store: store, Dir: bDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	d := create(t, a, "echo", "echo", nil)
	if err := os.RemoveAll(d.CodeDir); err != nil { // as if it were on another machine
		t.Fatal(err)
	}
	r, out := invoke(t, b, "echo", `{"say":"hi"}`)
	if r.Error != nil {
		t.Fatalf("invoke on the other replica: %v", r.Error)
	}
	want := filepath.Join(bDir, "code", filepath.Base(d.CodeDir))
	if out["cwd"] != want {
		t.Errorf("ran in %v, want the other replica's copy %s", out["cwd"], want)
	}
	if _, again := invoke(t, b, "echo", `{}`); again["pid"] != out["pid"] {
		t.Errorf("second invocation ran in process %v, want the warm process %v", again["pid"], out["pid"])
	}
}

func TestHandlerError(t *testing.T) {
	m := newManager(t)
	create(t, m, "fails", "error", nil)
	r, _ := invoke(t, m, "fails", `{}`)
	if r.Error == nil || r.Error.Message != "handler failed" || r.Error.Type != "errorString" {
		t.Fatalf("error = %+v, want the handler's errorString", r.Error)
	}
	if !strings.Contains(string(r.Payload), `"errorMessage":"handler failed"`) {
		t.Errorf("payload %s", r.Payload)
	}
}

// TestTimeoutKillsHungHandler: an invocation over the timeout fails with Lambda's reason, the
// process is killed, and the next invocation gets a new one.
func TestTimeoutKillsHungHandler(t *testing.T) {
	m := newManager(t)
	create(t, m, "slow", "sleep", func(d *Definition) { d.Timeout = time.Second })
	_, first := invoke(t, m, "slow", `{}`)
	start := time.Now()
	r, _ := invoke(t, m, "slow", `{"sleep":60000}`)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a 1s timeout took %s", took)
	}
	if r.Error == nil || r.Error.Type != "Sandbox.Timedout" || !strings.Contains(r.Error.Message, "Task timed out after 1.00 seconds") {
		t.Fatalf("error = %+v, want a timeout", r.Error)
	}
	if n := m.pools["slow"].size(); n != 0 {
		t.Errorf("%d processes left after the timeout, want 0 (killed)", n)
	}
	_, after := invoke(t, m, "slow", `{}`)
	if after["pid"] == first["pid"] {
		t.Errorf("the process that timed out (pid %v) served again", first["pid"])
	}
}

func TestHangingHandlerNeverHangsTheCaller(t *testing.T) {
	m := newManager(t)
	create(t, m, "hang", "hang", func(d *Definition) { d.Timeout = time.Second })
	done := make(chan Result)
	if _, err := m.InvokeAsync(context.Background(), "hang", nil, func(r Result) { done <- r }); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.Error == nil || r.Error.Type != "Sandbox.Timedout" {
			t.Fatalf("error = %+v", r.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the invocation of a hung handler did not end")
	}
}

func TestCrashReported(t *testing.T) {
	cases := map[string]struct{ mode, typ, msg string }{
		"Exit":  {mode: "crash", typ: "Runtime.ExitError", msg: "Runtime exited with error: exit status 3; last output: about to crash"},
		"Panic": {mode: "panic", typ: "string", msg: "boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := newManager(t)
			create(t, m, "f", tc.mode, nil)
			for i := range 2 { // the second run needs a new process
				r, _ := invoke(t, m, "f", `{}`)
				if r.Error == nil || r.Error.Type != tc.typ || !strings.Contains(r.Error.Message, tc.msg) {
					t.Fatalf("run %d: error = %+v, want %s containing %q", i, r.Error, tc.typ, tc.msg)
				}
			}
		})
	}
}

func TestMissingBootstrap(t *testing.T) {
	m := newManager(t)
	_, err := m.Create(context.Background(), Definition{Name: "x", Kind: KindProvided}, must(ZipDir(t.TempDir())))
	if err == nil || !strings.Contains(err.Error(), "bootstrap") {
		t.Fatalf("Create without bootstrap: %v", err)
	}
}

// TestConcurrencyLimit: no more processes than the limit, and invocations beyond it wait.
func TestConcurrencyLimit(t *testing.T) {
	m := newManager(t)
	create(t, m, "par", "sleep", func(d *Definition) { d.Concurrency = 2 })
	var wg sync.WaitGroup
	var mu sync.Mutex
	pids := map[float64]bool{}
	var maxSize atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				m.mu.Lock()
				p := m.pools["par"]
				m.mu.Unlock()
				if p != nil {
					if n := int64(p.size()); n > maxSize.Load() {
						maxSize.Store(n)
					}
				}
			}
		}
	}()
	start := time.Now()
	for range 6 {
		wg.Go(func() {
			r, out := invoke(t, m, "par", `{"sleep":300}`)
			if r.Error != nil {
				t.Errorf("invoke: %v", r.Error)
				return
			}
			mu.Lock()
			pids[out["pid"].(float64)] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stop)
	if len(pids) > 2 || maxSize.Load() > 2 {
		t.Errorf("%d processes served, at most %d alive at once; the limit is 2", len(pids), maxSize.Load())
	}
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("6 invocations of 300ms with 2 processes took %s, want at least 900ms", took)
	}
}

func TestLogs(t *testing.T) {
	m := newManager(t)
	create(t, m, "talk", "echo", nil)
	r1, _ := invoke(t, m, "talk", `{"say":"first line"}`)
	r2, _ := invoke(t, m, "talk", `{"say":"second line"}`)
	// The handler's output is read from its pipe while the invocation ends: like CloudWatch
	// Logs, a line may arrive a moment after the result.
	var all string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logs, err := m.Logs(context.Background(), "talk", r2.RequestID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, e := range logs {
			lines = append(lines, e.Stream+": "+e.Message)
		}
		all = strings.Join(lines, "\n")
		if strings.Contains(all, "stdout: second line") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"cairn: START RequestId: " + r2.RequestID, "stdout: second line", "cairn: END RequestId: " + r2.RequestID, "cairn: REPORT RequestId: " + r2.RequestID} {
		if !strings.Contains(all, want) {
			t.Errorf("logs of %s lack %q:\n%s", r2.RequestID, want, all)
		}
	}
	if strings.Contains(all, "first line") || strings.Contains(all, r1.RequestID) {
		t.Errorf("logs of one request show another's:\n%s", all)
	}
	every, _ := m.Logs(context.Background(), "talk", "", 0)
	tail, _ := m.Logs(context.Background(), "talk", "", 2)
	if len(every) < 8 || len(tail) != 2 || tail[1] != every[len(every)-1] {
		t.Errorf("all logs: %d entries; last 2: %v", len(every), tail)
	}
}

// A line printed just before the process asks for its next invocation is still the previous
// request's, however late cairn reads it from the pipe: many lines make the reader lag.
func TestLogsOfTheLastRequestBeforeNext(t *testing.T) {
	m := newManager(t)
	create(t, m, "chatty", "echo", nil)
	invoke(t, m, "chatty", `{"say":"first","times":2000}`)
	r2, _ := invoke(t, m, "chatty", `{"say":"second"}`)
	logs, err := m.Logs(context.Background(), "chatty", r2.RequestID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range logs {
		if e.Message == "first" {
			t.Fatalf("a line of the first request is logged under the second %s", r2.RequestID)
		}
	}
}

func TestLogsAreBounded(t *testing.T) {
	b := &logbook{dir: t.TempDir(), now: time.Now}
	line := strings.Repeat("x", 1000)
	for range 5000 {
		b.write("f", LogEntry{Stream: "stdout", Message: line})
	}
	got, err := b.read("f", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n > 2*maxLogBytes/1000 || n < maxLogBytes/1100 {
		t.Errorf("%d entries kept of 5000 of 1 KB; the bound is 2 MiB", n)
	}
}

func TestMemoryLimit(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector needs more memory than the limit under test")
	}
	m := newManager(t)
	create(t, m, "hog", "alloc", func(d *Definition) { d.MemoryMB = 128 })
	r, _ := invoke(t, m, "hog", `{}`)
	if r.Error == nil {
		t.Fatalf("a 512 MB allocation under a 128 MB limit succeeded: %s", r.Payload)
	}
	if !strings.Contains(r.Error.Message, "out of memory") && r.Error.Type != "Runtime.ExitError" {
		t.Errorf("error = %+v, want the process to run out of memory", r.Error)
	}
}
