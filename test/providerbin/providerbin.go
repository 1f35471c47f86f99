// Package providerbin builds the real Terraform provider binaries that tests and benchmarks run
// against, and lays them out the way terraform finds them: the hashicorp time provider from
// the Go module proxy, and cairn's own terraform-plugin-framework test providers from
// test/providers (a separate module, so their protobuf stubs never meet cairn's). Builds are
// cached under the user cache directory, keyed by version and source, so repeated runs are
// fast.
package providerbin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TimeVersion is the hashicorp/time release the tests use (protocol 5).
const TimeVersion = "0.14.2"

// CairntestVersion is the version the test providers are built and mirrored as.
const CairntestVersion = "0.1.0"

// Package is a provider binary placed in a mirror.
type Package struct {
	Source  string // host/namespace/type, e.g. registry.terraform.io/hashicorp/time
	Version string
	Binary  string
}

var (
	mu     sync.Mutex
	builds = map[string]string{}
)

func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "cairn-test", "providers")
	return dir, os.MkdirAll(dir, 0o755)
}

// Time returns the terraform-provider-time binary, installing it with go install when absent.
func Time(tb testing.TB) string {
	tb.Helper()
	return build(tb, "time-"+TimeVersion, func(dir string) (string, error) {
		cmd := exec.Command("go", "install", "github.com/hashicorp/terraform-provider-time@v"+TimeVersion)
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go install terraform-provider-time: %v\n%s", err, out)
		}
		return filepath.Join(dir, "terraform-provider-time"), nil
	})
}

// Hashicorp providers beyond time, with the module path and version the Go module proxy
// serves them under: their go.mod files still declare the old terraform-providers paths, and
// the proxy holds them as pseudo-versions of release commits (random 3.9.0+1, local 2.9.0,
// tls 4.2.1). hashicorp/null has no version on the proxy: tests use terraform_data instead.
var (
	RandomRelease = Release{Type: "random", Version: "3.9.0", Module: "github.com/terraform-providers/terraform-provider-random", At: "v1.3.2-0.20260513075824-f8d869dc98d9"}
	LocalRelease  = Release{Type: "local", Version: "2.9.0", Module: "github.com/terraform-providers/terraform-provider-local", At: "v1.4.1-0.20260513075820-3561e410f9fe"}
	TLSRelease    = Release{Type: "tls", Version: "4.2.1", Module: "github.com/hashicorp/terraform-provider-tls", At: "v1.2.1-0.20260130152455-857b38cda3fc"}
)

// Release is a hashicorp provider release installed from the Go module proxy.
type Release struct {
	Type    string // "random"
	Version string // the provider's own version, as mirrored: "3.9.0"
	Module  string // Go module path
	At      string // Go module version of the release commit
}

// Install returns the release's binary, installing it with go install when absent.
func (r Release) Install(tb testing.TB) string {
	tb.Helper()
	return build(tb, r.Type+"-"+r.Version, func(dir string) (string, error) {
		cmd := exec.Command("go", "install", r.Module+"@"+r.At)
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go install %s: %v\n%s", r.Module, err, out)
		}
		return filepath.Join(dir, "terraform-provider-"+r.Type), nil
	})
}

// Package is the release placed in a mirror.
func (r Release) Package(tb testing.TB) Package {
	tb.Helper()
	return Package{Source: "registry.terraform.io/hashicorp/" + r.Type, Version: r.Version, Binary: r.Install(tb)}
}

// Cairntest returns the cairntest provider built to serve protocol 5 or 6.
func Cairntest(tb testing.TB, protocol int) string {
	tb.Helper()
	src := filepath.Join(RepoRoot(), "test", "providers")
	key := fmt.Sprintf("cairntest%d-%s", protocol, treeHash(tb, src))
	return build(tb, key, func(dir string) (string, error) {
		out := filepath.Join(dir, "terraform-provider-cairntest")
		cmd := exec.Command("go", "build", "-o", out, fmt.Sprintf("./cmd/cairntest%d", protocol))
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build cairntest%d: %v\n%s", protocol, err, b)
		}
		return out, nil
	})
}

func build(tb testing.TB, key string, fn func(dir string) (string, error)) string {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if bin, ok := builds[key]; ok {
		return bin
	}
	root, err := cacheDir()
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(root, key)
	done := filepath.Join(dir, ".done")
	if b, err := os.ReadFile(done); err == nil {
		if _, err := os.Stat(string(b)); err == nil {
			builds[key] = string(b)
			return string(b)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	bin, err := fn(dir)
	if err != nil {
		tb.Fatalf("cannot build provider %s (needs the Go module proxy): %v", key, err)
	}
	if err := os.WriteFile(done, []byte(bin), 0o644); err != nil {
		tb.Fatal(err)
	}
	builds[key] = bin
	return bin
}

// treeHash hashes the Go sources of dir, so an edited test provider is rebuilt.
func treeHash(tb testing.TB, dir string) string {
	h := sha256.New()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "go.mod") || strings.HasSuffix(p, "go.sum")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("cannot read %s: %v", dir, err)
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// RepoRoot is the root of the cairn repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Mirror lays pkgs out in a new filesystem mirror directory in terraform's unpacked layout
// (<host>/<ns>/<type>/<version>/<os>_<arch>/terraform-provider-<type>_v<version>) and returns
// it. The binaries are symlinked, as terraform itself links its cache.
func Mirror(tb testing.TB, pkgs ...Package) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, p := range pkgs {
		parts := strings.Split(p.Source, "/")
		typ := parts[len(parts)-1]
		d := filepath.Join(append(append([]string{dir}, parts...), p.Version, runtime.GOOS+"_"+runtime.GOARCH)...)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Symlink(p.Binary, filepath.Join(d, "terraform-provider-"+typ+"_v"+p.Version)); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// CLIConfig writes a terraform CLI configuration that installs only from mirror, and returns
// its path: tests set TF_CLI_CONFIG_FILE to it (the machine's default points at a missing file,
// which makes terraform try the network).
func CLIConfig(tb testing.TB, mirror string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "terraformrc")
	body := fmt.Sprintf("disable_checkpoint = true\nprovider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Terraform returns the terraform CLI, or skips the test when the machine has none.
func Terraform(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		tb.Skip("terraform CLI not found on PATH: parity tests need it (.ci/run installs nothing for it; the machine provides v1.11)")
	}
	return bin
}
