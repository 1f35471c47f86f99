package e2e

// The file and remote-exec provisioners against the terraform CLI and a real OpenSSH server
// (test/sshd): the same configuration applied and destroyed by both tools writes the same
// files on the machine, and a connection that cannot log in fails and taints in both.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/test/sshd"
)

// sshSrc uploads content, a file, a directory and a directory's contents at creation, runs a
// remote script, and uploads a file when destroyed. The connection is the resource's, with
// self (a destroy-time provisioner may reference nothing else); the key is the file id_test.
const sshSrc = `
variable "host" {
  type = object({ host = string, port = number, user = string, dest = string })
}

resource "terraform_data" "machine" {
  input = var.host
  connection {
    type        = "ssh"
    host        = self.output.host
    port        = self.output.port
    user        = self.output.user
    private_key = file("id_test")
    timeout     = "3s"
  }

  provisioner "file" {
    content     = "hello from ${self.output.host}\n"
    destination = "${self.output.dest}/content.txt"
  }
  provisioner "file" {
    source      = "one.txt"
    destination = "${var.host.dest}/copied.txt"
  }
  provisioner "file" {
    source      = "site"
    destination = self.output.dest
  }
  provisioner "file" {
    source      = "site/"
    destination = "${self.output.dest}/flat"
    connection {
      # the provisioner's own block overrides the resource's, argument by argument
      timeout = "4s"
    }
  }
  provisioner "remote-exec" {
    inline = [
      "cd ${self.output.dest}",
      "echo ran as $(id -un) > remote.txt",
      "echo remote output line",
    ]
  }
  provisioner "file" {
    when        = destroy
    content     = "destroyed ${self.output.host}\n"
    destination = "${self.output.dest}/destroyed.txt"
  }
}
`

// sshConfigDir writes the configuration and the files it uploads into dir.
func sshConfigDir(t *testing.T, dir string, srv *sshd.Server) {
	t.Helper()
	writeConfig(t, dir, sshSrc)
	for name, text := range map[string]string{
		"id_test": srv.PrivateKey, "one.txt": "one\n",
		"site/index.html": "<p>hi</p>\n", "site/css/a.css": "a{}\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerraformFileProvisionerSSHParity(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := t.TempDir()
	rc := filepath.Join(root, "terraformrc") // terraform_data needs no provider
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tfDest, cDest := filepath.Join(root, "tf-machine"), filepath.Join(root, "cairn-machine")
	for _, d := range []string{tfDest, cDest, filepath.Join(tfDest, "flat"), filepath.Join(cDest, "flat")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sshConfigDir(t, tfDir, srv)
	sshConfigDir(t, cDir, srv)
	hostVar := func(dest string) string {
		return fmt.Sprintf(`host={host = %q, port = %d, user = %q, dest = %q}`, srv.Host, srv.Port, srv.User, dest)
	}
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	tf.env = append(tf.env, "SSH_AUTH_SOCK=") // terraform would use an agent; cairn never does
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	tf.run("init", "-input=false")

	tf.run("apply", "-auto-approve", "-input=false", "-var", hostVar(tfDest))
	cr := c.try("deploy", "-f", cDir, "--stack", "ssh", "--var", hostVar(cDest))
	if cr.err != nil {
		t.Fatalf("cairn deploy failed where terraform apply succeeded: %v\n%s", cr.err, cr.all())
	}
	want := map[string]string{
		"content.txt": "hello from 127.0.0.1\n", "copied.txt": "one\n", "site/index.html": "<p>hi</p>\n", "site/css/a.css": "a{}\n",
		"flat/index.html": "<p>hi</p>\n", "flat/css/a.css": "a{}\n", "remote.txt": "ran as " + srv.User + "\n",
	}
	if diff := cmp.Diff(want, sshd.Tree(t, tfDest)); diff != "" {
		t.Errorf("terraform's files on the machine (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sshd.Tree(t, tfDest), sshd.Tree(t, cDest)); diff != "" {
		t.Errorf("files on the machine, -terraform +cairn:\n%s", diff)
	}
	if !strings.Contains(cr.all(), "remote output line") {
		t.Errorf("cairn does not show what the remote script printed:\n%s", cr.all())
	}

	tf.run("destroy", "-auto-approve", "-input=false", "-var", hostVar(tfDest))
	if r := c.try("delete", "--stack", "ssh"); r.err != nil {
		t.Fatalf("cairn delete: %v\n%s", r.err, r.all())
	}
	if got := sshd.Tree(t, tfDest)["destroyed.txt"]; got != "destroyed 127.0.0.1\n" {
		t.Errorf("terraform's destroy-time upload = %q", got)
	}
	if diff := cmp.Diff(sshd.Tree(t, tfDest), sshd.Tree(t, cDest)); diff != "" {
		t.Errorf("files on the machine after destroy, -terraform +cairn:\n%s", diff)
	}
}

// TestTerraformFileProvisionerSSHFailureParity: a key the server refuses fails both tools
// with the same error once the connection's timeout is over, and taints the object; with the
// right key, both replace it and upload.
func TestTerraformFileProvisionerSSHFailureParity(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := t.TempDir()
	rc := filepath.Join(root, "terraformrc")
	if err := os.WriteFile(rc, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
	tfDest, cDest := filepath.Join(root, "tf-machine"), filepath.Join(root, "cairn-machine")
	for _, d := range []string{tfDest, cDest, filepath.Join(tfDest, "flat"), filepath.Join(cDest, "flat")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sshConfigDir(t, tfDir, srv)
	sshConfigDir(t, cDir, srv)
	hostVar := func(dest string) string {
		return fmt.Sprintf(`host={host = %q, port = %d, user = %q, dest = %q}`, srv.Host, srv.Port, srv.User, dest)
	}
	tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
	tf.env = append(tf.env, "SSH_AUTH_SOCK=")
	c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))
	tf.run("init", "-input=false")

	setKey := func(key string) {
		for _, d := range []string{tfDir, cDir} {
			if err := os.WriteFile(filepath.Join(d, "id_test"), []byte(key), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	setKey(srv.WrongKey)
	tr := tf.try("apply", "-auto-approve", "-input=false", "-var", hostVar(tfDest))
	cr := c.try("deploy", "-f", cDir, "--stack", "ssh", "--var", hostVar(cDest))
	if tr.err == nil || cr.err == nil {
		t.Fatalf("a refused key: terraform err %v, cairn err %v\n%s", tr.err, cr.err, cr.all())
	}
	// terraform wraps its diagnostics at 78 columns: compare with spaces folded.
	fold := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	why := regexp.MustCompile(`timeout - last error: SSH authentication failed \([^)]*\): ssh: handshake failed: ssh: unable to authenticate, attempted methods \[[^]]*\], no supported methods remain`)
	tfWhy, cWhy := why.FindString(fold(tr.all())), why.FindString(fold(cr.all()))
	if tfWhy == "" || tfWhy != cWhy {
		t.Errorf("the failure, terraform:\n%s\ncairn:\n%s", tr.all(), cr.all())
	}
	if !strings.Contains(tr.all(), "file provisioner error") || !strings.Contains(cr.all(), "file provisioner error") {
		t.Errorf("the failure does not name the file provisioner, terraform:\n%s\ncairn:\n%s", tr.all(), cr.all())
	}
	if !strings.Contains(tf.run("state", "show", "terraform_data.machine"), "tainted") {
		t.Fatal("terraform did not taint the object")
	}
	if r := attrsOf(c.describe("ssh"), "terraform_data.machine"); r.Status != "CREATE_FAILED" {
		t.Errorf("cairn's object after the failure: %+v", r)
	}
	if diff := cmp.Diff(sshd.Tree(t, tfDest), sshd.Tree(t, cDest)); diff != "" {
		t.Errorf("files on the machine after the failure, -terraform +cairn:\n%s", diff)
	}

	setKey(srv.PrivateKey)
	tf.run("apply", "-auto-approve", "-input=false", "-var", hostVar(tfDest))
	if r := c.try("deploy", "-f", cDir, "--stack", "ssh", "--var", hostVar(cDest)); r.err != nil {
		t.Fatalf("cairn deploy with the right key: %v\n%s", r.err, r.all())
	}
	if got := sshd.Tree(t, cDest)["content.txt"]; got != "hello from 127.0.0.1\n" {
		t.Errorf("cairn did not replace the tainted object and upload: content.txt = %q", got)
	}
	if diff := cmp.Diff(sshd.Tree(t, tfDest), sshd.Tree(t, cDest)); diff != "" {
		t.Errorf("files on the machine after the fix, -terraform +cairn:\n%s", diff)
	}
}
