package install

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// registry serves ns/mod/sys with versions, each downloadable as a .tar.gz whose main.tf
// has an output naming the version.
func registry(t *testing.T, versions ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /m/ns/mod/sys/versions", func(w http.ResponseWriter, r *http.Request) {
		var vs []string
		for _, v := range versions {
			vs = append(vs, fmt.Sprintf(`{"version":%q}`, v))
		}
		fmt.Fprintf(w, `{"modules":[{"versions":[%s]}]}`, strings.Join(vs, ","))
	})
	mux.HandleFunc("GET /m/ns/mod/sys/{v}/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Terraform-Get", "../../../../../pkg/"+r.PathValue("v")+".tar.gz")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /pkg/{file}", func(w http.ResponseWriter, r *http.Request) {
		v := strings.TrimSuffix(r.PathValue("file"), ".tar.gz")
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		body := "output \"v\" {\n  value = \"" + v + "\"\n}\n"
		_ = tw.WriteHeader(&tar.Header{Name: "sub/main.tf", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(body))
		_ = tw.Close()
		_ = gz.Close()
		_, _ = w.Write(buf.Bytes())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func configDir(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	src := "module \"m\" {\n  source  = \"reg.test/ns/mod/sys//sub\"\n  version = \"" + version + "\"\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInstallRegistry(t *testing.T) {
	srv := registry(t, "1.0.0", "1.0.5", "1.1.0-beta1", "0.9.0")
	reg, err := NewRegistry(map[string]map[string]any{"reg.test": {"modules.v1": srv.URL + "/m"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ constraint, want string }{
		"NewestMatch":         {">= 1.0", "1.0.5"},
		"PrereleaseExactly":   {"1.1.0-beta1", "1.1.0-beta1"},
		"PessimisticOperator": {"~> 0.9", "0.9.0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := configDir(t, tc.constraint)
			res, ds := Install(context.Background(), Options{Dir: dir, Registry: reg})
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			rec := res.Manifest["m"]
			want := struct{ Source, Version, Dir string }{"reg.test/ns/mod/sys//sub", tc.want, ".terraform/modules/m/sub"}
			if diff := cmp.Diff(want, struct{ Source, Version, Dir string }{rec.Source, rec.Version, rec.Dir}); diff != "" {
				t.Errorf("record: -want +got:\n%s", diff)
			}
			b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "m", "sub", "main.tf"))
			if err != nil || !strings.Contains(string(b), `"`+tc.want+`"`) {
				t.Errorf("installed main.tf = %q, %v; want version %s", b, err, tc.want)
			}
		})
	}
}

// What is installed and still matches is used again without the registry.
func TestInstallReuseOffline(t *testing.T) {
	srv := registry(t, "1.0.0")
	reg, _ := NewRegistry(map[string]map[string]any{"reg.test": {"modules.v1": srv.URL + "/m/"}}, nil)
	dir := configDir(t, "1.0.0")
	if res, ds := Install(context.Background(), Options{Dir: dir, Registry: reg}); ds.HasErrors() || len(res.Installed) != 1 {
		t.Fatalf("first install: %v, installed %v", ds, res.Installed)
	}
	srv.Close()
	res, ds := Install(context.Background(), Options{Dir: dir, Registry: reg})
	if ds.HasErrors() || len(res.Installed) != 0 {
		t.Fatalf("second install with the registry gone: %v, installed %v", ds, res.Installed)
	}
	if diff := cmp.Diff([]string{".terraform/modules/m/sub"}, res.Dirs); diff != "" {
		t.Errorf("Dirs: -want +got:\n%s", diff)
	}
	_, ds = Install(context.Background(), Options{Dir: dir, Registry: reg, Upgrade: true})
	if !ds.HasErrors() || ds[0].Summary != "Error accessing remote module registry" || ds[0].Subject == nil || ds[0].Subject.Start.Line != 2 {
		t.Errorf("--upgrade with the registry gone = %v, want an error at the source", ds)
	}
}

func TestInstallErrors(t *testing.T) {
	srv := registry(t, "1.0.0")
	reg, _ := NewRegistry(map[string]map[string]any{"reg.test": {"modules.v1": srv.URL + "/m/"}}, nil)
	dir := configDir(t, "~> 2.0")
	_, ds := Install(context.Background(), Options{Dir: dir, Registry: reg})
	if !ds.HasErrors() || ds[0].Summary != "Unresolvable module version constraint" || !strings.Contains(ds[0].Detail, "The newest available version is 1.0.0") {
		t.Errorf("no matching version = %v", ds)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform")); err == nil {
		t.Errorf("a failed install wrote .terraform")
	}
}

func TestHostServices(t *testing.T) {
	rc := filepath.Join(t.TempDir(), "rc")
	src := "provider_installation {\n  direct {}\n}\nhost \"reg.test\" {\n  services = {\n    \"modules.v1\" = \"http://127.0.0.1:1/m/\"\n  }\n}\n"
	if err := os.WriteFile(rc, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := hostServices(rc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]map[string]any{"reg.test": {"modules.v1": "http://127.0.0.1:1/m/"}}, got); diff != "" {
		t.Errorf("hostServices: -want +got:\n%s", diff)
	}
	if got, err := hostServices(filepath.Join(t.TempDir(), "missing")); err != nil || got != nil {
		t.Errorf("missing file = %v, %v", got, err)
	}
}
