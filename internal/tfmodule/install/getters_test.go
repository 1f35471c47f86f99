package install

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// callDir writes a main.tf calling module "m" at source and returns its directory.
func callDir(t *testing.T, source string) string {
	t.Helper()
	dir := t.TempDir()
	src := "module \"m\" {\n  source = \"" + source + "\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// installed installs dir and returns the module's directory and the main.tf found there.
func installed(t *testing.T, dir string) (string, string) {
	t.Helper()
	res, ds := Install(context.Background(), Options{Dir: dir})
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	rel := res.Manifest["m"].Dir
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel), "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return rel, string(b)
}

// S3 and GCS packages, written any way terraform accepts, are refused at the call's source
// without a network request; so is one a registry or an X-Terraform-Get answer points to.
func TestInstallRefusesCloudStorage(t *testing.T) {
	cases := map[string]struct{ source, store string }{
		"S3Forced":    {"s3::https://s3.amazonaws.com/bucket/m.zip", "S3"},
		"S3Bare":      {"bucket.s3.eu-west-1.amazonaws.com/m.zip", "S3"},
		"GCSForced":   {"gcs::https://www.googleapis.com/storage/v1/bucket/m.zip", "GCS"},
		"GCSBare":     {"www.googleapis.com/storage/v1/bucket/m.zip//sub", "GCS"},
		"S3UpperCase": {"S3::https://s3.amazonaws.com/bucket/m.zip", "S3"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := callDir(t, tc.source)
			_, ds := Install(context.Background(), Options{Dir: dir})
			checkRefused(t, ds, tc.store, "Unsupported module source")
			if _, err := os.Stat(filepath.Join(dir, ".terraform")); err == nil {
				t.Errorf("a refused install wrote .terraform")
			}
		})
	}

	t.Run("FromRegistry", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /m/ns/mod/sys/versions", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"modules":[{"versions":[{"version":"1.0.0"}]}]}`))
		})
		mux.HandleFunc("GET /m/ns/mod/sys/1.0.0/download", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "gcs::https://www.googleapis.com/storage/v1/modules/mod.zip")
			w.WriteHeader(http.StatusNoContent)
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		reg, err := NewRegistry(map[string]map[string]any{"reg.test": {"modules.v1": srv.URL + "/m/"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, ds := Install(context.Background(), Options{Dir: configDir(t, "1.0.0"), Registry: reg})
		checkRefused(t, ds, "GCS", "Unsupported module source")
	})

	t.Run("FromXTerraformGet", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "s3::https://s3.amazonaws.com/bucket/m.zip")
		}))
		t.Cleanup(srv.Close)
		_, ds := Install(context.Background(), Options{Dir: callDir(t, srv.URL+"/module")})
		checkRefused(t, ds, "S3", "Failed to download module")
	})
}

func checkRefused(t *testing.T, ds hcl.Diagnostics, store, summary string) {
	t.Helper()
	if len(ds) != 1 || ds[0].Summary != summary || ds[0].Subject == nil ||
		ds[0].Subject.Filename != "main.tf" || ds[0].Subject.Start.Line != 2 {
		t.Fatalf("diagnostics = %v, want one %q at main.tf line 2", ds, summary)
	}
	for _, want := range []string{"cairn does not fetch " + store + " module sources", "http(s) URL of an archive", "local copy"} {
		if !strings.Contains(ds[0].Detail, want) {
			t.Errorf("detail %q does not say %q", ds[0].Detail, want)
		}
	}
}

// gitRepo makes a repository with main.tf naming the version at tags v1 and v2 (v2 the
// tip of main) and sub/main.tf, and returns its directory and v1's commit.
func gitRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo.git")
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	var v1 string
	for _, v := range []string{"v1", "v2"} {
		for _, f := range []string{"main.tf", "sub/main.tf"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("# "+f+" "+v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git("add", "-A")
		git("commit", "-q", "-m", v)
		git("tag", v)
		if v == "v1" {
			v1 = git("rev-parse", "HEAD")
		}
	}
	return filepath.ToSlash(dir), v1
}

// git sources: a tag, a commit, a shallow clone of a tag that is not the tip, a subdirectory.
func TestInstallGit(t *testing.T) {
	repo, commit := gitRepo(t)
	cases := map[string]struct{ source, dir, want string }{
		"Tag":          {"git::file://" + repo + "?ref=v1", ".terraform/modules/m", "main.tf v1"},
		"Default":      {"git::file://" + repo, ".terraform/modules/m", "main.tf v2"},
		"Commit":       {"git::file://" + repo + "?ref=" + commit, ".terraform/modules/m", "main.tf v1"},
		"ShallowTag":   {"git::file://" + repo + "?depth=1&ref=v1", ".terraform/modules/m", "main.tf v1"},
		"SubdirBranch": {"git::file://" + repo + "//sub?ref=main", ".terraform/modules/m/sub", "sub/main.tf v2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir, text := installed(t, callDir(t, tc.source))
			if dir != tc.dir || !strings.Contains(text, tc.want) {
				t.Errorf("installed %s with %q, want %s with %q", dir, text, tc.dir, tc.want)
			}
		})
	}
	t.Run("UnknownRef", func(t *testing.T) {
		_, ds := Install(context.Background(), Options{Dir: callDir(t, "git::file://"+repo+"?ref=v9")})
		if !ds.HasErrors() || ds[0].Summary != "Failed to download module" || !strings.Contains(ds[0].Detail, `invalid ref: "v9"`) {
			t.Errorf("unknown ref = %v", ds)
		}
	})
}

// A .zip over http(s) is unpacked, its subdirectory chosen, also when an http(s) page names
// it with X-Terraform-Get; a local directory by absolute path is linked.
func TestInstallArchiveAndFile(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"main.tf", "modules/net/main.tf"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("# zip " + name + "\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/module" { // a page naming the package, as terraform's http sources may
			w.Header().Set("X-Terraform-Get", srv.URL+"/pkg.zip")
			return
		}
		_, _ = w.Write(buf.Bytes())
	}))
	t.Cleanup(srv.Close)
	if dir, text := installed(t, callDir(t, srv.URL+"/pkg.zip//modules/net")); dir != ".terraform/modules/m/modules/net" || text != "# zip modules/net/main.tf\n" {
		t.Errorf("zip: installed %s with %q", dir, text)
	}
	if dir, text := installed(t, callDir(t, srv.URL+"/module")); dir != ".terraform/modules/m" || text != "# zip main.tf\n" {
		t.Errorf("X-Terraform-Get: installed %s with %q", dir, text)
	}

	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "main.tf"), []byte("# local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, text := installed(t, callDir(t, filepath.ToSlash(local))); dir != ".terraform/modules/m" || text != "# local\n" {
		t.Errorf("absolute path: installed %s with %q", dir, text)
	}
}

// An S3 module that terraform init installed is used as it is: cairn refuses only to fetch.
func TestInstallReusesInstalledCloudStorage(t *testing.T) {
	dir := callDir(t, "bucket.s3.amazonaws.com/m.zip")
	mod := filepath.Join(dir, ".terraform", "modules", "m")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"m","Source":"s3::https://s3.amazonaws.com/bucket/m.zip","Dir":".terraform/modules/m"}]}`
	if err := os.WriteFile(filepath.Join(mod, "..", "modules.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "main.tf"), []byte("# from terraform init\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, text := installed(t, dir); dir != ".terraform/modules/m" || text != "# from terraform init\n" {
		t.Errorf("installed %s with %q, want terraform's installation used", dir, text)
	}
}
