//go:build unix

package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// provisionConfig is a configuration of terraform_data resources with provisioners that
// write into dir; it needs no provider plugin.
const provisionConfig = `
variable "dir" {}
variable "trigger" { default = "t1" }
variable "input" { default = "one" }

resource "terraform_data" "a" {
  count            = 2
  input            = "${var.input}-${count.index}"
  triggers_replace = var.trigger

  provisioner "local-exec" {
    command = "echo created ${self.output} >> ${var.dir}/created-${count.index}; echo wrote ${self.output}"
  }
  provisioner "local-exec" {
    command    = "echo about to fail; exit 7"
    on_failure = continue
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo destroyed ${self.output} ${count.index} >> $PROVISION_TEST_DIR/destroyed"
  }
}

resource "terraform_data" "b" {
  input = terraform_data.a[1].output
  provisioner "local-exec" {
    command     = "cat main.tf > /dev/null && printf '%s' \"$VALUE\" > ${var.dir}/b"
    environment = { VALUE = self.output }
  }
}

output "b" { value = terraform_data.b.output }
`

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// TestProvisioners: creation-time provisioners run after a create with self, count.index and
// the configuration's files at hand, not after an update; a replacement runs the
// destroy-time ones of the old object first; a delete runs them; on_failure = continue goes
// on; the output is streamed as events.
func TestProvisioners(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PROVISION_TEST_DIR", dir) // destroy-time provisioners see only self
	h, _ := newTFHarness(t, nil, engine.Options{})
	deploy := func(params map[string]string) api.Operation {
		t.Helper()
		params["dir"] = dir
		op, err := h.e.Deploy(context.Background(), "prov", api.DeployRequest{Files: map[string]string{"main.tf": provisionConfig}, Parameters: params})
		if err != nil {
			t.Fatal(err)
		}
		return h.wait(op.ID)
	}
	if op := deploy(map[string]string{}); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create = %+v", op)
	}
	if got := readFile(t, filepath.Join(dir, "created-1")); got != "created one-1\n" {
		t.Errorf("created-1 = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "b")); got != "one-1" {
		t.Errorf("b = %q", got)
	}
	evs, err := h.e.Events(context.Background(), "prov", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, ev := range evs {
		if ev.LogicalID == "terraform_data.a[0]" && strings.HasPrefix(ev.Status, "PROVISION") {
			seen = append(seen, ev.Status+" "+ev.Reason)
		}
	}
	want := []string{
		"PROVISIONING Provisioning with 'local-exec'...",
		`PROVISIONER_OUTPUT (local-exec): Executing: ["/bin/sh" "-c" "echo created one-0 >> ` + dir + `/created-0; echo wrote one-0"]`,
		"PROVISIONER_OUTPUT (local-exec): wrote one-0",
		"PROVISIONING Provisioning with 'local-exec'...",
		`PROVISIONER_OUTPUT (local-exec): Executing: ["/bin/sh" "-c" "echo about to fail; exit 7"]`,
		"PROVISIONER_OUTPUT (local-exec): about to fail",
	}
	if len(seen) != len(want)+1 || strings.Join(seen[:len(want)], "\n") != strings.Join(want, "\n") ||
		!strings.HasPrefix(seen[len(want)], "PROVISIONER_FAILED main.tf:14:3: local-exec provisioner error: Error running command 'echo about to fail; exit 7': exit status 7.") {
		t.Errorf("provisioner events of a[0]:\n%s\nwant:\n%s\n+ PROVISIONER_FAILED ...", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}

	// An update (input changed) runs no provisioner.
	if op := deploy(map[string]string{"input": "two"}); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("update = %+v", op)
	}
	if got := readFile(t, filepath.Join(dir, "created-0")); got != "created one-0\n" {
		t.Errorf("after an update, created-0 = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "destroyed")); got != "" {
		t.Errorf("after an update, destroyed = %q", got)
	}
	// A replacement (triggers_replace changed) destroys with the old object as self, then
	// creates and provisions the new one.
	if op := deploy(map[string]string{"input": "two", "trigger": "t2"}); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("replace = %+v", op)
	}
	if got := readFile(t, filepath.Join(dir, "created-0")); got != "created one-0\ncreated two-0\n" {
		t.Errorf("after a replacement, created-0 = %q", got)
	}
	if got := readFile(t, filepath.Join(dir, "destroyed")); !strings.Contains(got, "destroyed two-0 0\n") || !strings.Contains(got, "destroyed two-1 1\n") {
		t.Errorf("after a replacement, destroyed = %q", got)
	}
	os.Remove(filepath.Join(dir, "destroyed"))
	op, err := h.e.Delete(context.Background(), "prov", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if done := h.wait(op.ID); done.StackStatus != "DELETE_COMPLETE" {
		t.Fatalf("delete = %+v", done)
	}
	if got := readFile(t, filepath.Join(dir, "destroyed")); !strings.Contains(got, "destroyed two-0 0\n") || !strings.Contains(got, "destroyed two-1 1\n") {
		t.Errorf("after the delete, destroyed = %q", got)
	}
}

// TestProvisionerFailureTaints: a creation-time provisioner that fails (on_failure = fail)
// fails the deploy and leaves its object tainted; the next deploy replaces it.
func TestProvisionerFailureTaints(t *testing.T) {
	dir := t.TempDir()
	h, _ := newTFHarness(t, nil, engine.Options{})
	cfg := `
variable "dir" {}
resource "terraform_data" "x" {
  input = "v"
  provisioner "local-exec" {
    command = "echo ${self.id} >> ${var.dir}/ids; test -e ${var.dir}/ok"
  }
}
`
	deploy := func() api.Operation {
		t.Helper()
		op, err := h.e.Deploy(context.Background(), "taint", api.DeployRequest{Files: map[string]string{"main.tf": cfg}, Parameters: map[string]string{"dir": dir}})
		if err != nil {
			t.Fatal(err)
		}
		return h.wait(op.ID)
	}
	if op := deploy(); op.StackStatus != "CREATE_FAILED" || !strings.Contains(op.StatusReason, "terraform_data.x") {
		t.Fatalf("deploy with a failing provisioner = %+v", op)
	}
	res := h.describe("taint").Resources
	if len(res) != 1 || res[0].Status != "CREATE_FAILED" || !strings.Contains(res[0].StatusReason, "exit status 1") {
		t.Fatalf("resources = %+v", res)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if op := deploy(); !strings.HasSuffix(op.StackStatus, "_COMPLETE") {
		t.Fatalf("deploy after the fix = %+v", op)
	}
	ids := strings.Fields(readFile(t, filepath.Join(dir, "ids")))
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("the tainted object was not replaced: ids %v", ids)
	}
}

// TestProvisionerInterruptedTaints: cairn stopping while a provisioner runs (the journal
// holds its start, not its end) leaves the object tainted when the run resumes.
func TestProvisionerInterruptedTaints(t *testing.T) {
	dir := t.TempDir()
	h, _ := newTFHarness(t, nil, engine.Options{})
	first := engineOn(t, h.store, &providertest.Fake{}, engine.Options{Plugins: fakePlugins{}})
	cfg := `
variable "dir" {}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "touch ${var.dir}/started; sleep 30"
  }
}
`
	if _, err := first.Deploy(context.Background(), "crash", api.DeployRequest{Files: map[string]string{"main.tf": cfg}, Parameters: map[string]string{"dir": dir}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for readFile(t, filepath.Join(dir, "started")) == "" && !fileExists(filepath.Join(dir, "started")) {
		if time.Now().After(deadline) {
			t.Fatal("the provisioner never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	first.Shutdown(context.Background())
	e := engineOn(t, h.store, &providertest.Fake{}, engine.Options{Plugins: fakePlugins{}})
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.e = e
	st := waitStack(t, e, "crash")
	if st.Status != "CREATE_FAILED" {
		t.Fatalf("resumed stack = %+v", st)
	}
	res := st.Resources
	if len(res) != 1 || res[0].Status != "CREATE_FAILED" || !strings.Contains(res[0].StatusReason, "cairn stopped while") {
		t.Fatalf("resources = %+v", res)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// waitStack waits until stack's status is no longer in progress.
func waitStack(t *testing.T, e *engine.Engine, stack string) api.Stack {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := e.Stack(context.Background(), stack)
		if err == nil && !strings.HasSuffix(st.Status, "IN_PROGRESS") {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack %s still %s", stack, st.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestProvisionerTenantCode: a tenant that may not run code on the server gets its
// configuration with a local-exec provisioner refused before anything runs.
func TestProvisionerTenantCode(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{RunCode: func(ctx context.Context) bool { return tenant.From(ctx) == tenant.Default }})
	files := map[string]string{"main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "touch should-not-run"
  }
}
`}
	_, err := h.e.Deploy(tenant.With(context.Background(), "acme"), "code", api.DeployRequest{Files: files})
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "main.tf:2:15") || !strings.Contains(err.Error(), "--allow-tenant-code") {
		t.Fatalf("Deploy as tenant acme = %v, want a validation error at the provisioner", err)
	}
	op, err := h.e.Deploy(context.Background(), "code", api.DeployRequest{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if done := h.wait(op.ID); done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("deploy as the default tenant = %+v", done)
	}
}

// TestProvisionerWorkDir: on the CLI's in-process server, with the configuration's
// directory at hand (the request's WorkDir), commands run there, as terraform runs them in
// its working directory, and it stays (TestRunDirectory has the other servers).
func TestProvisionerWorkDir(t *testing.T) {
	dir := t.TempDir()
	h, _ := newTFHarness(t, nil, engine.Options{ClientDirs: true})
	files := map[string]string{"main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo here > relative.txt"
  }
}
`}
	op, err := h.e.Deploy(context.Background(), "wd", api.DeployRequest{Files: files, WorkDir: filepath.ToSlash(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if done := h.wait(op.ID); done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("deploy = %+v", done)
	}
	if got := readFile(t, filepath.Join(dir, "relative.txt")); got != "here\n" {
		t.Errorf("relative.txt in the configuration's directory = %q", got)
	}
}

// TestProvisionerSecretFailure: a provisioner whose configuration holds a sensitive value
// fails without the value in the stored reasons and events (terraform prints its command
// and output on the terminal; cairn stores failures where every reader of the stack sees
// them): local-exec names neither the command nor its output, the others' messages have
// the value cut out, and so do a connection's secrets.
func TestProvisionerSecretFailure(t *testing.T) {
	const secret = "hunter2-secret"
	for name, tc := range map[string]struct {
		body       string
		wantReason []string // in the failure
		wantEvent  string   // one of the events
	}{
		"command": {
			body: `provisioner "local-exec" {
    command = "echo ${var.pw}; echo ${base64encode(var.pw)}; false"
  }`,
			wantReason: []string{"main.tf:7:3: local-exec provisioner error: Error running command '(sensitive value)': exit status 1. " +
				"Output: (output suppressed due to sensitive value in config)"},
		},
		"environment, on_failure = continue": {
			body: `provisioner "local-exec" {
    command     = "echo $PW; exit 4"
    environment = { PW = var.pw }
    on_failure  = continue
  }
  provisioner "local-exec" {
    command = "false"
  }`,
			wantReason: []string{"main.tf:12:3: local-exec provisioner error: Error running command 'false': exit status 1. Output:"},
			wantEvent: "PROVISIONER_FAILED main.tf:7:3: local-exec provisioner error: Error running command 'echo $PW; exit 4': exit status 4. " +
				"Output: (output suppressed due to sensitive value in config) (on_failure = continue: going on)",
		},
		"remote-exec script name": {
			body: `provisioner "remote-exec" {
    script = "${var.pw}.sh"
    connection {
      host = "127.0.0.1"
    }
  }`,
			wantReason: []string{"remote-exec provisioner error: Failed to open script '(sensitive value)': open (sensitive value): "},
		},
		"connection host": {
			body: `provisioner "file" {
    content     = "x"
    destination = "/tmp/x"
    connection {
      host    = "${var.pw}.invalid"
      port    = 1
      timeout = "300ms"
    }
  }`,
			wantReason: []string{"file provisioner error: timeout - last error: ", "lookup (sensitive value)"},
		},
		"connection host shown by remote-exec": {
			body: `provisioner "remote-exec" {
    inline = ["true"]
    connection {
      host    = "${var.pw}.invalid"
      timeout = "300ms"
    }
  }`,
			wantReason: []string{"remote-exec provisioner error: timeout - last error: ", "lookup (sensitive value)"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, _ := newTFHarness(t, nil, engine.Options{})
			cfg := `variable "pw" {
  sensitive = true
  default   = "` + secret + `"
}
resource "terraform_data" "x" {
  input = "v"
  ` + tc.body + `
}
`
			op, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Files: map[string]string{"main.tf": cfg}})
			if err != nil {
				t.Fatal(err)
			}
			op = h.wait(op.ID)
			if op.StackStatus != "CREATE_FAILED" {
				t.Fatalf("deploy = %+v", op)
			}
			res := h.describe("s").Resources
			if len(res) != 1 {
				t.Fatalf("resources = %+v", res)
			}
			for _, want := range tc.wantReason {
				if !strings.Contains(res[0].StatusReason, want) {
					t.Errorf("reason %q does not hold %q", res[0].StatusReason, want)
				}
			}
			stored := []string{op.StatusReason, res[0].StatusReason}
			evs, err := h.e.Events(context.Background(), "s", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				stored = append(stored, ev.Status+" "+ev.Reason)
			}
			if tc.wantEvent != "" && !slices.Contains(stored, tc.wantEvent) {
				t.Errorf("no event %q", tc.wantEvent)
			}
			for _, s := range stored {
				if strings.Contains(s, secret) || strings.Contains(s, "aHVudGVyMi1zZWNyZXQ") {
					t.Errorf("stored with the secret: %s", s)
				}
			}
			if t.Failed() {
				t.Logf("stored:\n%s", strings.Join(stored, "\n"))
			}
		})
	}
}
