package tfinstall

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/addr"
)

var (
	platform = runtime.GOOS + "_" + runtime.GOARCH
	timeSrc  = addr.Provider{Host: "registry.terraform.io", Namespace: "hashicorp", Type: "time"}
	acmeSrc  = addr.Provider{Host: "example.com", Namespace: "acme", Type: "widget"}
)

// fakePackage writes a stand-in provider executable into mirror in terraform's unpacked
// layout and returns its package directory. Its content names the version, so every version
// hashes differently.
func fakePackage(t *testing.T, mirror string, src addr.Provider, version, exe string) string {
	t.Helper()
	dir := filepath.Join(mirror, src.Host, src.Namespace, src.Type, version, platform)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if exe == "" {
		exe = "terraform-provider-" + src.Type + "_v" + version
	}
	body := fmt.Sprintf("#!/bin/sh\n# %s %s\n", src, version)
	if err := os.WriteFile(filepath.Join(dir, exe), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// h1 computes terraform's "h1:" package hash of dir independently of the code under test:
// the base64 SHA-256 of the sorted "<sha256 hex>  <relative path>\n" lines of its files.
func h1(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%x  %s\n", sha256.Sum256(b), filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
}

func emptyLock() *Lock { return &Lock{Providers: map[addr.Provider]LockedProvider{}} }

func TestDiscover(t *testing.T) {
	home := t.TempDir()
	cfgDir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(cfgDir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	implied := []string{filepath.Join(home, ".terraform.d", "plugins"), filepath.Join(home, ".local", "share", "terraform", "plugins")}
	mirrors := write("mirrors.tfrc", `
disable_checkpoint = true
plugin_cache_dir   = "/cache/plugins"
provider_installation {
  filesystem_mirror {
    path = "/mirror/one"
  }
  filesystem_mirror {
    path = "/mirror/two"
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`)
	cacheOnly := write("cache.tfrc", "plugin_cache_dir = \"/cache/only\"\n")
	invalid := write("invalid.tfrc", "provider_installation {\n  filesystem_mirror {\n  }\n}\n")
	homeRC := filepath.Join(home, ".terraformrc")
	if err := os.WriteFile(homeRC, []byte("provider_installation {\n  filesystem_mirror {\n    path = \"/from/home\"\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		reason  string
		extra   []string
		env     map[string]string // TF_CLI_CONFIG_FILE, TERRAFORM_CONFIG, TF_PLUGIN_CACHE_DIR
		want    []string
		wantErr string
	}{
		"NoConfiguration": {
			reason: "Without a CLI configuration, --plugin-dir comes first, then terraform's implied local mirrors.",
			extra:  []string{"/plugin/dir"},
			env:    map[string]string{"TF_CLI_CONFIG_FILE": filepath.Join(cfgDir, "missing.tfrc")},
			want:   append([]string{"/plugin/dir"}, implied...),
		},
		"FilesystemMirrors": {
			reason: "Explicit provider_installation replaces the implied mirrors; its filesystem mirrors are searched in order, then plugin_cache_dir, then TF_PLUGIN_CACHE_DIR.",
			extra:  []string{"/plugin/dir"},
			env:    map[string]string{"TF_CLI_CONFIG_FILE": mirrors, "TF_PLUGIN_CACHE_DIR": "/env/cache"},
			want:   []string{"/plugin/dir", "/mirror/one", "/mirror/two", "/cache/plugins", "/env/cache"},
		},
		"PluginCacheOnly": {
			reason: "A configuration without provider_installation keeps the implied mirrors after the cache directories.",
			env:    map[string]string{"TF_CLI_CONFIG_FILE": cacheOnly, "TF_PLUGIN_CACHE_DIR": "/env/cache"},
			want:   append([]string{"/cache/only", "/env/cache"}, implied...),
		},
		"LegacyTerraformConfig": {
			reason: "TERRAFORM_CONFIG is honoured when TF_CLI_CONFIG_FILE is unset.",
			env:    map[string]string{"TERRAFORM_CONFIG": mirrors},
			want:   []string{"/mirror/one", "/mirror/two", "/cache/plugins"},
		},
		"HomeTerraformrc": {
			reason: "With neither variable set, ~/.terraformrc is read.",
			want:   []string{"/from/home"},
		},
		"InvalidConfiguration": {
			reason:  "A filesystem_mirror without path is an error naming the configuration file.",
			env:     map[string]string{"TF_CLI_CONFIG_FILE": invalid},
			wantErr: invalid,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv("HOME", home)
			for _, k := range []string{"TF_CLI_CONFIG_FILE", "TERRAFORM_CONFIG", "TF_PLUGIN_CACHE_DIR"} {
				t.Setenv(k, tc.env[k])
			}
			inst, err := Discover(tc.extra)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nDiscover: error %v, want one containing %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nDiscover: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, inst.dirs); diff != "" {
				t.Errorf("%s\nDiscover(%q) dirs: -want +got:\n%s", tc.reason, tc.extra, diff)
			}
		})
	}
}

func TestDiscoverMirrorIncludeExclude(t *testing.T) {
	// terraform accepts include and exclude in filesystem_mirror (and `terraform init` with this
	// very file succeeds); cairn must at least read such a configuration.
	rc := filepath.Join(t.TempDir(), "terraformrc")
	body := `provider_installation {
  filesystem_mirror {
    path    = "/mirror/private"
    include = ["example.com/*/*"]
  }
  filesystem_mirror {
    path    = "/mirror/public"
    exclude = ["example.com/*/*"]
  }
}
`
	if err := os.WriteFile(rc, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TF_CLI_CONFIG_FILE", rc)
	t.Setenv("TF_PLUGIN_CACHE_DIR", "")
	inst, err := Discover(nil)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if diff := cmp.Diff([]string{"/mirror/private", "/mirror/public"}, inst.dirs); diff != "" {
		t.Errorf("Discover dirs: -want +got:\n%s", diff)
	}
}

func TestDiscoverFindsPluginCache(t *testing.T) {
	// End to end: a provider only in TF_PLUGIN_CACHE_DIR is found through Discover.
	cache := t.TempDir()
	dir := fakePackage(t, cache, timeSrc, "0.14.2", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TF_CLI_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("TF_PLUGIN_CACHE_DIR", cache)
	inst, err := Discover(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := inst.Resolve([]Requirement{{Source: timeSrc}}, emptyLock(), false)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if got[timeSrc].Dir != dir {
		t.Errorf("Resolve picked %q, want the package in the plugin cache %q", got[timeSrc].Dir, dir)
	}
}

func TestResolveConstraints(t *testing.T) {
	mirror := t.TempDir()
	for _, v := range []string{"1.0.0", "1.2.0", "1.2.5", "1.3.0", "2.0.0", "2.1.0-beta1"} {
		fakePackage(t, mirror, acmeSrc, v, "")
	}
	// Directories that are not versions, or hold no package for this platform, are ignored.
	if err := os.MkdirAll(filepath.Join(mirror, acmeSrc.Host, acmeSrc.Namespace, acmeSrc.Type, "latest", platform), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mirror, acmeSrc.Host, acmeSrc.Namespace, acmeSrc.Type, "9.0.0", "plan9_386"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mirror, acmeSrc.Host, acmeSrc.Namespace, acmeSrc.Type, "8.0.0", platform), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason, constraints, want string
		locked                    string // the constraints the lock records, terraform's normal form; "" for constraints
	}{
		"Any":               {reason: "No constraint picks the newest release; prereleases are skipped.", want: "2.0.0"},
		"PessimisticMinor":  {reason: "~> 1.2 allows any 1.x from 1.2.", constraints: "~> 1.2", want: "1.3.0"},
		"PessimisticPatch":  {reason: "~> 1.2.0 allows only 1.2.x.", constraints: "~> 1.2.0", want: "1.2.5"},
		"Range":             {reason: "Comma-separated constraints all apply; the lock writes every version part.", constraints: ">= 1.0, < 2.0", want: "1.3.0", locked: ">= 1.0.0, < 2.0.0"},
		"Exclusion":         {reason: "!= removes one version.", constraints: ">= 1.0, != 1.3.0, < 2.0", want: "1.2.5", locked: ">= 1.0.0, != 1.3.0, < 2.0.0"},
		"ExactPin":          {reason: "A bare version pins it.", constraints: "1.2.0", want: "1.2.0"},
		"ExactPinEquals":    {reason: "= pins too; the lock drops the =.", constraints: "= 1.2.0", want: "1.2.0", locked: "1.2.0"},
		"PrereleaseExact":   {reason: "A prerelease is chosen only when pinned exactly.", constraints: "2.1.0-beta1", want: "2.1.0-beta1"},
		"GreaterOrEqual":    {reason: ">= picks the newest match.", constraints: ">= 1.2.1", want: "2.0.0"},
		"LessThanPicksLast": {reason: "< picks the newest below the bound.", constraints: "< 1.2.5", want: "1.2.0"},
	}
	inst := NewInstaller(mirror)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, lock, err := inst.Resolve([]Requirement{{Source: acmeSrc, Constraints: tc.constraints}}, emptyLock(), false)
			if err != nil {
				t.Fatalf("%s\nResolve(%q): %v", tc.reason, tc.constraints, err)
			}
			dir := filepath.Join(mirror, acmeSrc.Host, acmeSrc.Namespace, acmeSrc.Type, tc.want, platform)
			want := Package{Source: acmeSrc, Version: tc.want, Dir: dir,
				Executable: filepath.Join(dir, "terraform-provider-widget_v"+tc.want), Hash: h1(t, dir)}
			if diff := cmp.Diff(map[addr.Provider]Package{acmeSrc: want}, got); diff != "" {
				t.Errorf("%s\nResolve(%q) packages: -want +got:\n%s", tc.reason, tc.constraints, diff)
			}
			locked := tc.locked
			if locked == "" {
				locked = tc.constraints
			}
			wantLock := &Lock{Providers: map[addr.Provider]LockedProvider{acmeSrc: {Version: tc.want, Constraints: locked, Hashes: []string{want.Hash}}}}
			if diff := cmp.Diff(wantLock, lock); diff != "" {
				t.Errorf("%s\nResolve(%q) lock: -want +got:\n%s", tc.reason, tc.constraints, diff)
			}
		})
	}
}

func TestResolveSearchOrder(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	fakePackage(t, first, acmeSrc, "1.0.0", "")
	firstDup := fakePackage(t, first, acmeSrc, "1.1.0", "terraform-provider-widget")
	fakePackage(t, second, acmeSrc, "1.1.0", "")
	newer := fakePackage(t, second, acmeSrc, "1.2.0", "terraform-provider-widget.exe")
	inst := NewInstaller(filepath.Join(t.TempDir(), "missing"), first, second)

	got, _, err := inst.Resolve([]Requirement{{Source: acmeSrc}}, emptyLock(), false)
	if err != nil {
		t.Fatal(err)
	}
	if p := got[acmeSrc]; p.Dir != newer || p.Executable != filepath.Join(newer, "terraform-provider-widget.exe") {
		t.Errorf("newest across directories: got %+v, want 1.2.0 from the second directory", p)
	}
	got, _, err = inst.Resolve([]Requirement{{Source: acmeSrc, Constraints: "1.1.0"}}, emptyLock(), false)
	if err != nil {
		t.Fatal(err)
	}
	if p := got[acmeSrc]; p.Dir != firstDup || p.Executable != filepath.Join(firstDup, "terraform-provider-widget") {
		t.Errorf("a version in two directories: got %+v, want the one in the first directory searched", p)
	}
}

func TestResolveIgnoresOtherExecutables(t *testing.T) {
	// terraform-provider-widgetry is another provider's executable, not widget's.
	mirror := t.TempDir()
	fakePackage(t, mirror, acmeSrc, "1.0.0", "terraform-provider-widgetry_v1.0.0")
	_, _, err := NewInstaller(mirror).Resolve([]Requirement{{Source: acmeSrc}}, emptyLock(), false)
	if err == nil || !strings.Contains(err.Error(), "found none") {
		t.Errorf("Resolve: error %v, want no package found", err)
	}
}

func TestResolveLock(t *testing.T) {
	mirror := t.TempDir()
	hash := map[string]string{}
	for _, v := range []string{"1.2.0", "1.3.0"} {
		hash[v] = h1(t, fakePackage(t, mirror, acmeSrc, v, ""))
	}
	const zh = "zh:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]struct {
		reason      string
		constraints string
		locked      *LockedProvider
		upgrade     bool
		want        string // version picked
		wantLock    LockedProvider
		wantErr     []string
	}{
		"LockHonoured": {
			reason: "A locked version that still meets the constraint is kept, with the lock's hashes.",
			locked: &LockedProvider{Version: "1.2.0", Constraints: "~> 1.0", Hashes: []string{hash["1.2.0"], zh}}, constraints: "~> 1.2",
			want: "1.2.0", wantLock: LockedProvider{Version: "1.2.0", Constraints: "~> 1.2", Hashes: []string{hash["1.2.0"], zh}},
		},
		"Upgrade": {
			reason: "--upgrade ignores the lock and records the newest match with its own hash.",
			locked: &LockedProvider{Version: "1.2.0", Hashes: []string{hash["1.2.0"], zh}}, constraints: "~> 1.2", upgrade: true,
			want: "1.3.0", wantLock: LockedProvider{Version: "1.3.0", Constraints: "~> 1.2", Hashes: []string{hash["1.3.0"]}},
		},
		"UpgradeAcceptsChangedPackage": {
			reason: "--upgrade accepts a package whose hash is not in the lock.",
			locked: &LockedProvider{Version: "1.3.0", Hashes: []string{zh}}, upgrade: true,
			want: "1.3.0", wantLock: LockedProvider{Version: "1.3.0", Hashes: []string{hash["1.3.0"]}},
		},
		"LockedVersionMissing": {
			reason: "A locked version absent from every directory is an error naming it and the way out.",
			locked: &LockedProvider{Version: "1.1.0"}, constraints: "~> 1.0",
			wantErr: []string{"example.com/acme/widget", "locked version 1.1.0", ".terraform.lock.hcl", `"~> 1.0"`, mirror, "found 1.3.0, 1.2.0", "--upgrade"},
		},
		"LockedVersionOutsideConstraint": {
			reason: "A locked version the configuration no longer allows is an error, not a silent upgrade.",
			locked: &LockedProvider{Version: "1.2.0"}, constraints: ">= 1.3",
			wantErr: []string{"locked version 1.2.0", `">= 1.3"`, "--upgrade"},
		},
		"HashMismatch": {
			reason:  "A package that does not match any locked checksum is refused.",
			locked:  &LockedProvider{Version: "1.3.0", Hashes: []string{zh, "h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}},
			wantErr: []string{"example.com/acme/widget 1.3.0", "does not match the checksums in the lock file", hash["1.3.0"], "--upgrade"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			lock := emptyLock()
			if tc.locked != nil {
				lock.Providers[acmeSrc] = *tc.locked
			}
			before := fmt.Sprint(lock.Providers)
			got, next, err := NewInstaller(mirror).Resolve([]Requirement{{Source: acmeSrc, Constraints: tc.constraints}}, lock, tc.upgrade)
			if after := fmt.Sprint(lock.Providers); after != before {
				t.Errorf("Resolve changed the lock it was given: %s, was %s", after, before)
			}
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("%s\nResolve: no error, picked %+v", tc.reason, got)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("%s\nResolve error %q\ndoes not contain %q", tc.reason, err, s)
					}
				}
				if _, ok := next.Providers[acmeSrc]; ok {
					t.Errorf("%s\nthe new lock records a provider that failed: %+v", tc.reason, next.Providers[acmeSrc])
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nResolve: %v", tc.reason, err)
			}
			if got[acmeSrc].Version != tc.want {
				t.Errorf("%s\nResolve picked %s, want %s", tc.reason, got[acmeSrc].Version, tc.want)
			}
			if diff := cmp.Diff(tc.wantLock, next.Providers[acmeSrc]); diff != "" {
				t.Errorf("%s\nResolve lock entry: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResolveNotFound(t *testing.T) {
	mirror := t.TempDir()
	fakePackage(t, mirror, acmeSrc, "1.0.0", "")
	fakePackage(t, mirror, acmeSrc, "2.0.0", "")
	timeDir := fakePackage(t, mirror, timeSrc, "0.14.2", "")
	missing := filepath.Join(t.TempDir(), "missing")
	inst := NewInstaller(mirror, missing)
	other := addr.Provider{Host: "registry.terraform.io", Namespace: "hashicorp", Type: "random"}

	got, next, err := inst.Resolve([]Requirement{
		{Source: acmeSrc, Constraints: "~> 3.0"},
		{Source: timeSrc},
		{Source: other},
		{Source: acmeSrc, Constraints: "not a constraint"},
	}, emptyLock(), false)
	if err == nil {
		t.Fatal("Resolve: no error for three unsatisfiable requirements")
	}
	msg := err.Error()
	for _, want := range []string{
		`provider example.com/acme/widget: no version matching "~> 3.0" found; searched ` + mirror + ", " + missing + " (found 2.0.0, 1.0.0)",
		`provider registry.terraform.io/hashicorp/random: no version matching ">= 0.0.0" found; searched ` + mirror + ", " + missing + " (found none)",
		`provider example.com/acme/widget: invalid version constraint "not a constraint"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Resolve error:\n%s\nwant it to contain:\n%s", msg, want)
		}
	}
	// Every failure is reported in one pass, and what could be resolved still is.
	if n := strings.Count(msg, "\n") + 1; n != 3 {
		t.Errorf("Resolve error has %d lines, want one per failing requirement (3):\n%s", n, msg)
	}
	if got[timeSrc].Dir != timeDir || next.Providers[timeSrc].Version != "0.14.2" {
		t.Errorf("the satisfiable requirement was not resolved: %+v, lock %+v", got[timeSrc], next.Providers[timeSrc])
	}
}

func TestDiscoverMirrorIncludeExcludeResolve(t *testing.T) {
	// A filesystem mirror serves only the providers its include patterns match, minus its
	// exclude patterns, as terraform's provider_installation does; network_mirror and direct
	// are accepted but not used, and a provider no local method finds names them.
	private, public := t.TempDir(), t.TempDir()
	otherAcme := addr.Provider{Host: "example.com", Namespace: "acme", Type: "gadget"}
	random := addr.Provider{Host: "registry.terraform.io", Namespace: "hashicorp", Type: "random"}
	// widget is in both mirrors, newest in the public one, which excludes example.com.
	privWidget := fakePackage(t, private, acmeSrc, "1.0.0", "")
	fakePackage(t, public, acmeSrc, "2.0.0", "")
	// time is in both mirrors, newest in the private one, which includes only example.com.
	fakePackage(t, private, timeSrc, "0.15.0", "")
	pubTime := fakePackage(t, public, timeSrc, "0.14.2", "")
	// gadget is only in the public mirror, which excludes it.
	fakePackage(t, public, otherAcme, "1.0.0", "")

	rc := filepath.Join(t.TempDir(), "terraformrc")
	body := fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["example.com/*/*"]
  }
  filesystem_mirror {
    path    = %q
    exclude = ["example.com/*/*"]
  }
  network_mirror {
    url     = "https://mirror.example.net/providers/"
    include = ["hashicorp/*"]
  }
  direct {
    exclude = ["registry.terraform.io/hashicorp/*", "example.com/*/*"]
  }
}
`, private, public)
	if err := os.WriteFile(rc, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TF_CLI_CONFIG_FILE", rc)
	t.Setenv("TF_PLUGIN_CACHE_DIR", "")
	inst, err := Discover(nil)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	got, _, err := inst.Resolve([]Requirement{{Source: acmeSrc}, {Source: timeSrc}}, emptyLock(), false)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if got[acmeSrc].Dir != privWidget {
		t.Errorf("example.com/acme/widget from %s, want %s: the public mirror excludes example.com", got[acmeSrc].Dir, privWidget)
	}
	if got[timeSrc].Dir != pubTime {
		t.Errorf("hashicorp/time from %s, want %s: the private mirror includes only example.com", got[timeSrc].Dir, pubTime)
	}

	_, _, err = inst.Resolve([]Requirement{{Source: otherAcme}}, emptyLock(), false)
	if err == nil {
		t.Fatal("Resolve(example.com/acme/gadget): no error, but only a mirror that excludes it holds it")
	}
	for _, want := range []string{"searched " + private + " (found none)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(gadget) error %q\ndoes not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "network_mirror") || strings.Contains(err.Error(), "direct installation") {
		t.Errorf("Resolve(gadget) error %q names a network method that excludes the provider", err)
	}

	_, _, err = inst.Resolve([]Requirement{{Source: random}}, emptyLock(), false)
	if err == nil {
		t.Fatal("Resolve(hashicorp/random): no error for a provider in no mirror")
	}
	for _, want := range []string{"searched " + public + " (found none", "network_mirror https://mirror.example.net/providers/", "local directories only"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(random) error %q\ndoes not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "direct installation") {
		t.Errorf("Resolve(random) error %q names direct installation, which excludes hashicorp/*", err)
	}
}

func TestDiscoverInvalidPatterns(t *testing.T) {
	for _, pattern := range []string{"time", "a/b/c/d", "*/hashicorp/time", "example.com/*/time", "example.com/acme/terraform-provider-x", "exa mple.com/*/*"} {
		t.Run(pattern, func(t *testing.T) {
			rc := filepath.Join(t.TempDir(), "terraformrc")
			body := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = \"/mirror\"\n    include = [%q]\n  }\n}\n", pattern)
			if err := os.WriteFile(rc, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", t.TempDir())
			t.Setenv("TF_CLI_CONFIG_FILE", rc)
			_, err := Discover(nil)
			if err == nil || !strings.Contains(err.Error(), rc) || !strings.Contains(err.Error(), pattern) {
				t.Errorf("Discover: error %v, want one naming %s and the pattern %q", err, rc, pattern)
			}
		})
	}
}

func TestResolveNilLock(t *testing.T) {
	// A nil lock is an empty one.
	mirror := t.TempDir()
	dir := fakePackage(t, mirror, acmeSrc, "1.0.0", "")
	got, next, err := NewInstaller(mirror).Resolve([]Requirement{{Source: acmeSrc, Constraints: ">=1"}}, nil, false)
	if err != nil {
		t.Fatalf("Resolve(nil lock): %v", err)
	}
	if got[acmeSrc].Dir != dir {
		t.Errorf("Resolve(nil lock) picked %q, want %q", got[acmeSrc].Dir, dir)
	}
	want := LockedProvider{Version: "1.0.0", Constraints: ">= 1.0.0", Hashes: []string{h1(t, dir)}}
	if diff := cmp.Diff(want, next.Providers[acmeSrc]); diff != "" {
		t.Errorf("Resolve(nil lock) lock entry: -want +got:\n%s", diff)
	}
}
