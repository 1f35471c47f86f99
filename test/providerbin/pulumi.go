package providerbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PulumiConformance returns the pulumiproviders binary: Pulumi's language-conformance
// test providers (pkg/v3 testing/pulumi-test-language/providers, unmodified, from the Go module
// proxy) served as plugins by test/pulumiproviders, a module of its own so Pulumi's
// dependencies never meet cairn's. The first build takes about a minute; it is cached like
// the Terraform providers. Without the module proxy the test is skipped.
func PulumiConformance(tb testing.TB) string {
	tb.Helper()
	src := filepath.Join(RepoRoot(), "test", "pulumiproviders")
	return build(tb, "pulumi-conformance-"+treeHash(tb, src), func(dir string) (string, error) {
		out := filepath.Join(dir, "pulumiproviders")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			if proxyUnreachable(string(b)) {
				tb.Skipf("cannot build the Pulumi conformance providers: the Go module proxy is unreachable:\n%s", b)
			}
			return "", fmt.Errorf("build the Pulumi conformance providers: %v\n%s", err, b)
		}
		return out, nil
	})
}

// PulumiPlugins lays the conformance providers out as a Pulumi plugin cache
// (DIR/resource-<pkg>-v<version>/pulumi-resource-<pkg>) in a new directory and returns it.
func PulumiPlugins(tb testing.TB) string {
	tb.Helper()
	bin := PulumiConformance(tb)
	dir := tb.TempDir()
	if b, err := exec.Command(bin, "install", dir).CombinedOutput(); err != nil {
		tb.Fatalf("pulumiproviders install: %v\n%s", err, b)
	}
	return dir
}

// PulumiPlugin is the plugin binary of one conformance package in a cache PulumiPlugins made.
func PulumiPlugin(tb testing.TB, dir, pkg, version string) string {
	tb.Helper()
	p := filepath.Join(dir, fmt.Sprintf("resource-%s-v%s", pkg, version), "pulumi-resource-"+pkg)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("no conformance provider %s %s: %v", pkg, version, err)
	}
	return p
}

func proxyUnreachable(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "proxyconnect"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}
