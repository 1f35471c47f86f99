package e2e

// Module sources, compared with the terraform CLI: a module's own example calling it with
// source = "../../"; registry modules with version constraints through the module registry
// protocol (a registry on loopback, named by a CLI configuration host block); git sources
// (file:// repositories made here, tags as refs, //subdir); a configuration installed by
// `terraform init` used as it is, offline; and the errors a user meets.

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// labelVersion is the module package of one version: a module with a local submodule and an
// example that calls the module by its parent directory, as reusable modules are laid out.
func labelVersion(v string) map[string]string {
	return map[string]string{
		"main.tf": `variable "name" {
  type = string
}
module "sub" {
  source = "./modules/sub"
  in     = var.name
}
output "id" {
  value = "${var.name}-${module.sub.upper}"
}
output "version" {
  value = "` + v + `"
}
output "path" {
  value = path.module
}
output "sub_path" {
  value = module.sub.path
}
`,
		"modules/sub/main.tf": `variable "in" {
  type = string
}
output "upper" {
  value = upper(var.in)
}
output "path" {
  value = path.module
}
`,
		"examples/complete/main.tf": `module "label" {
  source = "../../"
  name   = "example"
}
output "label" {
  value = module.label
}
output "root" {
  value = path.root
}
`,
	}
}

// writeTree writes files (slash-separated relative names) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitRepo makes a git repository with one commit and tag per version, oldest first.
func gitRepo(t *testing.T, versions ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "label.git")
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	git := func(args ...string) {
		t.Helper()
		if r := execIn(dir, env, "git", args...); r.err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), r.err, r.all())
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	for _, v := range versions {
		writeTree(t, dir, labelVersion(v))
		git("add", "-A")
		git("commit", "-q", "-m", "v"+v)
		git("tag", "v"+v)
	}
	return dir
}

// tarGz packs files into a .tar.gz.
func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf strings.Builder
	gz := gzip.NewWriter(&stringWriter{&buf})
	tw := tar.NewWriter(gz)
	for name, text := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(text)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

type stringWriter struct{ b *strings.Builder }

func (w *stringWriter) Write(p []byte) (int, error) { return w.b.Write(p) }

// moduleRegistry serves acme/label/null through the module registry protocol: versions
// 0.24.0, 0.25.0, 0.25.3 and 1.0.0, each version's download answering 204 with a relative
// X-Terraform-Get to an archive it serves too. requests counts what it answered.
func moduleRegistry(t *testing.T) (*httptest.Server, *int) {
	t.Helper()
	versions := []string{"0.24.0", "0.25.0", "0.25.3", "1.0.0"}
	requests := new(int)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/modules/acme/label/null/versions", func(w http.ResponseWriter, r *http.Request) {
		*requests++
		var vs []string
		for _, v := range versions {
			vs = append(vs, fmt.Sprintf(`{"version":%q}`, v))
		}
		fmt.Fprintf(w, `{"modules":[{"source":"acme/label/null","versions":[%s]}]}`, strings.Join(vs, ","))
	})
	mux.HandleFunc("GET /v1/modules/acme/label/null/{version}/download", func(w http.ResponseWriter, r *http.Request) {
		*requests++
		w.Header().Set("X-Terraform-Get", "/archives/label-"+r.PathValue("version")+".tar.gz")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /archives/{file}", func(w http.ResponseWriter, r *http.Request) {
		*requests++
		v := strings.TrimSuffix(strings.TrimPrefix(r.PathValue("file"), "label-"), ".tar.gz")
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(tarGz(t, labelVersion(v)))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		*requests++
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, requests
}

// registryRC is the CLI configuration rc with a host block naming the registry at base.
func registryRC(t *testing.T, rc, host, base string) string {
	t.Helper()
	b, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "terraformrc")
	block := fmt.Sprintf("host %q {\n  services = {\n    \"modules.v1\" = %q\n  }\n}\n", host, base+"/v1/modules/")
	if err := os.WriteFile(out, append(b, block...), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// cairnOutputs deploys dir as stack and returns its outputs by name.
func cairnOutputs(t *testing.T, c *cairnCLI, stack, dir string) map[string]any {
	t.Helper()
	c.run("deploy", "--stack", stack, "-f", dir)
	var outs []api.Output
	if err := json.Unmarshal([]byte(c.run("outputs", "--stack", stack, "-o", "json")), &outs); err != nil {
		t.Fatalf("outputs %s: %v", stack, err)
	}
	got := map[string]any{}
	for _, o := range outs {
		got[o.Name] = o.Value
	}
	return got
}

// tfOutputs runs terraform init and apply in tf's directory and returns its outputs by name.
func tfOutputs(t *testing.T, tf *tfCLI) map[string]any {
	t.Helper()
	tf.run("init")
	tf.run("apply", "-auto-approve")
	var raw map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(tf.run("output", "-json")), &raw); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for k, v := range raw {
		got[k] = v.Value
	}
	return got
}

// TestTerraformModuleParentDirectory: a module's examples/complete calls the module with
// source = "../../"; both tools give the same outputs, path.module of the module "../.." and
// of its submodule "../../modules/sub".
func TestTerraformModuleParentDirectory(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	repo := t.TempDir()
	writeTree(t, repo, labelVersion("0.1.0"))
	example := filepath.Join(repo, "examples", "complete")

	want := tfOutputs(t, newTFCLI(t, rc, example, t.TempDir()))
	if err := os.RemoveAll(filepath.Join(example, ".terraform")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup", ".terraform.lock.hcl"} {
		_ = os.Remove(filepath.Join(example, f))
	}
	got := cairnOutputs(t, newCairnCLI(t, rc, t.TempDir()), "example", example)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs: -terraform +cairn:\n%s", diff)
	}
	if label, _ := got["label"].(map[string]any); label["path"] != "../.." || label["sub_path"] != "../../modules/sub" {
		t.Errorf("label = %v, want path ../.. and sub_path ../../modules/sub", got["label"])
	}
	if _, err := os.Stat(filepath.Join(example, ".terraform")); err == nil {
		t.Errorf("cairn wrote .terraform for a configuration of local modules only")
	}
}

// remoteConfig calls the registry module with a constraint, the git repository at a tag,
// and a subdirectory of it.
func remoteConfig(repo string) string {
	return fmt.Sprintf(`module "reg" {
  source  = "registry.cairn.test/acme/label/null"
  version = "~> 0.25.0"
  name    = "reg"
}
module "git" {
  source = "git::file://%[1]s?ref=v0.24.0"
  name   = "git"
}
module "sub" {
  source = "git::file://%[1]s//modules/sub?ref=v1.0.0"
  in     = "sub"
}
output "reg" {
  value = module.reg
}
output "git" {
  value = module.git
}
output "sub" {
  value = module.sub
}
`, filepath.ToSlash(repo))
}

// TestTerraformModuleRemoteSources: registry and git modules installed by cairn give
// terraform's outputs; the modules.json cairn writes is terraform's, and terraform runs on it;
// a configuration installed by terraform init runs under cairn with the registry gone; a
// changed version constraint installs again.
func TestTerraformModuleRemoteSources(t *testing.T) {
	t.Parallel()
	srv, requests := moduleRegistry(t)
	repo := gitRepo(t, "0.24.0", "1.0.0")
	rc := registryRC(t, providersRC(t, 6), "registry.cairn.test", srv.URL)
	config := remoteConfig(repo)

	tfDir := t.TempDir()
	writeConfig(t, tfDir, config)
	tf := newTFCLI(t, rc, tfDir, t.TempDir())
	want := tfOutputs(t, tf)

	cairnDir := t.TempDir()
	writeConfig(t, cairnDir, config)
	c := newCairnCLI(t, rc, t.TempDir())
	got := cairnOutputs(t, c, "remote", cairnDir)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs: -terraform +cairn:\n%s", diff)
	}
	if reg, _ := got["reg"].(map[string]any); reg["version"] != "0.25.3" || reg["path"] != ".terraform/modules/reg" {
		t.Errorf("reg = %v, want version 0.25.3 (newest of ~> 0.25.0) at .terraform/modules/reg", got["reg"])
	}
	manifest := func(dir string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if diff := cmp.Diff(manifest(tfDir), manifest(cairnDir)); diff != "" {
		t.Errorf("modules.json: -terraform +cairn:\n%s", diff)
	}

	// terraform runs on what cairn installed, without init.
	tfOnCairn := newTFCLI(t, rc, cairnDir, t.TempDir())
	tfOnCairn.run("apply", "-auto-approve")

	// The registry goes away: what terraform init installed is used as it is, as is what
	// cairn installed, and the second deploy asks the registry nothing.
	before := *requests
	srv.Close()
	if got := cairnOutputs(t, newCairnCLI(t, rc, t.TempDir()), "from-terraform", tfDir); !cmp.Equal(want, got) {
		t.Errorf("outputs of terraform's installation under cairn: -terraform +cairn:\n%s", cmp.Diff(want, got))
	}
	c.run("deploy", "--stack", "remote", "-f", cairnDir)
	if *requests != before {
		t.Errorf("the registry got %d requests for installed modules, want none", *requests-before)
	}

	// A constraint the installed version no longer meets installs again: here the registry is
	// gone, so that is an error at the call's source.
	writeConfig(t, cairnDir, strings.Replace(config, `"~> 0.25.0"`, `">= 1.0.0"`, 1))
	r := c.try("deploy", "--stack", "remote", "-f", cairnDir)
	if r.err == nil || !strings.Contains(r.all(), "main.tf:2:13: Error accessing remote module registry") {
		t.Errorf("deploy with the registry gone = %v\n%s\nwant main.tf:2:13: Error accessing remote module registry", r.err, r.all())
	}
}

// TestTerraformModuleSourceErrors: an unknown module and a version that matches nothing are
// errors at the call's source, as terraform init reports them at its line.
func TestTerraformModuleSourceErrors(t *testing.T) {
	t.Parallel()
	srv, _ := moduleRegistry(t)
	rc := registryRC(t, providersRC(t, 6), "registry.cairn.test", srv.URL)
	cases := map[string]struct {
		config, want string
	}{
		"UnknownModule": {
			config: "module \"m\" {\n  source  = \"registry.cairn.test/acme/nope/null\"\n  version = \"1.0.0\"\n}\n",
			want:   "main.tf:2:13: Module not found",
		},
		"NoMatchingVersion": {
			config: "module \"m\" {\n  source  = \"registry.cairn.test/acme/label/null\"\n  version = \"~> 2.0\"\n  name    = \"x\"\n}\n",
			want:   "main.tf:2:13: Unresolvable module version constraint: There is no available version of module \"registry.cairn.test/acme/label/null\" (main.tf:2) which matches the given version constraint \"~> 2.0\". The newest available version is 1.0.0.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeConfig(t, dir, tc.config)
			r := newCairnCLI(t, rc, t.TempDir()).try("validate", "-f", dir)
			if r.err == nil || !strings.Contains(r.all(), tc.want) {
				t.Errorf("cairn validate = %v\n%s\nwant %q", r.err, r.all(), tc.want)
			}
			tfr := newTFCLI(t, rc, dir, t.TempDir()).try("init")
			if tfr.err == nil || !strings.Contains(tfr.all(), "main.tf line 1") {
				t.Errorf("terraform init = %v\n%s\nwant an error on main.tf line 1", tfr.err, tfr.all())
			}
		})
	}
}

// TestTerraformModuleCloudStorageRefused: cairn does not link the S3 and GCS SDKs, so an
// s3::/gcs:: source, or a bare S3 or GCS URL, is an error at the source that says what to
// use instead. (terraform would try to fetch them, which needs cloud credentials.)
func TestTerraformModuleCloudStorageRefused(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	cases := map[string]struct{ source, store string }{
		"S3Forced":  {"s3::https://s3.amazonaws.com/bucket/m.zip", "S3"},
		"S3Bare":    {"bucket.s3.eu-west-1.amazonaws.com/m.zip", "S3"},
		"GCSForced": {"gcs::https://www.googleapis.com/storage/v1/bucket/m.zip", "GCS"},
		"GCSBare":   {"www.googleapis.com/storage/v1/bucket/m.zip", "GCS"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := tc.store
			dir := t.TempDir()
			writeConfig(t, dir, "module \"m\" {\n  source = \""+tc.source+"\"\n}\n")
			c := newCairnCLI(t, rc, t.TempDir())
			for _, cmd := range []string{"init", "validate"} {
				r := c.try(cmd, "-f", dir)
				want := "main.tf:2:12: Unsupported module source"
				if r.err == nil || !strings.Contains(r.all(), want) || !strings.Contains(r.all(), "cairn does not fetch "+store+" module sources") {
					t.Errorf("cairn %s = %v\n%s\nwant %q saying cairn does not fetch %s module sources", cmd, r.err, r.all(), want, store)
				}
			}
		})
	}
}

// TestCairnInitModules: cairn init installs ahead of time, keeps what still matches, installs
// again what a changed constraint no longer allows, and --upgrade downloads everything again.
func TestCairnInitModules(t *testing.T) {
	t.Parallel()
	srv, requests := moduleRegistry(t)
	rc := registryRC(t, providersRC(t, 6), "registry.cairn.test", srv.URL)
	dir := t.TempDir()
	call := "module \"reg\" {\n  source  = \"registry.cairn.test/acme/label/null\"\n  version = %q\n  name    = \"reg\"\n}\noutput \"v\" {\n  value = module.reg.version\n}\n"
	writeConfig(t, dir, fmt.Sprintf(call, "~> 0.25.0"))
	c := newCairnCLI(t, rc, t.TempDir())
	if out := c.run("init", "-f", dir); !strings.Contains(out, "- reg: registry.cairn.test/acme/label/null 0.25.3 in .terraform/modules/reg") ||
		!strings.Contains(out, "(1 downloaded, 2 calls)") {
		t.Errorf("first init printed:\n%s", out)
	}
	before := *requests
	if out := c.run("init", "-f", dir); !strings.Contains(out, "(0 downloaded, 2 calls)") || *requests != before {
		t.Errorf("second init made %d requests and printed:\n%s\nwant none and nothing downloaded", *requests-before, out)
	}
	writeConfig(t, dir, fmt.Sprintf(call, "0.24.0"))
	if out := c.run("init", "-f", dir); !strings.Contains(out, "reg: registry.cairn.test/acme/label/null 0.24.0") {
		t.Errorf("init after a constraint change printed:\n%s\nwant 0.24.0 installed", out)
	}
	if out := c.run("init", "-f", dir, "--upgrade"); !strings.Contains(out, "(1 downloaded, 2 calls)") {
		t.Errorf("init --upgrade printed:\n%s\nwant the module downloaded again", out)
	}
	if got := cairnOutputs(t, c, "init", dir); got["v"] != "0.24.0" {
		t.Errorf("outputs = %v, want v = 0.24.0", got)
	}
}
