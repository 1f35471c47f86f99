//go:build unix

package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// dirPlugins serves the fake provider and records the directory each instance starts in.
type dirPlugins struct {
	p    provider.Provider
	mu   sync.Mutex
	dirs []string
}

func (d *dirPlugins) Resolve(_ context.Context, reqs []*template.ProviderRequirement, _ []byte, _ bool) (map[string]engine.Plugin, []byte, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	for _, r := range reqs {
		out[r.Source] = dirPlugin{d}
	}
	return out, nil, nil
}

type dirPlugin struct{ d *dirPlugins }

func (dirPlugin) Version() string { return "1.0.0" }
func (p dirPlugin) Open(_, dir string) provider.Provider {
	p.d.mu.Lock()
	p.d.dirs = append(p.d.dirs, dir)
	p.d.mu.Unlock()
	return p.d.p
}

func (d *dirPlugins) started() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dirs...)
}

// TestRunDirectory: providers and provisioners run in the configuration's directory on the
// client only when the server is the CLI's own in-process one (Options.ClientDirs), as
// terraform runs them in its working directory. A server elsewhere, where the client's path
// may exist by coincidence, and a tenant that may not run code on the server, get a directory
// of the run's own instead (holding the configuration's files, shared by providers and
// provisioners, removed when the run ends), never the server's working directory.
func TestRunDirectory(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	const fake = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
`
	for name, tc := range map[string]struct {
		o         engine.Options
		tenant    string
		provision bool // the configuration has a local-exec provisioner
		inClient  bool // providers and provisioners run in the client's directory
	}{
		"in-process":    {o: engine.Options{ClientDirs: true}, provision: true, inClient: true},
		"remote server": {provision: true},
		"in-process, tenant without code rights": {o: engine.Options{ClientDirs: true, RunCode: func(ctx context.Context) bool { return tenant.From(ctx) == tenant.Default }},
			tenant: "acme"},
		"tenant without code rights": {o: engine.Options{RunCode: func(ctx context.Context) bool { return tenant.From(ctx) == tenant.Default }},
			tenant: "acme"},
	} {
		t.Run(name, func(t *testing.T) {
			client, out := t.TempDir(), t.TempDir()
			plugins := &dirPlugins{p: &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}}
			h := newHarness(t, nil)
			o := tc.o
			o.Store, o.Providers, o.Plugins = h.store, provider.NewRegistry(), plugins
			e, err := engine.New(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Shutdown(context.Background()) })
			h.e = e
			cfg := fake + `resource "fake_thing" "x" {
  value = "v"
`
			if tc.provision {
				cfg += `  provisioner "local-exec" {
    command = "test -f main.tf && pwd -P > ` + out + `/pwd"
  }
`
			}
			cfg += "}\n"
			if err := os.WriteFile(filepath.Join(client, "main.tf"), []byte(cfg), 0o644); err != nil { // where the client read it
				t.Fatal(err)
			}
			ctx := context.Background()
			if tc.tenant != "" {
				ctx = tenant.With(ctx, tc.tenant)
			}
			op, err := e.Deploy(ctx, "wd", api.DeployRequest{Files: map[string]string{"main.tf": cfg}, WorkDir: filepath.ToSlash(client)})
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if done, err := e.Wait(wctx, op.ID); err != nil || done.StackStatus != "CREATE_COMPLETE" {
				st, _ := e.Stack(ctx, "wd")
				t.Fatalf("deploy = %+v, %v; resources %+v", done, err, st.Resources)
			}
			dirs := plugins.started()
			if len(dirs) == 0 {
				t.Fatal("no provider started")
			}
			for _, dir := range dirs {
				switch {
				case tc.inClient && dir != client:
					t.Errorf("provider started in %q, want the client's directory %q", dir, client)
				case tc.inClient:
				case dir == "" || dir == cwd:
					t.Errorf("provider started in the server's working directory (%q)", dir)
				case dir == client:
					t.Errorf("provider started in the client's directory %q on a server that is not the client's", dir)
				}
			}
			if tc.provision {
				got := strings.TrimSpace(readFile(t, filepath.Join(out, "pwd")))
				want := dirs[len(dirs)-1]
				if real, err := filepath.EvalSymlinks(want); err == nil { // pwd -P; a made one may be gone
					want = real
				}
				if got != want {
					t.Errorf("the provisioner ran in %q, its run's providers in %q", got, want)
				}
			}
			if !tc.inClient {
				deadline := time.Now().Add(5 * time.Second)
				for _, dir := range dirs {
					for fileExists(dir) && time.Now().Before(deadline) {
						time.Sleep(20 * time.Millisecond)
					}
					if fileExists(dir) {
						t.Errorf("the run's directory %s stays after the run", dir)
					}
				}
			}
		})
	}
}

// TestRunsDirectory: with Options.RunsDir, a run's own directory is made in a private
// directory of the process under it (not in /tmp, where any user and any tenant's
// hashicorp/local could read the *.tfvars it holds), and a new engine removes what a killed
// process left there, never the directories of live ones.
func TestRunsDirectory(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	host, _ := os.Hostname()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(runs, fmt.Sprintf("%s-%d", host, gone.Process.Pid), "run-1")
	live := filepath.Join(runs, fmt.Sprintf("%s-%d", host, os.Getppid()), "run-1")
	elsewhere := filepath.Join(runs, fmt.Sprintf("%s-%d", "another-host", gone.Process.Pid), "run-1")
	for _, d := range []string{dead, live, elsewhere} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "secret.tfvars"), []byte(`password = "x"`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(runs, 0o755); err != nil {
		t.Fatal(err)
	}

	plugins := &dirPlugins{p: &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}}
	h := newHarness(t, nil)
	e, err := engine.New(engine.Options{Store: h.store, Providers: provider.NewRegistry(), Plugins: plugins, RunsDir: runs})
	if err != nil {
		t.Fatal(err)
	}
	if fileExists(dead) {
		t.Errorf("the run directory of a process that is gone stays: %s", dead)
	}
	if !fileExists(live) || !fileExists(elsewhere) {
		t.Errorf("a run directory of a live process, or of another host, was removed")
	}
	if fi, err := os.Stat(runs); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("runs directory: %v, %v; want mode 0700", fi.Mode(), err)
	}

	cfg := `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "x" {
  value = "v"
}
`
	ctx := context.Background()
	op, err := e.Deploy(ctx, "wd", api.DeployRequest{Files: map[string]string{"main.tf": cfg, "secret.tfvars": `password = "x"`}})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if done, err := e.Wait(wctx, op.ID); err != nil || done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("deploy = %+v, %v", done, err)
	}
	own := filepath.Join(runs, fmt.Sprintf("%s-%d", host, os.Getpid())) + string(filepath.Separator)
	for _, dir := range plugins.started() {
		if !strings.HasPrefix(dir, own) {
			t.Errorf("provider started in %q, want a directory under %s", dir, own)
		}
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if fileExists(own) {
		t.Errorf("this process's runs directory %s stays after the engine stopped", own)
	}
}
