package tfinstall

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// These tests hold cairn to what the terraform CLI does with the same filesystem mirror: the
// same h1: hashes, and the same .terraform.lock.hcl, byte for byte. They run the real
// hashicorp/time binary (test/providerbin), mirrored under two sources so the two packages
// differ in their executable's name and so in their hash.

var clockSrc = addr.Provider{Host: "example.com", Namespace: "acme", Type: "clock"}

// parityMirror is a filesystem mirror holding hashicorp/time and example.com/acme/clock.
func parityMirror(t *testing.T) string {
	t.Helper()
	bin := providerbin.Time(t)
	return providerbin.Mirror(t,
		providerbin.Package{Source: timeSrc.String(), Version: providerbin.TimeVersion, Binary: bin},
		providerbin.Package{Source: clockSrc.String(), Version: "1.0.0", Binary: bin})
}

// requiredProviders is a root module requiring each local name with its constraint ("" for none).
func requiredProviders(reqs []Requirement) string {
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n")
	for _, r := range reqs {
		fmt.Fprintf(&b, "    %s = {\n      source = %q\n", r.Source.Type, r.Source.String())
		if r.Constraints != "" {
			fmt.Fprintf(&b, "      version = %q\n", r.Constraints)
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// terraformLock runs terraform with args in a new directory holding the configuration for reqs,
// with a CLI configuration that installs only from mirror, and returns the lock file it wrote
// and the working directory.
func terraformLock(t *testing.T, tf, mirror string, reqs []Requirement, args ...string) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(requiredProviders(reqs)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+providerbin.CLIConfig(t, mirror), "TF_PLUGIN_CACHE_DIR=",
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	return lock, dir
}

func TestTerraformParity(t *testing.T) {
	tf := providerbin.Terraform(t)
	mirror := parityMirror(t)
	platform := runtime.GOOS + "_" + runtime.GOARCH
	reqs := []Requirement{{Source: timeSrc, Constraints: "~> 0.14"}, {Source: clockSrc}}

	runs := map[string][]string{
		"ProvidersLock": {"providers", "lock", "-fs-mirror=" + mirror, "-platform=" + platform},
		"Init":          {"init", "-input=false", "-backend=false"},
	}
	for name, args := range runs {
		t.Run(name, func(t *testing.T) {
			tfLockSrc, _ := terraformLock(t, tf, mirror, reqs, args...)

			// terraform's own lock file parses, and re-emits byte for byte.
			tfLock, ds := ParseLock(".terraform.lock.hcl", tfLockSrc)
			if len(ds) > 0 {
				t.Fatalf("ParseLock(terraform's lock): %v\n%s", ds, tfLockSrc)
			}
			if diff := cmp.Diff(string(tfLockSrc), string(tfLock.Bytes())); diff != "" {
				t.Errorf("ParseLock(terraform's lock).Bytes(): -terraform +cairn:\n%s", diff)
			}

			// With no lock, cairn picks the same versions, computes the same h1: hashes, and
			// writes the same lock file.
			inst := NewInstaller(mirror)
			pkgs, next, err := inst.Resolve(reqs, emptyLock(), false)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			for _, r := range reqs {
				want := tfLock.Providers[r.Source]
				if len(want.Hashes) != 1 || !strings.HasPrefix(want.Hashes[0], "h1:") {
					t.Fatalf("terraform's lock for %s: %+v, want exactly one h1: hash", r.Source, want)
				}
				if got := pkgs[r.Source]; got.Version != want.Version || got.Hash != want.Hashes[0] {
					t.Errorf("Resolve(%s) = %s %s; terraform locked %s %s", r.Source, got.Version, got.Hash, want.Version, want.Hashes[0])
				}
			}
			if diff := cmp.Diff(string(tfLockSrc), string(next.Bytes())); diff != "" {
				t.Errorf("lock written by cairn: -terraform +cairn:\n%s", diff)
			}

			// With terraform's lock, cairn accepts the packages and leaves the lock unchanged.
			_, again, err := inst.Resolve(reqs, tfLock, false)
			if err != nil {
				t.Fatalf("Resolve with terraform's lock: %v", err)
			}
			if diff := cmp.Diff(string(tfLockSrc), string(again.Bytes())); diff != "" {
				t.Errorf("lock after Resolve with terraform's lock: -terraform +cairn:\n%s", diff)
			}
		})
	}
}

func TestTerraformParityWorkingDirAsPluginDir(t *testing.T) {
	// terraform init links each package of .terraform/providers to the mirror (the platform
	// directory is a symlink), and terraform accepts that directory as -plugin-dir. So must
	// cairn's --plugin-dir, with the hashes terraform recorded.
	tf := providerbin.Terraform(t)
	mirror := parityMirror(t)
	reqs := []Requirement{{Source: timeSrc}, {Source: clockSrc}}
	tfLockSrc, dir := terraformLock(t, tf, mirror, reqs, "init", "-input=false", "-backend=false")
	tfLock, ds := ParseLock(".terraform.lock.hcl", tfLockSrc)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	pluginDir := filepath.Join(dir, ".terraform", "providers")
	pkgs, _, err := NewInstaller(pluginDir).Resolve(reqs, tfLock, false)
	if err != nil {
		t.Fatalf("Resolve from %s: %v", pluginDir, err)
	}
	for _, r := range reqs {
		if got, want := pkgs[r.Source].Hash, tfLock.Providers[r.Source].Hashes[0]; got != want {
			t.Errorf("%s: hash %s, terraform locked %s", r.Source, got, want)
		}
	}
}

func TestTerraformParityConstraints(t *testing.T) {
	// terraform records the constraints of required_providers in a normalised form; a lock
	// file cairn writes must say the same, or the two tools rewrite each other's lock file.
	tf := providerbin.Terraform(t)
	mirror := parityMirror(t)
	platform := runtime.GOOS + "_" + runtime.GOARCH
	for _, c := range []string{"~> 0.14", "~> 0.14.0", "0.14.2", "= 0.14.2", ">=0.14,<1", ">= 0.1, != 0.13.0", "<= 1", ">= 0.14.2, ~> 0.14",
		"~> 0", ">= 0.14, >= 0.14.0", "0.14.2, >= 0.14.2, <= 0.14.2", "< 1, > 0.1, != 0.14.1", ">0.14.1", "~>0.14.2"} {
		t.Run(c, func(t *testing.T) {
			reqs := []Requirement{{Source: timeSrc, Constraints: c}}
			tfLockSrc, _ := terraformLock(t, tf, mirror, reqs, "providers", "lock", "-fs-mirror="+mirror, "-platform="+platform)
			tfLock, ds := ParseLock(".terraform.lock.hcl", tfLockSrc)
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			_, next, err := NewInstaller(mirror).Resolve(reqs, emptyLock(), false)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", c, err)
			}
			if want, got := tfLock.Providers[timeSrc].Constraints, next.Providers[timeSrc].Constraints; got != want {
				t.Errorf("lock constraints for %q: %q, terraform wrote %q", c, got, want)
			}
			if diff := cmp.Diff(string(tfLockSrc), string(next.Bytes())); diff != "" {
				t.Errorf("lock for %q: -terraform +cairn:\n%s", c, diff)
			}
		})
	}
}
