package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/app"
)

// TestSecretsRotateKey rotates the key of an in-process state: the key file ends with one new
// key, the state opens with it, and a state in use is refused.
func TestSecretsRotateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".cairn")
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start,
			Getenv: func(k string) string { return map[string]string{"CAIRN_DIR": dir}[k] }}
		code := Run(context.Background(), args, env)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := run("secrets", "rotate-key"); code != 1 || !strings.Contains(errOut, "no state in") {
		t.Errorf("rotate-key without a state: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("stacks"); code != 0 {
		t.Fatalf("stacks: exit %d\n%s%s", code, out, errOut)
	}
	keyFile := app.DefaultKeyFile(dir)
	before, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run("secrets", "rotate-key", "-o", "json")
	var rot app.Rotation
	if code != 0 || json.Unmarshal([]byte(out), &rot) != nil {
		t.Fatalf("rotate-key: exit %d\n%s%s", code, out, errOut)
	}
	after, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	keyLines := func(b []byte) (n int) {
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && !strings.HasPrefix(l, "#") {
				n++
			}
		}
		return n
	}
	if len(rot.Old) != 1 || rot.New == rot.Old[0] || rot.Values == 0 || rot.KeyFile != keyFile ||
		!strings.Contains(string(after), rot.New+" ") || strings.Contains(string(after), rot.Old[0]) ||
		!strings.Contains(string(before), rot.Old[0]+" ") || keyLines(after) != 1 {
		t.Errorf("rotate-key: %+v\nkey file before:\n%s\nafter:\n%s", rot, before, after)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file after rotation: %v, %v; want mode 0600", fi.Mode(), err)
	}
	if code, out, errOut := run("stacks"); code != 0 {
		t.Errorf("stacks after rotation: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run("secrets", "rotate-key")
	if code != 0 || !strings.Contains(out, "Re-encrypted") || !strings.Contains(out, "back it up again") {
		t.Errorf("rotate-key, text: exit %d\n%s", code, out)
	}

	a, err := app.Start(context.Background(), app.Config{Dir: dir, Listen: "127.0.0.1:0", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(context.Background())
	code, _, errOut = run("secrets", "rotate-key")
	if code != 1 || !strings.Contains(errOut, "in use") {
		t.Errorf("rotate-key while a server runs on the state: exit %d, stderr %q; want a refusal", code, errOut)
	}
	if code, _, errOut := run("secrets", "rotate-key", "--server", "http://x"); code != 2 || !strings.Contains(errOut, "not through --server") {
		t.Errorf("rotate-key --server: exit %d, stderr %q", code, errOut)
	}
}
