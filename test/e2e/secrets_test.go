package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/app"
)

// TestSecretsEncryptedAtRest runs `cairn server` as a process and deploys a stack with a NoEcho
// parameter and a custom resource whose handler answers NoEcho with a secret in Data: neither
// secret is in any file of the state directory (database, WAL, shared memory, key file),
// while the server runs and after it stopped. `cairn secrets rotate-key` is refused while the
// server runs, rotates once it stopped, and the restarted server reads and updates the stack.
func TestSecretsEncryptedAtRest(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	const secret, dataSecret, secret2 = "hunter2-at-rest-param", "data-at-rest-from-handler", "second-at-rest-param"
	const clear = "Custom::Secretive" // a resource type, stored in clear: shows the files are searched
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		json.NewDecoder(r.Body).Decode(&ev)
		w.WriteHeader(http.StatusOK)
		body, _ := json.Marshal(map[string]any{"Status": "SUCCESS", "StackId": ev["StackId"], "RequestId": ev["RequestId"],
			"LogicalResourceId": ev["LogicalResourceId"], "PhysicalResourceId": "res-1", "NoEcho": true,
			"Data": map[string]any{"Token": dataSecret}})
		go func() {
			req, _ := http.NewRequest(http.MethodPut, ev["ResponseURL"].(string), bytes.NewReader(body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}))
	defer handler.Close()
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
	port, dir := freePort(t), t.TempDir()
	srv := server(t, bin, port, dir)
	c := newClient("http://127.0.0.1:" + port)
	if op := c.deploy(t, "secret", tmpl, map[string]string{"Url": handler.URL, "Password": secret}); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("deploy: %+v", op)
	}
	if want, got := map[string]any{"Pass": "****", "Tok": "****"}, outputs(c.stack(t, "secret")); !cmp.Equal(want, got) {
		t.Errorf("outputs = %v, want masked", got)
	}
	noSecretIn(t, dir, "while the server runs", clear, secret, dataSecret)

	if out, err := exec.Command(bin, "secrets", "rotate-key", "--dir", dir).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "in use") {
		t.Errorf("rotate-key while the server runs: %v\n%s\nwant a refusal", err, out)
	}
	stop(t, srv)
	noSecretIn(t, dir, "after the server stopped", clear, secret, dataSecret)

	before, _ := os.ReadFile(app.DefaultKeyFile(dir))
	out, err := exec.Command(bin, "secrets", "rotate-key", "--dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Re-encrypted") {
		t.Fatalf("rotate-key: %v\n%s", err, out)
	}
	after, _ := os.ReadFile(app.DefaultKeyFile(dir))
	if bytes.Equal(before, after) {
		t.Errorf("rotate-key left the key file as it was")
	}
	noSecretIn(t, dir, "after rotate-key", clear, secret, dataSecret)

	server(t, bin, port, dir)
	if st := c.stack(t, "secret"); st.Status != "CREATE_COMPLETE" {
		t.Errorf("after rotation, the stack reads %s", st.Status)
	}
	if op := c.deploy(t, "secret", tmpl, map[string]string{"Url": handler.URL, "Password": secret2}); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("update after rotation: %+v", op)
	}
	noSecretIn(t, dir, "after an update with the rotated key", clear, secret, dataSecret, secret2)
}

// noSecretIn fails the test for each secret found in a file under dir. needle, stored in
// clear, must be found: otherwise the search proves nothing.
func noSecretIn(t *testing.T, dir, when, needle string, secrets ...string) {
	t.Helper()
	seen := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen = seen || bytes.Contains(b, []byte(needle))
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s: %q is in %s", when, s, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatalf("%s: %q, stored in clear, is in no file of %s: the search is broken", when, needle, dir)
	}
}

// stop stops a `cairn server` process as Ctrl-C does, and waits for it to end.
func stop(t *testing.T, srv *exec.Cmd) {
	t.Helper()
	if err := srv.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("cairn server after Ctrl-C: %v", err)
	}
}
