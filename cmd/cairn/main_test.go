package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// TestMain runs main instead of the tests when the test binary is started as cairn by one of
// them: the real signal wiring, in a process of its own.
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_AS_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// cairn returns a command that runs this test binary as cairn with args.
func cairn(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	// A cancelled Create's late answer is awaited for the notice period before the rollback's
	// Delete (customresource/late.go): short here, where the handlers never answer a held Create.
	cmd.Env = append(os.Environ(), "CAIRN_TEST_AS_MAIN=1", "CAIRN_SERVER=", "NO_COLOR=1", "CAIRN_RESPONSE_NOTICE=1s")
	return cmd
}

// start starts cmd with its stdout piped and its stderr kept; the caller kills it.
func start(t *testing.T, cmd *exec.Cmd) (stdout io.Reader, stderr *bytes.Buffer) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return stdout, stderr
}

// writeHelloTemplate writes a template of one custom resource whose ServiceToken is parameter
// Url, and returns its path.
func writeHelloTemplate(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "stack.yaml")
	tmpl := "Parameters:\n  Url: {Type: String}\nResources:\n  Hello:\n    Type: Custom::Hello\n    Properties: {ServiceToken: !Ref Url}\n"
	if err := os.WriteFile(file, []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// slowHandler is a custom-resource handler that leaves Creates unanswered while hold is set,
// as a handler still working does, and answers everything else SUCCESS at once.
type slowHandler struct {
	mu          sync.Mutex
	hold        bool
	holdDeletes bool // leave Deletes unanswered too
	creates     int
	deletes     int
}

func (h *slowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev map[string]any
	json.NewDecoder(r.Body).Decode(&ev)
	w.WriteHeader(http.StatusOK)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ev["RequestType"] {
	case "Create":
		h.creates++
		if h.hold {
			return
		}
	case "Delete":
		h.deletes++
		if h.holdDeletes {
			return
		}
	}
	body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
		"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "phys-1"})
	go func() {
		req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
}

// interrupted is what an in-process deploy did when a signal came while a handler worked.
type interrupted struct {
	Code        int    // exit code
	Announced   bool   // it said it was cancelling the operation
	Cancelled   bool   // the operation ended failed, cancelled by the user
	StackStatus string // the stack's status afterwards
	Deletes     int    // Delete requests the handler got (the rollback of the create)
	Redeploy    int    // exit code of the next deploy, the handler answering
}

// TestSignalsAsCtrlC: SIGTERM (a CI runner stopping a job) and SIGHUP (a closed terminal) sent
// to an in-process `cairn deploy` while a custom-resource handler works do what Ctrl-C does:
// cairn cancels the operation, follows it to its end (the create rolled back), exits 1, and
// leaves the stack ended, so the next deploy in the directory goes through at once.
func TestSignalsAsCtrlC(t *testing.T) {
	file := writeHelloTemplate(t)
	try := func(t *testing.T, sig os.Signal) interrupted {
		h := &slowHandler{hold: true}
		srv := httptest.NewServer(h)
		defer srv.Close()
		dir := filepath.Join(t.TempDir(), ".cairn")
		deploy := func() *exec.Cmd {
			return cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL)
		}
		cmd := deploy()
		stdout, stderr := start(t, cmd)
		defer cmd.Process.Kill()
		var seen strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() { // the event line comes once cairn follows the operation
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Hello") && strings.Contains(sc.Text(), "CREATE_IN_PROGRESS") {
				break
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for h.mu.Lock(); h.creates == 0 && time.Now().Before(deadline); h.mu.Lock() {
			h.mu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
		h.hold = false // what comes next is answered
		h.mu.Unlock()
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
		}
		err := cmd.Wait()
		var got interrupted
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			got.Code = exit.ExitCode() // -1 when a signal ended it
		} else if err != nil {
			t.Fatal(err)
		}
		got.Announced = strings.Contains(stderr.String(), "received: cancelling the operation and waiting for the providers to stop")
		got.Cancelled = strings.Contains(stderr.String(), "Operation cancelled by the user")
		out, err := cairn(t, "describe", "--stack", "web", "--dir", dir, "-o", "json").Output()
		var st api.Stack
		if err == nil {
			err = json.Unmarshal(out, &st)
		}
		if err != nil {
			t.Fatalf("describe after %v: %v\n%s", sig, err, out)
		}
		got.StackStatus = st.Status
		h.mu.Lock()
		got.Deletes = h.deletes
		h.mu.Unlock()
		redeploy := deploy()
		start := time.Now()
		if out, err := redeploy.CombinedOutput(); err != nil {
			t.Logf("deploy after %v: %v\n%s", sig, err, out)
			got.Redeploy = redeploy.ProcessState.ExitCode()
		} else if took := time.Since(start); took > 30*time.Second {
			t.Errorf("the deploy after %v took %s", sig, took)
		}
		t.Logf("%v:\n%s%s", sig, seen.String(), stderr.String())
		return got
	}
	want := try(t, os.Interrupt)
	if want != (interrupted{Code: 1, Announced: true, Cancelled: true, StackStatus: "ROLLBACK_COMPLETE", Deletes: 1}) {
		t.Fatalf("Ctrl-C during a create: %+v", want)
	}
	for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			if got := try(t, sig); got != want {
				t.Errorf("%v during a create: %+v; want what Ctrl-C does: %+v", sig, got, want)
			}
		})
	}
}

// TestSecondSignal: a second SIGTERM while cairn waits for the cancelled operation to end stops
// waiting, as a second Ctrl-C does: exit 130, the operation left to resume.
func TestSecondSignal(t *testing.T) {
	file := writeHelloTemplate(t)
	h := &slowHandler{hold: true, holdDeletes: true}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cmd := cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", filepath.Join(t.TempDir(), ".cairn"), "--parameter", "Url="+srv.URL)
	stdout, stderr := start(t, cmd)
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "DELETE_IN_PROGRESS") { // the rollback's
		if strings.Contains(sc.Text(), "Hello") && strings.Contains(sc.Text(), "CREATE_IN_PROGRESS") {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 ||
		!strings.Contains(stderr.String(), "SIGTERM received: cancelling the operation") ||
		!strings.Contains(stderr.String(), "interrupted: the operation goes on (in-process: it resumes the next time cairn runs)") {
		t.Errorf("two SIGTERMs: %v, want exit 130 after both messages\n%s", err, stderr.String())
	}
}

// TestServerStopsOnSignals: `cairn server` stops cleanly (exit 0) on SIGINT, SIGTERM and SIGHUP.
func TestServerStopsOnSignals(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := cairn(t, "server", "--listen", "127.0.0.1:0", "--no-auth", "--dir", filepath.Join(t.TempDir(), "state"))
			stdout, stderr := start(t, cmd)
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if !strings.HasPrefix(line, "cairn is serving on ") {
				t.Fatalf("cairn server printed %q (%v)\n%s", line, err, stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("cairn server after %v: %v, want a clean stop (exit 0)\n%s", sig, err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("cairn server still runs 30 s after %v", sig)
			}
		})
	}
}

// TestNohup: started with SIGHUP ignored (nohup), cairn keeps ignoring it.
func TestNohup(t *testing.T) {
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup")
	}
	cmd := cairn(t, "server", "--listen", "127.0.0.1:0", "--no-auth", "--dir", filepath.Join(t.TempDir(), "state"))
	cmd.Args = append([]string{nohup}, cmd.Args...)
	cmd.Path = nohup
	stdout, _ := start(t, cmd)
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); !strings.HasPrefix(line, "cairn is serving on ") {
		t.Fatalf("nohup cairn server printed %q (%v)", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	cmd.Process.Signal(syscall.SIGHUP)
	select {
	case err := <-done:
		t.Fatalf("nohup cairn server ended on SIGHUP: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("nohup cairn server after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nohup cairn server still runs 30 s after SIGTERM")
	}
}
