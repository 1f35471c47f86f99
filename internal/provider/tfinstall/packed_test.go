package tfinstall

import (
	"archive/zip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestPackedLayout: a mirror in terraform's packed layout (HOST/NS/TYPE/terraform-provider-
// TYPE_VERSION_OS_ARCH.zip) is found, unpacked once into the cache with the executable bit,
// and locked with the same h1: hash terraform records for the same archive.
func TestPackedLayout(t *testing.T) {
	bin := providerbin.Time(t)
	mirror := t.TempDir()
	platform := runtime.GOOS + "_" + runtime.GOARCH
	base := filepath.Join(mirror, "registry.terraform.io", "hashicorp", "time")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	zipTo(t, filepath.Join(base, "terraform-provider-time_"+providerbin.TimeVersion+"_"+platform+".zip"),
		"terraform-provider-time_v"+providerbin.TimeVersion, bin)
	// Another platform's archive and a stray file are ignored.
	zipTo(t, filepath.Join(base, "terraform-provider-time_9.9.9_plan9_386.zip"), "terraform-provider-time", bin)
	os.WriteFile(filepath.Join(base, "README"), []byte("x"), 0o644)
	t.Setenv("CAIRN_PROVIDER_CACHE", t.TempDir())

	src, _ := addr.ParseProvider("hashicorp/time")
	got, lock, err := NewInstaller(mirror).Resolve([]Requirement{{Source: src, Constraints: ">= 0.1"}}, &Lock{Providers: map[addr.Provider]LockedProvider{}}, false)
	if err != nil {
		t.Fatal(err)
	}
	p := got[src]
	if p.Version != providerbin.TimeVersion || p.Executable == "" {
		t.Fatalf("package = %+v", p)
	}
	if info, err := os.Stat(p.Executable); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("unpacked executable %s: %v %v", p.Executable, info, err)
	}
	// Resolving again reuses the unpacked copy.
	again, _, err := NewInstaller(mirror).Resolve([]Requirement{{Source: src}}, &Lock{Providers: map[addr.Provider]LockedProvider{}}, false)
	if err != nil || again[src].Dir != p.Dir || again[src].Hash != p.Hash {
		t.Fatalf("second resolve = %+v, %v", again[src], err)
	}

	tf := providerbin.Terraform(t)
	cfg := t.TempDir()
	os.WriteFile(filepath.Join(cfg, "main.tf"), []byte(`terraform {
  required_providers {
    time = { source = "hashicorp/time", version = "`+providerbin.TimeVersion+`" }
  }
}`), 0o644)
	cmd := exec.Command(tf, "providers", "lock", "-fs-mirror="+mirror, "-platform="+platform)
	cmd.Dir = cfg
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(cfg, "none"), "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform providers lock: %v\n%s", err, out)
	}
	src2, _ := os.ReadFile(filepath.Join(cfg, ".terraform.lock.hcl"))
	theirs, ds := ParseLock(".terraform.lock.hcl", src2)
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if want := theirs.Providers[src].Hashes; !slices.Contains(want, p.Hash) || !slices.Equal(lock.Providers[src].Hashes, []string{p.Hash}) {
		t.Errorf("h1 hash %s, terraform locked %v", p.Hash, want)
	}
}

func zipTo(t *testing.T, path, name, file string) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := io.Copy(w, in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
