package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// binDir holds the cairn binary built for this run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildCairn builds the cairn binary once per test run.
var buildCairn = sync.OnceValues(func() (string, error) {
	var err error
	if binDir, err = os.MkdirTemp("", "cairn-e2e-"); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "cairn")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cairn").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// server runs `cairn server` as a real process until it answers /healthz.
func server(t *testing.T, bin, port, dir string) *exec.Cmd {
	t.Helper()
	base := "http://127.0.0.1:" + port
	cmd := exec.Command(bin, "server", "--listen", "127.0.0.1:"+port, "--public-url", base, "--dir", dir, "--no-auth")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", out.String())
		}
	})
	for i := 0; i < 300; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return cmd
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("cairn server did not come up:\n%s", out.String())
	return nil
}

const chain3 = `Parameters:
  Url: {Type: String}
Resources:
  A: {Type: Custom::Step, Properties: {ServiceToken: !Ref Url}}
  B: {Type: Custom::Step, Properties: {ServiceToken: !Ref Url, After: !GetAtt A.Value}}
  C: {Type: Custom::Step, Properties: {ServiceToken: !Ref Url, After: !GetAtt B.Value}}
`

// TestKillDashNineResumes: the server is SIGKILLed while B's handler holds its answer. The
// handler answers while the server is down (and keeps trying, as a patient handler does); the
// server restarts on the same port and state, accepts the answer at the same ResponseURL
// (its signing key is persisted), resumes the operation from the journal and finishes it:
// every resource created exactly once, none orphaned.
func TestKillDashNineResumes(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	creates := map[string][]string{} // logical id -> RequestIds of Create requests
	heldB := make(chan map[string]any, 1)
	respond := func(ev map[string]any) error {
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": fmt.Sprint(ev["LogicalResourceId"], "-phys"),
			"Data": map[string]any{"Value": fmt.Sprint(ev["LogicalResourceId"], "-value")}})
		req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		name := fmt.Sprint(ev["LogicalResourceId"])
		mu.Lock()
		if ev["RequestType"] == "Create" {
			creates[name] = append(creates[name], fmt.Sprint(ev["RequestId"]))
		}
		first := len(creates[name]) == 1
		mu.Unlock()
		if name == "B" && first {
			heldB <- ev // the test answers this one itself, around the crash
			return
		}
		go respond(ev)
	}))
	defer handler.Close()

	port, dir := freePort(t), t.TempDir()
	srv := server(t, bin, port, dir)
	c := newClient("http://127.0.0.1:" + port)
	req := api.DeployRequest{Template: chain3, Parameters: map[string]string{"Url": handler.URL}}
	op, err := c.Deploy(bg, "crash", req)
	if err != nil {
		t.Fatal(err)
	}
	var evB map[string]any
	select {
	case evB = <-heldB:
	case <-time.After(30 * time.Second):
		t.Fatal("B's request never came")
	}

	// A second operation on the busy stack is refused (409 stack_busy) and says who holds it.
	_, err = c.Deploy(bg, "crash", req)
	var busy *api.Error
	if !errors.As(err, &busy) || busy.Code != api.CodeStackBusy || !strings.Contains(busy.Message, "stack crash is busy with operation "+op.ID+" (deploy) since ") {
		t.Errorf("second deploy: %v", err)
	}

	if err := srv.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
		t.Fatal(err)
	}
	srv.Wait()
	if err := respond(evB); err == nil {
		t.Fatal("the response was accepted by a dead server")
	}
	server(t, bin, port, dir)
	deadline := time.Now().Add(30 * time.Second)
	for err := respond(evB); err != nil; err = respond(evB) { // the patient handler retries
		if time.Now().After(deadline) {
			t.Fatalf("B's response was never accepted after the restart: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if done := c.wait(t, op.ID); done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("after restart: %+v", done)
	}
	mu.Lock()
	for _, name := range []string{"A", "B", "C"} {
		ids := creates[name]
		if len(ids) == 0 {
			t.Errorf("%s was never created", name)
		}
		for _, id := range ids[1:] {
			if id != ids[0] { // a resumed call may be re-sent, but only as the same request
				t.Errorf("%s created twice, by requests %v", name, ids)
			}
		}
	}
	mu.Unlock()
	st := c.stack(t, "crash")
	var got []string
	for _, r := range st.Resources {
		got = append(got, r.LogicalID+"="+r.PhysicalID+" "+r.Status)
	}
	want := []string{"A=A-phys CREATE_COMPLETE", "B=B-phys CREATE_COMPLETE", "C=C-phys CREATE_COMPLETE"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resources after resume = %v, want %v", got, want)
	}
}
