// Package tfinstall finds Terraform provider packages where terraform users keep them: the
// filesystem mirrors of terraform's CLI configuration (TF_CLI_CONFIG_FILE, ~/.terraformrc),
// its plugin cache and implied local mirror directories, and cairn's own --plugin-dir. It
// resolves version constraints to the newest match and keeps a .terraform.lock.hcl.
package tfinstall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/cairn-dev/cairn/internal/addr"
)

// Installer searches a fixed list of directories. It is safe for concurrent use.
type Installer struct {
	dirs []string
}

// Requirement is one provider a configuration needs.
type Requirement struct {
	Source      addr.Provider
	Constraints string
}

// Package is a provider found on disk.
type Package struct {
	Source     addr.Provider
	Version    string
	Dir        string
	Executable string
	Hash       string // h1: hash of Dir, as terraform computes it
	// Archive is the zip of a mirror's packed layout; Resolve extracts it into the user's
	// cache and then sets Dir and Executable.
	Archive string
}

type cliConfig struct {
	PluginCacheDir string `hcl:"plugin_cache_dir,optional"`
	Installation   []struct {
		Mirrors []struct {
			Path string `hcl:"path"`
		} `hcl:"filesystem_mirror,block"`
		Remain hcl.Body `hcl:",remain"`
	} `hcl:"provider_installation,block"`
	Remain hcl.Body `hcl:",remain"`
}

// Discover builds the search list: extra (cairn's --plugin-dir) first, then the filesystem
// mirrors and plugin cache of terraform's CLI configuration, then terraform's implied local
// mirror directories when the configuration names no provider_installation.
func Discover(extra []string) (*Installer, error) {
	dirs := append([]string(nil), extra...)
	path := os.Getenv("TF_CLI_CONFIG_FILE")
	if path == "" {
		path = os.Getenv("TERRAFORM_CONFIG")
	}
	home, _ := os.UserHomeDir()
	if path == "" && home != "" {
		path = filepath.Join(home, ".terraformrc")
	}
	explicit := false
	if src, err := os.ReadFile(path); err == nil {
		f, ds := hclparse.NewParser().ParseHCL(src, path)
		var cfg cliConfig
		if !ds.HasErrors() {
			ds = gohcl.DecodeBody(f.Body, nil, &cfg)
		}
		if ds.HasErrors() {
			return nil, fmt.Errorf("invalid CLI configuration %s: %s", path, ds.Error())
		}
		for _, pi := range cfg.Installation {
			explicit = true
			for _, m := range pi.Mirrors {
				dirs = append(dirs, m.Path)
			}
		}
		if cfg.PluginCacheDir != "" {
			dirs = append(dirs, cfg.PluginCacheDir)
		}
	}
	if d := os.Getenv("TF_PLUGIN_CACHE_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if !explicit && home != "" {
		dirs = append(dirs, filepath.Join(home, ".terraform.d", "plugins"), filepath.Join(home, ".local", "share", "terraform", "plugins"))
	}
	return &Installer{dirs: dirs}, nil
}

// NewInstaller searches exactly dirs.
func NewInstaller(dirs ...string) *Installer { return &Installer{dirs: dirs} }

// versions lists the packages of src found in every directory, newest first.
func (i *Installer) versions(src addr.Provider) []Package {
	platform := runtime.GOOS + "_" + runtime.GOARCH
	seen := map[string]bool{}
	var out []Package
	for _, dir := range i.dirs {
		base := filepath.Join(dir, src.Host, src.Namespace, src.Type)
		entries, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if v, ok := packed(e.Name(), src.Type, platform); ok {
				if !seen[v.String()] {
					seen[v.String()] = true
					out = append(out, Package{Source: src, Version: v.String(), Archive: filepath.Join(base, e.Name())})
				}
				continue
			}
			v, err := version.NewVersion(e.Name())
			if err != nil || seen[v.String()] {
				continue
			}
			pdir := filepath.Join(base, e.Name(), platform)
			exe := executable(pdir, src.Type)
			if exe == "" {
				continue
			}
			seen[v.String()] = true
			out = append(out, Package{Source: src, Version: v.String(), Dir: pdir, Executable: exe})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		return version.Must(version.NewVersion(out[a].Version)).GreaterThan(version.Must(version.NewVersion(out[b].Version)))
	})
	return out
}

// executable is the first file named terraform-provider-TYPE, alone or followed by "_" or
// ".", as terraform picks it.
func executable(dir, typ string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	prefix := "terraform-provider-" + typ
	for _, e := range entries {
		n := e.Name()
		if n == prefix || strings.HasPrefix(n, prefix+"_") || strings.HasPrefix(n, prefix+".") {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// Resolve picks a package for every requirement: the locked version when lock has one that
// still meets the constraints (unless upgrade), else the newest that does. It returns the
// packages and the lock to keep.
func (i *Installer) Resolve(reqs []Requirement, lock *Lock, upgrade bool) (map[addr.Provider]Package, *Lock, error) {
	out := map[addr.Provider]Package{}
	next := &Lock{Providers: map[addr.Provider]LockedProvider{}}
	var errs []error
	for _, r := range reqs {
		cons, err := version.NewConstraint(orAny(r.Constraints))
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %s: invalid version constraint %q: %w", r.Source, r.Constraints, err))
			continue
		}
		found := i.versions(r.Source)
		locked, isLocked := lock.Providers[r.Source]
		var pick *Package
		for k := range found {
			v := version.Must(version.NewVersion(found[k].Version))
			if !cons.Check(v) || (v.Prerelease() != "" && !exactly(r.Constraints, v)) {
				continue
			}
			if isLocked && !upgrade && found[k].Version != locked.Version {
				continue
			}
			pick = &found[k]
			break
		}
		if pick == nil {
			errs = append(errs, notFound(r, found, i.dirs, locked, isLocked && !upgrade))
			continue
		}
		if pick.Archive != "" {
			if err := unpack(pick); err != nil {
				errs = append(errs, fmt.Errorf("provider %s %s: %w", r.Source, pick.Version, err))
				continue
			}
		}
		h, err := dirhash.HashDir(pick.Dir, "", dirhash.Hash1)
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %s %s: cannot hash %s: %w", r.Source, pick.Version, pick.Dir, err))
			continue
		}
		pick.Hash = h
		if isLocked && !upgrade && len(locked.Hashes) > 0 && !contains(locked.Hashes, h) {
			errs = append(errs, fmt.Errorf("provider %s %s: the package in %s does not match the checksums in the lock file (%s); it may have been tampered with, or run with --upgrade to accept it", r.Source, pick.Version, pick.Dir, h))
			continue
		}
		out[r.Source] = *pick
		lp := LockedProvider{Version: pick.Version, Constraints: r.Constraints, Hashes: []string{h}}
		if isLocked && !upgrade {
			lp.Hashes = locked.Hashes
		}
		next.Providers[r.Source] = lp
	}
	return out, next, errors.Join(errs...)
}

func orAny(c string) string {
	if strings.TrimSpace(c) == "" {
		return ">= 0.0.0"
	}
	return c
}

func exactly(constraints string, v *version.Version) bool {
	for _, c := range strings.Split(constraints, ",") {
		c = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c), "="))
		if c == v.Original() || c == v.String() {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func notFound(r Requirement, found []Package, dirs []string, locked LockedProvider, wasLocked bool) error {
	var vs []string
	for _, p := range found {
		vs = append(vs, p.Version)
	}
	have := "found none"
	if len(vs) > 0 {
		have = "found " + strings.Join(vs, ", ")
	}
	if wasLocked {
		return fmt.Errorf("provider %s: locked version %s (from %s) is not available or does not match the constraint %q; searched %s (%s); run with --upgrade to choose another",
			r.Source, locked.Version, ".terraform.lock.hcl", orAny(r.Constraints), strings.Join(dirs, ", "), have)
	}
	return fmt.Errorf("provider %s: no version matching %q found; searched %s (%s)", r.Source, orAny(r.Constraints), strings.Join(dirs, ", "), have)
}
