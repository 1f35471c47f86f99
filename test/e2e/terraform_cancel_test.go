package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// sleepConfig is a create that takes var.d, between two quick ones.
const sleepConfig = `terraform {
  required_providers {
    time = { source = "hashicorp/time" }
  }
}
variable "d" { type = string }
resource "time_static" "a" {}
resource "time_sleep" "s" {
  create_duration = var.d
  triggers        = { after = time_static.a.id }
}
resource "time_static" "b" {
  triggers = { after = time_sleep.s.id }
}
`

// timeMirror puts the time provider in a mirror of its own, so that the processes a test
// starts are told apart from every other test's by their path.
func timeMirror(t *testing.T) (mirror, rc string) {
	mirror = providerbin.Mirror(t, providerbin.Package{Source: "registry.terraform.io/hashicorp/time",
		Version: providerbin.TimeVersion, Binary: providerbin.Time(t)})
	return mirror, providerbin.CLIConfig(t, mirror)
}

// pluginsUnder lists the pids of running processes whose command lies under dir.
func pluginsUnder(dir string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte(dir)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead; its parent has not reaped it yet
		}
		pids = append(pids, e.Name())
	}
	return pids
}

// gone waits until no process runs from under dir.
func gone(t *testing.T, dir string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		pids := pluginsUnder(dir)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider processes still running after %s: %v", within, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTerraformCtrlC: Ctrl-C during a slow create tells the provider to stop, cairn exits
// failed with no plugin left, the stack ends failed with what was done recorded, and the next
// deploy continues from that state rather than starting over.
func TestTerraformCtrlC(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	mirror, rc := timeMirror(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg")
	os.MkdirAll(cfg, 0o755)
	if err := os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(sleepConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc)
	cairn := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "--dir", filepath.Join(dir, "state"))...)
		cmd.Env = env
		return cmd
	}

	cmd := cairn("deploy", "-f", cfg, "--stack", "c", "--var", "d=5m")
	run := startLive(t, cmd, func(line string) bool {
		return strings.Contains(line, "time_sleep.s") && strings.Contains(line, "CREATE_IN_PROGRESS")
	})
	if len(pluginsUnder(mirror)) == 0 {
		t.Fatalf("no provider process is running during the create:\n%s", run.seen.String())
	}
	start := time.Now()
	run.interrupt(t)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Ctrl-C took %s to stop a 5m sleep: Stop did not reach the provider", took)
	}
	gone(t, mirror, 5*time.Second)
	out := run.seen.String()
	if !strings.Contains(out, "time_sleep.s") || !strings.Contains(out, "CREATE_FAILED") {
		t.Errorf("the cancelled create is not reported failed:\n%s", out)
	}

	statuses := func() map[string]api.Resource {
		out, err := cairn("describe", "--stack", "c", "-o", "json").Output()
		if err != nil {
			t.Fatalf("describe: %v", err)
		}
		var st api.Stack
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatal(err)
		}
		m := map[string]api.Resource{}
		for _, r := range st.Resources {
			m[r.LogicalID] = r
		}
		return m
	}
	before := statuses()
	if a := before["time_static.a"]; a.Status != "CREATE_COMPLETE" || a.PhysicalID == "" {
		t.Fatalf("time_static.a after the cancel = %+v", a)
	}
	if _, ok := before["time_static.b"]; ok {
		t.Errorf("time_static.b was created after the cancel: %+v", before["time_static.b"])
	}

	// The next deploy continues: a is kept, s and b are created.
	if out, err := cairn("deploy", "-f", cfg, "--stack", "c", "--var", "d=1ms").CombinedOutput(); err != nil {
		t.Fatalf("deploy after the cancel: %v\n%s", err, out)
	}
	after := statuses()
	if after["time_static.a"].PhysicalID != before["time_static.a"].PhysicalID {
		t.Errorf("time_static.a was recreated: %s -> %s", before["time_static.a"].PhysicalID, after["time_static.a"].PhysicalID)
	}
	for _, name := range []string{"time_sleep.s", "time_static.b"} {
		if r := after[name]; !strings.HasSuffix(r.Status, "_COMPLETE") || r.PhysicalID == "" {
			t.Errorf("%s after the second deploy = %+v", name, r)
		}
	}
	gone(t, mirror, 5*time.Second)
}

// TestTerraformKillDashNine: the server is SIGKILLed while a provider is in the middle of a
// create. The kernel kills the plugin with it (no orphan under PID 1); the restarted server
// resumes the operation from the journal, says that the interrupted create is made again
// (a plugin cannot recognise a repeated create), and finishes with every resource recorded.
func TestTerraformKillDashNine(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	mirror, rc := timeMirror(t)
	port, dir := freePort(t), t.TempDir()
	t.Setenv("TF_CLI_CONFIG_FILE", rc) // the server process inherits it
	srv := server(t, bin, port, dir)
	c := newClient("http://127.0.0.1:" + port)
	req := api.DeployRequest{Files: map[string]string{"main.tf": sleepConfig}, Parameters: map[string]string{"d": "4s"}}
	op, err := c.Deploy(bg, "k9", req)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !sleeping(t, c) {
		if time.Now().After(deadline) {
			t.Fatal("time_sleep.s never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(pluginsUnder(mirror)) == 0 {
		t.Fatal("no provider process is running during the create")
	}
	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	gone(t, mirror, 5*time.Second)

	server(t, bin, port, dir)
	if done := c.wait(t, op.ID); done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("after the restart: %+v", done)
	}
	evs, err := c.Events(bg, "k9", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resumed bool
	for _, ev := range evs {
		if ev.LogicalID == "time_sleep.s" && strings.Contains(ev.Reason, "Resuming after a restart") {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("no event says the interrupted create of time_sleep.s was made again: %+v", evs)
	}
	st := c.stack(t, "k9")
	if len(st.Resources) != 3 {
		t.Fatalf("resources = %+v", st.Resources)
	}
	for _, r := range st.Resources {
		if r.Status != "CREATE_COMPLETE" || r.PhysicalID == "" {
			t.Errorf("%s = %+v", r.LogicalID, r)
		}
	}
}

// sleeping reports whether time_sleep.s has started its create.
func sleeping(t *testing.T, c apiClient) bool {
	evs, err := c.Events(bg, "k9", 0, 0)
	if err != nil {
		return false
	}
	for _, ev := range evs {
		if ev.LogicalID == "time_sleep.s" && ev.Status == "CREATE_IN_PROGRESS" {
			return true
		}
	}
	return false
}
