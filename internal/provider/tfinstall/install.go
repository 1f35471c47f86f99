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
	// only holds, for the directory at the same index of dirs, which providers it may
	// serve (a filesystem_mirror's include and exclude); a missing entry or zero value
	// serves every provider.
	only []selector
	// remote describes the installation methods of the CLI configuration that need the
	// network (network_mirror, direct), which cairn does not use; it only names them
	// when a provider is not found.
	remote []remoteMethod
}

// selector is the include and exclude of an installation method, as terraform applies
// them: a provider is served when no exclude pattern matches it and, if there are include
// patterns, one of them does.
type selector struct {
	include, exclude []addr.Provider // "*" in any part matches every value
}

func (s selector) serves(p addr.Provider) bool {
	switch {
	case matchesAny(s.exclude, p):
		return false
	case len(s.include) > 0:
		return matchesAny(s.include, p)
	default:
		return true
	}
}

func matchesAny(patterns []addr.Provider, p addr.Provider) bool {
	part := func(pat, v string) bool { return pat == "*" || strings.EqualFold(pat, v) }
	for _, pat := range patterns {
		if part(pat.Host, p.Host) && part(pat.Namespace, p.Namespace) && part(pat.Type, p.Type) {
			return true
		}
	}
	return false
}

// parsePatterns parses provider matching patterns as terraform does:
// [HOST/]NAMESPACE/TYPE, where each part may be the wildcard "*", the host only if the
// namespace and type are too, and the namespace only if the type is too.
func parsePatterns(strs []string) ([]addr.Provider, error) {
	var out []addr.Provider
	for _, str := range strs {
		parts := strings.Split(str, "/")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("invalid provider matching pattern %q: must have either two or three slash-separated segments", str)
		}
		if len(parts) == 2 {
			parts = append([]string{addr.DefaultRegistryHost}, parts...)
		}
		// Validate the literal parts with the provider address parser, standing in a
		// valid name for each wildcard.
		probe := append([]string(nil), parts...)
		for i := range probe {
			if probe[i] == "*" {
				probe[i] = "x"
			}
		}
		p, err := addr.ParseProvider(strings.Join(probe, "/"))
		if err != nil {
			return nil, fmt.Errorf("invalid provider matching pattern %q: %w", str, err)
		}
		if parts[0] == "*" {
			p.Host = "*"
		}
		if parts[1] == "*" {
			p.Namespace = "*"
		}
		if parts[2] == "*" {
			p.Type = "*"
		}
		p.Type = strings.ToLower(p.Type)
		if p.Host == "*" && (p.Namespace != "*" || p.Type != "*") {
			return nil, fmt.Errorf("invalid provider matching pattern %q: hostname can be a wildcard only if both namespace and provider type are also wildcards", str)
		}
		if p.Namespace == "*" && p.Type != "*" {
			return nil, fmt.Errorf("invalid provider matching pattern %q: namespace can be a wildcard only if the provider type is also a wildcard", str)
		}
		out = append(out, p)
	}
	return out, nil
}

// remoteMethod is a network_mirror (URL set) or direct installation method.
type remoteMethod struct {
	url string
	selector
}

func (m remoteMethod) String() string {
	if m.url == "" {
		return "direct installation from the origin registry"
	}
	return "network_mirror " + m.url
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
			Path    string   `hcl:"path"`
			Include []string `hcl:"include,optional"`
			Exclude []string `hcl:"exclude,optional"`
		} `hcl:"filesystem_mirror,block"`
		NetworkMirrors []struct {
			URL     string   `hcl:"url"`
			Include []string `hcl:"include,optional"`
			Exclude []string `hcl:"exclude,optional"`
		} `hcl:"network_mirror,block"`
		Direct []struct {
			Include []string `hcl:"include,optional"`
			Exclude []string `hcl:"exclude,optional"`
		} `hcl:"direct,block"`
		Remain hcl.Body `hcl:",remain"` // dev_overrides, which cairn does not apply
	} `hcl:"provider_installation,block"`
	Remain hcl.Body `hcl:",remain"`
}

// CLIConfigPath is terraform's CLI configuration file: TF_CLI_CONFIG_FILE, else
// TERRAFORM_CONFIG, else ~/.terraformrc; "" when none can be named.
func CLIConfigPath() string {
	path := os.Getenv("TF_CLI_CONFIG_FILE")
	if path == "" {
		path = os.Getenv("TERRAFORM_CONFIG")
	}
	if home, _ := os.UserHomeDir(); path == "" && home != "" {
		path = filepath.Join(home, ".terraformrc")
	}
	return path
}

// Discover builds the search list: extra (cairn's --plugin-dir) first, then the filesystem
// mirrors and plugin cache of terraform's CLI configuration, then terraform's implied local
// mirror directories when the configuration names no provider_installation. A
// filesystem_mirror serves only the providers its include and exclude allow, as in
// terraform; network_mirror and direct methods are accepted but not used, since cairn
// installs from local directories only.
func Discover(extra []string) (*Installer, error) {
	inst := &Installer{dirs: append([]string(nil), extra...)}
	only := make([]selector, len(extra))
	path := CLIConfigPath()
	home, _ := os.UserHomeDir()
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
		sel := func(method string, include, exclude []string) (selector, error) {
			var s selector
			var err error
			if s.include, err = parsePatterns(include); err == nil {
				s.exclude, err = parsePatterns(exclude)
			}
			if err != nil {
				return s, fmt.Errorf("invalid CLI configuration %s: %s: %w", path, method, err)
			}
			return s, nil
		}
		for _, pi := range cfg.Installation {
			explicit = true
			for _, m := range pi.Mirrors {
				s, err := sel("filesystem_mirror "+m.Path, m.Include, m.Exclude)
				if err != nil {
					return nil, err
				}
				inst.dirs = append(inst.dirs, m.Path)
				only = append(only, s)
			}
			for _, m := range pi.NetworkMirrors {
				s, err := sel("network_mirror "+m.URL, m.Include, m.Exclude)
				if err != nil {
					return nil, err
				}
				inst.remote = append(inst.remote, remoteMethod{url: m.URL, selector: s})
			}
			for _, m := range pi.Direct {
				s, err := sel("direct", m.Include, m.Exclude)
				if err != nil {
					return nil, err
				}
				inst.remote = append(inst.remote, remoteMethod{selector: s})
			}
		}
		if cfg.PluginCacheDir != "" {
			inst.dirs = append(inst.dirs, cfg.PluginCacheDir)
		}
	}
	if d := os.Getenv("TF_PLUGIN_CACHE_DIR"); d != "" {
		inst.dirs = append(inst.dirs, d)
	}
	if !explicit && home != "" {
		inst.dirs = append(inst.dirs, filepath.Join(home, ".terraform.d", "plugins"), filepath.Join(home, ".local", "share", "terraform", "plugins"))
	}
	inst.only = only
	return inst, nil
}

// searched lists the directories that may serve src.
func (i *Installer) searched(src addr.Provider) []string {
	var out []string
	for k, dir := range i.dirs {
		if k < len(i.only) && !i.only[k].serves(src) {
			continue
		}
		out = append(out, dir)
	}
	return out
}

// NewInstaller searches exactly dirs.
func NewInstaller(dirs ...string) *Installer { return &Installer{dirs: dirs} }

// versions lists the packages of src found in every directory, newest first.
func (i *Installer) versions(src addr.Provider) []Package {
	platform := runtime.GOOS + "_" + runtime.GOARCH
	seen := map[string]bool{}
	var out []Package
	for _, dir := range i.searched(src) {
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
	if lock == nil {
		lock = &Lock{}
	}
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
			errs = append(errs, i.notFound(r, found, locked, isLocked && !upgrade))
			continue
		}
		if pick.Archive != "" {
			if err := unpack(pick); err != nil {
				errs = append(errs, fmt.Errorf("provider %s %s: %w", r.Source, pick.Version, err))
				continue
			}
		}
		h, err := cachedHashDir(pick.Dir)
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
		lp := LockedProvider{Version: pick.Version, Constraints: VersionConstraintsString(r.Constraints), Hashes: []string{h}}
		if isLocked && !upgrade {
			lp.Hashes = locked.Hashes
		}
		next.Providers[r.Source] = lp
	}
	return out, next, errors.Join(errs...)
}

// hashDir is terraform's h1: hash of a package directory. Like terraform, it resolves
// symlinks first: terraform init links each platform directory of .terraform/providers to
// the package it installed from, and a link is hashed as the directory it points to.
func hashDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return dirhash.HashDir(real, "", dirhash.Hash1)
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

func (i *Installer) notFound(r Requirement, found []Package, locked LockedProvider, wasLocked bool) error {
	dirs := i.searched(r.Source)
	var vs []string
	for _, p := range found {
		vs = append(vs, p.Version)
	}
	have := "found none"
	if len(vs) > 0 {
		have = "found " + strings.Join(vs, ", ")
	}
	searched := strings.Join(dirs, ", ")
	switch {
	case len(i.dirs) == 0:
		searched = "no directory"
	case len(dirs) == 0:
		searched = "no directory (no filesystem_mirror of the CLI configuration includes it)"
	}
	var remote []string
	for _, m := range i.remote {
		if m.serves(r.Source) {
			remote = append(remote, m.String())
		}
	}
	if len(remote) > 0 {
		have += "; the CLI configuration also names " + strings.Join(remote, " and ") + ", which cairn does not use: it installs providers from local directories only (fill a filesystem_mirror, e.g. with terraform providers mirror)"
	}
	if wasLocked {
		return fmt.Errorf("provider %s: locked version %s (from %s) is not available or does not match the constraint %q; searched %s (%s); run with --upgrade to choose another",
			r.Source, locked.Version, ".terraform.lock.hcl", orAny(r.Constraints), searched, have)
	}
	return fmt.Errorf("provider %s: no version matching %q found; searched %s (%s)", r.Source, orAny(r.Constraints), searched, have)
}
