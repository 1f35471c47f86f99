package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// lateHandler is a custom-resource handler as cfn-response-style code is: it takes each
// request, works, then PUTs its answer to the ResponseURL once, without retrying (neither the
// Node cfn-response module nor aws-lambda-go's cfn package retries). Creates are answered
// after delay, or never while hold is set; other requests at once.
type lateHandler struct {
	delay time.Duration

	mu      sync.Mutex
	hold    bool
	creates []string // RequestIds of the Creates it got
	deletes int
	puts    []string // the outcome of each PUT: an HTTP status or the error
}

func (h *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev map[string]any
	json.NewDecoder(r.Body).Decode(&ev)
	w.WriteHeader(http.StatusOK)
	h.mu.Lock()
	defer h.mu.Unlock()
	delay := time.Duration(0)
	switch ev["RequestType"] {
	case "Create":
		h.creates = append(h.creates, fmt.Sprint(ev["RequestId"]))
		if h.hold {
			return
		}
		delay = h.delay
	case "Delete":
		h.deletes++
	}
	body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
		"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "phys-1"})
	time.AfterFunc(delay, func() {
		req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
		outcome := ""
		if resp, err := http.DefaultClient.Do(req); err != nil {
			outcome = err.Error()
		} else {
			resp.Body.Close()
			outcome = resp.Status
		}
		h.mu.Lock()
		h.puts = append(h.puts, outcome)
		h.mu.Unlock()
	})
}

func (h *lateHandler) counts() (creates, deletes int, puts []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.creates), h.deletes, append([]string(nil), h.puts...)
}

// createdResources counts the distinct RequestIds of the Creates: the resources a handler that
// is idempotent per RequestId (as CloudFormation asks of handlers) creates. A process killed
// between its POST and recording it as sent has the next one deliver the same request again.
func (h *lateHandler) createdResources() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen := map[string]bool{}
	for _, id := range h.creates {
		seen[id] = true
	}
	return len(seen)
}

// killedDeploy starts an in-process `cairn deploy` of the Hello template against h in dir,
// waits until h has the Create, and kills the process with SIGKILL: nothing of it runs on.
func killedDeploy(t *testing.T, h *lateHandler, deploy func() *exec.Cmd) {
	t.Helper()
	cmd := deploy()
	_, stderr := start(t, cmd)
	deadline := time.Now().Add(30 * time.Second)
	for n, _, _ := h.counts(); n == 0; n, _, _ = h.counts() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the handler got no Create within 30 s\n%s", stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// describe returns the stack as `cairn describe -o json` shows it.
func describe(t *testing.T, dir, stack string) api.Stack {
	t.Helper()
	out, err := cairn(t, "describe", "--stack", stack, "--dir", dir, "-o", "json").Output()
	var st api.Stack
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	if err != nil {
		t.Fatalf("describe %s: %v\n%s", stack, err, out)
	}
	return st
}

// TestKillDashNineThenDeploy: an in-process `cairn deploy` is killed with SIGKILL while the
// handler works on its Create. The next `cairn deploy` in the directory listens on the same
// address (remembered in DIR/listen), so the handler's single PUT reaches it; it takes the
// dead process's operation over at once, follows it to its end, then runs its own deploy: the
// stack ends *_COMPLETE within a minute, the resource created exactly once.
func TestKillDashNineThenDeploy(t *testing.T) {
	// The handler answers 15 s after the Create: the next cairn must be listening by then
	// (build, start, take over); 5 s was too tight on a loaded 2-core machine.
	h := &lateHandler{delay: 15 * time.Second}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file, dir := writeHelloTemplate(t), filepath.Join(t.TempDir(), ".cairn")
	deploy := func() *exec.Cmd {
		return cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL)
	}
	killedDeploy(t, h, deploy)
	remembered, err := os.ReadFile(filepath.Join(dir, "listen"))
	if err != nil {
		t.Fatalf("the in-process cairn remembered no response address: %v", err)
	}

	began := time.Now()
	out, err := deploy().CombinedOutput()
	took := time.Since(began)
	if err != nil {
		t.Fatalf("the deploy after kill -9: %v after %s\n%s", err, took, out)
	}
	if took > time.Minute {
		t.Errorf("the deploy after kill -9 took %s, want under a minute", took)
	}
	if !strings.Contains(string(out), "was left running by a cairn process that ended") {
		t.Errorf("the deploy did not say it resumed the killed one's operation:\n%s", out)
	}
	st := describe(t, dir, "web")
	creates, deletes, puts := h.counts()
	if !strings.HasSuffix(st.Status, "_COMPLETE") || strings.Contains(st.Status, "ROLLBACK") || h.createdResources() != 1 || deletes != 0 ||
		len(st.Resources) != 1 || st.Resources[0].PhysicalID != "phys-1" {
		t.Errorf("after kill -9 and a deploy: stack %s, resources %+v, %d Creates and %d Deletes; want *_COMPLETE "+
			"with phys-1, created exactly once\n%s", st.Status, st.Resources, creates, deletes, out)
	}
	if creates > 1 {
		t.Logf("the killed cairn died between its POST and recording it: the Create was delivered %d times with one RequestId", creates)
	}
	if len(puts) == 0 || slices.ContainsFunc(puts, func(p string) bool { return p != "200 OK" }) {
		t.Errorf("the handler's PUTs: %q, want each accepted by the next cairn at %s", puts, strings.TrimSpace(string(remembered)))
	}
}

// TestCancelAfterKill: `cairn cancel` ends the operation of a killed in-process deploy at once
// (no lease wait): it takes the operation over, cancels it, and follows the rollback to its end.
func TestCancelAfterKill(t *testing.T) {
	h := &lateHandler{hold: true}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file, dir := writeHelloTemplate(t), filepath.Join(t.TempDir(), ".cairn")
	killedDeploy(t, h, func() *exec.Cmd {
		return cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL)
	})
	began := time.Now()
	out, err := cairn(t, "cancel", "--stack", "web", "--dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("cancel after kill -9: %v\n%s", err, out)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("cancel after kill -9 took %s", took)
	}
	if st := describe(t, dir, "web"); st.Status != "ROLLBACK_COMPLETE" || st.Operation != "" ||
		!strings.Contains(string(out), "ended failed; stack web is ROLLBACK_COMPLETE") {
		t.Errorf("after cancel: stack %s (operation %q), want ROLLBACK_COMPLETE with none running\n%s", st.Status, st.Operation, out)
	}
	out, err = cairn(t, "cancel", "--stack", "web", "--dir", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "stack web has no running operation to cancel (it is ROLLBACK_COMPLETE)") {
		t.Errorf("cancel with nothing running: %v, want exit 1 saying there is no operation\n%s", err, out)
	}
}

// TestForceUnlock: `cairn cancel --force` refuses without --yes when stdin is no terminal; with
// it, it ends the killed deploy's operation at once without rollback (no Delete), and the
// stack's event says who forced it, what was in flight, and that the state may be out of date.
func TestForceUnlock(t *testing.T) {
	h := &lateHandler{hold: true}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file, dir := writeHelloTemplate(t), filepath.Join(t.TempDir(), ".cairn")
	killedDeploy(t, h, func() *exec.Cmd {
		return cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL)
	})
	out, err := cairn(t, "cancel", "--stack", "web", "--dir", dir, "--force").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "stdin is not a terminal; add --yes") {
		t.Fatalf("cancel --force without --yes and no terminal: %v, want a refusal (exit 2)\n%s", err, out)
	}
	cmd := cairn(t, "cancel", "--stack", "web", "--dir", dir, "--force", "--yes")
	cmd.Env = append(cmd.Env, "USER=alice")
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Stack web has been unlocked") {
		t.Fatalf("cancel --force --yes: %v\n%s", err, out)
	}
	st := describe(t, dir, "web")
	if st.Status != "CREATE_FAILED" || st.Operation != "" {
		t.Errorf("after cancel --force: stack %s (operation %q), want CREATE_FAILED with none running", st.Status, st.Operation)
	}
	evOut, err := cairn(t, "events", "--stack", "web", "--dir", dir, "-o", "json").Output()
	var evs []api.Event
	if err == nil {
		err = json.Unmarshal(evOut, &evs)
	}
	if err != nil {
		t.Fatalf("events: %v\n%s", err, evOut)
	}
	var stackEvent, helloEvent *api.Event
	for i, ev := range evs {
		if ev.LogicalID == "web" && ev.Status == "CREATE_FAILED" {
			stackEvent = &evs[i]
		}
		if ev.LogicalID == "Hello" && ev.Status == "CREATE_FAILED" {
			helloEvent = &evs[i]
		}
	}
	if stackEvent == nil || helloEvent == nil {
		t.Fatalf("no CREATE_FAILED events for the stack and Hello after cancel --force:\n%s", evOut)
	}
	for _, want := range []string{"force-unlocked by alice@", "without rollback", "may no longer match", "create of Hello"} {
		if !strings.Contains(stackEvent.Reason, want) {
			t.Errorf("the stack's event %q does not say %q", stackEvent.Reason, want)
		}
	}
	if _, deletes, _ := h.counts(); deletes != 0 {
		t.Errorf("cancel --force sent %d Deletes: it must not roll back", deletes)
	}
	// The stack is usable again: the next deploy creates Hello anew.
	h.mu.Lock()
	h.hold = false
	h.mu.Unlock()
	if out, err := cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL).CombinedOutput(); err != nil {
		t.Errorf("deploy after cancel --force: %v\n%s", err, out)
	}
}

// TestStillWaitingEvent: a handler that never answers is visible early: after
// CAIRN_RESPONSE_NOTICE (a minute by default; 2 s here) the resource gets an event saying
// what cairn waits for and where, without the ResponseURL's signature, while it stays
// CREATE_IN_PROGRESS.
func TestStillWaitingEvent(t *testing.T) {
	h := &lateHandler{hold: true}
	srv := httptest.NewServer(h)
	defer srv.Close()
	file, dir := writeHelloTemplate(t), filepath.Join(t.TempDir(), ".cairn")
	cmd := cairn(t, "deploy", "-f", file, "--stack", "web", "--dir", dir, "--parameter", "Url="+srv.URL)
	cmd.Env = append(cmd.Env, "CAIRN_RESPONSE_NOTICE=2s")
	stdout, stderr := start(t, cmd)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(45 * time.Second)
	var seen strings.Builder
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("deploy ended without the notice:\n%s%s", seen.String(), stderr)
			}
			seen.WriteString(l + "\n")
			if !strings.Contains(l, "no answer after") {
				continue
			}
			remembered, _ := os.ReadFile(filepath.Join(dir, "listen"))
			_, _, _ = h.counts()
			h.mu.Lock()
			id := h.creates[0]
			h.mu.Unlock()
			where := "http://" + strings.TrimSpace(string(remembered)) + "/v1/responses/" + id
			for _, want := range []string{"Hello", "CREATE_IN_PROGRESS", "Create request", "RequestId " + id, where, "must PUT"} {
				if !strings.Contains(l, want) {
					t.Errorf("the notice line does not say %q:\n%s", want, l)
				}
			}
			if strings.Contains(l, "signature") || strings.Contains(l, "expires=") {
				t.Errorf("the notice shows the ResponseURL's signed query:\n%s", l)
			}
			return
		case <-timeout:
			t.Fatalf("no notice 45 s into the deploy:\n%s%s", seen.String(), stderr)
		}
	}
}
