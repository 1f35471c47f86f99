package e2e

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestTerraformProviderWorkDir: a configuration in ./infra applied by terraform -chdir=infra
// and by cairn deploy -f ./infra from the project directory leaves hashicorp/local's files in
// the same places: providers run in the configuration's directory, as terraform runs them in
// its working directory (issue 12 item 9).
func TestTerraformProviderWorkDir(t *testing.T) {
	t.Parallel()
	providerbin.Terraform(t)
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t, providerbin.LocalRelease.Package(t)))
	const config = `resource "local_file" "module" {
  content  = "in path.module"
  filename = "${path.module}/module.txt"
}
resource "local_file" "plain" {
  content  = "relative"
  filename = "out/plain.txt"
}
`
	tfProject, cairnProject := t.TempDir(), t.TempDir()
	for _, p := range []string{tfProject, cairnProject} {
		writeConfig(t, filepath.Join(p, "infra"), config)
	}
	tf := newTFCLI(t, rc, tfProject, t.TempDir())
	tf.run("-chdir=infra", "init")
	tf.run("-chdir=infra", "apply", "-auto-approve")

	c := newCairnCLI(t, rc, t.TempDir())
	if r := execIn(cairnProject, c.env, c.bin, "deploy", "-f", "./infra", "--stack", "wd", "--dir", c.dir); r.err != nil {
		t.Fatalf("cairn deploy -f ./infra: %v\n%s", r.err, r.all())
	}
	for _, name := range []string{"infra/module.txt", "infra/out/plain.txt"} {
		want, err := os.ReadFile(filepath.Join(tfProject, name))
		if err != nil {
			t.Fatalf("terraform did not write %s: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join(cairnProject, name))
		if err != nil {
			t.Errorf("cairn did not write %s where terraform does: %v", name, err)
		} else if string(got) != string(want) {
			t.Errorf("%s = %q under cairn, %q under terraform", name, got, want)
		}
	}
	for _, stray := range []string{"module.txt", "out"} {
		if _, err := os.Stat(filepath.Join(cairnProject, stray)); err == nil {
			t.Errorf("cairn wrote %s in the CLI's directory, not the configuration's", stray)
		}
	}
}

// TestTerraformProviderWorkDirServer: against a `cairn server` (here on the same machine,
// where the client's directory exists by coincidence), providers and provisioners run in a
// directory of the operation's own holding the sent files, not in the client's directory nor
// in the server's working directory (where its state may be); a provisioner sees what
// hashicorp/local wrote there, as under terraform, and the directory is gone afterwards.
func TestTerraformProviderWorkDirServer(t *testing.T) {
	t.Parallel()
	providerbin.Terraform(t)
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t, providerbin.LocalRelease.Package(t)))
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	project, serverCwd, out := t.TempDir(), t.TempDir(), t.TempDir()
	writeConfig(t, filepath.Join(project, "infra"), `resource "local_file" "plain" {
  content  = "relative"
  filename = "out/plain.txt"
}
resource "terraform_data" "read" {
  triggers_replace = local_file.plain.id
  provisioner "local-exec" {
    command = "test -f main.tf && cat out/plain.txt > `+out+`/seen && pwd > `+out+`/pwd"
  }
}
`)
	port := freePort(t)
	base := "http://127.0.0.1:" + port
	srv := exec.Command(bin, "server", "--listen", "127.0.0.1:"+port, "--dir", filepath.Join(t.TempDir(), "state"), "--no-auth")
	srv.Dir, srv.Env = serverCwd, append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_LOG=")
	var log bytes.Buffer
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	for i := 0; ; i++ {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if i == 300 {
			t.Fatal("cairn server did not come up")
		}
		time.Sleep(50 * time.Millisecond)
	}

	if r := execIn(project, []string{"CAIRN_SERVER=" + base, "TF_CLI_CONFIG_FILE=" + rc}, bin, "deploy", "-f", "./infra", "--stack", "wd"); r.err != nil {
		t.Fatalf("cairn deploy --server: %v\n%s", r.err, r.all())
	}
	if b, err := os.ReadFile(filepath.Join(out, "seen")); err != nil || string(b) != "relative" {
		t.Errorf("the provisioner read %q (%v), want what local_file wrote in the same directory", b, err)
	}
	for _, stray := range []string{filepath.Join(project, "infra", "out"), filepath.Join(project, "out"), filepath.Join(serverCwd, "out")} {
		if _, err := os.Stat(stray); err == nil {
			t.Errorf("the server's local_file wrote %s", stray)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "pwd"))
	if dir := strings.TrimSpace(string(b)); dir == "" {
		t.Error("the provisioner did not run")
	} else {
		for i := 0; i < 100 && fileExists(dir); i++ { // removed as the run ends, just after the operation
			time.Sleep(50 * time.Millisecond)
		}
		if fileExists(dir) {
			t.Errorf("the operation's directory %s stays after it", dir)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
