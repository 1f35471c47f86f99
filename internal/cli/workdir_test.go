//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/app"
)

// TestWorkDirInProcessOnly: `cairn deploy -f ./infra` in-process runs a provisioner in ./infra,
// as `terraform -chdir=infra apply` does; against a server (`--server`), even one on this
// machine, the same deploy runs it in a directory of the run's own holding the sent files, not
// in the client's directory that the server happens to see.
func TestWorkDirInProcessOnly(t *testing.T) {
	project := t.TempDir()
	infra := filepath.Join(project, "infra")
	if err := os.Mkdir(infra, 0o755); err != nil {
		t.Fatal(err)
	}
	const config = `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "test -f main.tf && echo ran > here.txt"
  }
}
`
	if err := os.WriteFile(filepath.Join(infra, "main.tf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(vars map[string]string, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		env := Env{Stdout: &stdout, Stderr: &stderr, Start: app.Start, Getenv: func(k string) string { return vars[k] }}
		if code := Run(context.Background(), args, env); code != 0 || !strings.Contains(stdout.String(), "CREATE_COMPLETE") {
			t.Fatalf("cairn %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	}

	run(map[string]string{"CAIRN_DIR": filepath.Join(t.TempDir(), ".cairn")}, "deploy", "-f", infra, "--stack", "local")
	if b, err := os.ReadFile(filepath.Join(infra, "here.txt")); err != nil || string(b) != "ran\n" {
		t.Fatalf("in-process: here.txt in the configuration's directory = %q, %v", b, err)
	}
	os.Remove(filepath.Join(infra, "here.txt"))

	srv, err := app.Start(context.Background(), app.Config{Dir: filepath.Join(t.TempDir(), ".cairn"), Listen: "127.0.0.1:0", Token: "t0k"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	run(map[string]string{"CAIRN_SERVER": srv.URL(), "CAIRN_TOKEN": "t0k"}, "deploy", "-f", infra, "--stack", "remote")
	if _, err := os.Stat(filepath.Join(infra, "here.txt")); err == nil {
		t.Error("a server that is not the CLI's own ran the provisioner in the client's directory")
	}
}
