package install

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pkgRepo makes a git repository holding files and returns its directory, slash-separated.
func pkgRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return filepath.ToSlash(dir)
}

// secretDir is a directory beside the configuration that a module must not reach.
func secretDir(t *testing.T, root string) {
	t.Helper()
	p := filepath.Join(root, "..", "secret", ".aws")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "..", "main.tf"), []byte("output \"x\" {\n  value = 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A local call inside a downloaded package must stay inside that package: terraform
// resolves it within the package and reports "Local module path escapes module package"
// when it leaves (terraform only when the directory it reaches is missing; cairn always,
// as it sends every module's files to the server). Also when the manifest says otherwise.
func TestInstallLocalEscapesPackage(t *testing.T) {
	call := func(src string) string { return "module \"inner\" {\n  source = \"" + src + "\"\n}\n" }
	cases := map[string]struct {
		files   map[string]string
		subdir  string
		escapee string // "" when the call stays inside
		dir     string // the innermost module's directory when it stays inside
	}{
		"Parent":        {files: map[string]string{"main.tf": call("../secret")}, escapee: "module.m.module.inner"},
		"FarAbove":      {files: map[string]string{"main.tf": call("../../../../../../secret")}, escapee: "module.m.module.inner"},
		"FromSubdir":    {files: map[string]string{"mods/a/main.tf": call("../../../secret")}, subdir: "mods/a", escapee: "module.m.module.inner"},
		"SiblingInside": {files: map[string]string{"mods/a/main.tf": call("../b"), "mods/b/main.tf": "# b\n"}, subdir: "mods/a", dir: ".terraform/modules/m/mods/b"},
		"UpToRoot":      {files: map[string]string{"mods/a/main.tf": call("../.."), "main.tf": "# root\n"}, subdir: "mods/a", dir: ".terraform/modules/m"},
		"Chained": {files: map[string]string{"main.tf": call("./a"), "a/main.tf": strings.ReplaceAll(call("../../secret"), "inner", "deeper")},
			escapee: "module.m.module.inner.module.deeper"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			repo := pkgRepo(t, tc.files)
			source := "git::file://" + repo
			if tc.subdir != "" {
				source = "git::file://" + repo + "//" + tc.subdir
			}
			root := callDir(t, source)
			secretDir(t, root)
			res, ds := Install(context.Background(), Options{Dir: root})
			if tc.escapee == "" {
				if ds.HasErrors() {
					t.Fatal(ds.Error())
				}
				if got := res.Dirs[len(res.Dirs)-1]; got != tc.dir {
					t.Errorf("innermost module in %s, want %s", got, tc.dir)
				}
				return
			}
			want := "The given source directory for " + tc.escapee + " would be outside of its containing package \"git::file://" + repo + "\". " +
				"Local source addresses starting with \"../\" must stay within the same package that the calling module belongs to."
			if len(ds) != 1 || ds[0].Summary != "Local module path escapes module package" || ds[0].Detail != want {
				t.Fatalf("diagnostics = %v, want one escape error %q", ds, want)
			}
			if s := ds[0].Subject; s == nil || !strings.HasPrefix(s.Filename, ".terraform/modules/m/") || s.Start.Line != 2 {
				t.Errorf("error at %v, want the inner source in the package", s)
			}
			for _, d := range res.Dirs {
				if strings.HasPrefix(d, "..") {
					t.Errorf("Dirs lists %s, outside the configuration", d)
				}
			}
		})
	}
	t.Run("RecordedInManifest", func(t *testing.T) {
		repo := pkgRepo(t, map[string]string{"main.tf": call("../../../secret")})
		root := callDir(t, "git::file://"+repo)
		secretDir(t, root)
		if _, ds := Install(context.Background(), Options{Dir: root}); !ds.HasErrors() {
			t.Fatal("escape not refused")
		}
		// A manifest written by terraform init, which allows the escape when the directory exists.
		man := `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"m","Source":"git::file://` + repo + `","Dir":".terraform/modules/m"},` +
			`{"Key":"m.inner","Source":"../../../secret","Dir":"../secret"}]}`
		if err := os.WriteFile(filepath.Join(root, ".terraform", "modules", "modules.json"), []byte(man), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, ".terraform", "modules", "m"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ".terraform", "modules", "m", "main.tf"), []byte(call("../../../secret")), 0o644); err != nil {
			t.Fatal(err)
		}
		res, ds := Install(context.Background(), Options{Dir: root})
		if !ds.HasErrors() || ds[0].Summary != "Local module path escapes module package" {
			t.Errorf("installed manifest's escape = %v, want refused", ds)
		}
		for _, d := range res.Dirs {
			if strings.HasPrefix(d, "..") {
				t.Errorf("Dirs lists %s, outside the configuration", d)
			}
		}
	})
}

// A downloaded package, a registry or an X-Terraform-Get answer cannot name a directory on
// this computer: it would be linked into .terraform/modules and sent to the server.
func TestInstallRefusesLocalFilesFromRemote(t *testing.T) {
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "main.tf"), []byte("# local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	local = filepath.ToSlash(local)
	for name, src := range map[string]string{"Absolute": local, "FileURL": "file://" + local, "GitFile": "git::file://" + local} {
		t.Run("FromPackage"+name, func(t *testing.T) {
			repo := pkgRepo(t, map[string]string{"main.tf": "module \"inner\" {\n  source = \"" + src + "\"\n}\n"})
			root := callDir(t, "git::file://"+repo)
			_, ds := Install(context.Background(), Options{Dir: root})
			if !ds.HasErrors() || ds[0].Summary != "Module package on this computer" || ds[0].Subject == nil ||
				ds[0].Subject.Filename != ".terraform/modules/m/main.tf" {
				t.Fatalf("diagnostics = %v", ds)
			}
			if _, err := os.Lstat(filepath.Join(root, ".terraform", "modules", "m.inner")); err == nil {
				t.Errorf("the local directory was installed")
			}
		})
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/m/ns/mod/sys/versions":
			_, _ = w.Write([]byte(`{"modules":[{"versions":[{"version":"1.0.0"}]}]}`))
		case "/m/ns/mod/sys/1.0.0/download":
			w.Header().Set("X-Terraform-Get", "file://"+local)
			w.WriteHeader(http.StatusNoContent)
		case "/page", "/page-git":
			loc := "file://" + local
			if r.URL.Path == "/page-git" {
				loc = "git::file://" + local
			}
			w.Header().Set("X-Terraform-Get", loc)
		}
	}))
	t.Cleanup(srv.Close)
	t.Run("Registry", func(t *testing.T) {
		reg, err := NewRegistry(map[string]map[string]any{"reg.test": {"modules.v1": srv.URL + "/m/"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte("module \"m\" {\n  source  = \"reg.test/ns/mod/sys\"\n  version = \"1.0.0\"\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, ds := Install(context.Background(), Options{Dir: root, Registry: reg})
		if !ds.HasErrors() || ds[0].Summary != "Invalid package location from module registry" || !strings.Contains(ds[0].Detail, "a directory on this computer") {
			t.Fatalf("diagnostics = %v", ds)
		}
		if _, err := os.Lstat(filepath.Join(root, ".terraform", "modules", "m")); err == nil {
			t.Errorf("the local directory was installed")
		}
	})
	for _, page := range []string{"/page", "/page-git"} {
		t.Run("XTerraformGet"+page, func(t *testing.T) {
			root := callDir(t, srv.URL+page)
			_, ds := Install(context.Background(), Options{Dir: root})
			if !ds.HasErrors() || ds[0].Summary != "Failed to download module" || !strings.Contains(ds[0].Detail, "a directory on this computer") {
				t.Fatalf("diagnostics = %v", ds)
			}
			if fi, err := os.Lstat(filepath.Join(root, ".terraform", "modules", "m")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				t.Errorf("the local directory was linked")
			}
		})
	}
}
