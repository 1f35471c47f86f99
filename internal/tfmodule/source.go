// Package tfmodule names Terraform module sources and reads and writes the modules manifest
// (.terraform/modules/modules.json) exactly as terraform does, so that a configuration
// prepared by `terraform init` and one prepared by cairn are interchangeable. It makes no
// network requests and reads no disk: installing is package install's job, on the client.
package tfmodule

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"
	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// Kind is how a module source is installed.
type Kind int

const (
	Local    Kind = iota // a directory relative to the calling module: "./x", "../x"
	Registry             // a module registry address: "ns/name/system", "host/ns/name/system"
	Remote               // a package go-getter fetches: "git::https://...", "github.com/o/r", "https://.../x.zip"
)

// Source is a parsed module source address.
type Source struct {
	Kind Kind
	// Local is the cleaned path of a Local source, "./" or "../" first.
	Local string
	// Package is the registry package of a Registry source.
	Package tfaddr.ModulePackage
	// Addr is the go-getter address of a Remote source's package, without its subdirectory.
	Addr string
	// Subdir is the directory within the package ("//sub" in the address).
	Subdir string
}

// String is the source in terraform's normal form, as modules.json records it.
func (s Source) String() string {
	switch s.Kind {
	case Local:
		return s.Local
	case Registry:
		if s.Subdir != "" {
			return s.Package.String() + "//" + s.Subdir
		}
		return s.Package.String()
	}
	if s.Subdir == "" {
		return s.Addr
	}
	if base, query, ok := strings.Cut(s.Addr, "?"); ok {
		return base + "//" + s.Subdir + "?" + query
	}
	return s.Addr + "//" + s.Subdir
}

// IsLocal reports whether raw is a local path, as terraform reads it.
func IsLocal(raw string) bool {
	for _, p := range []string{"./", "../", `.\`, `..\`} {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return raw == "." || raw == ".."
}

// ErrMaybeRelative is a source that is no known kind of address but could be a local path
// written without "./".
var ErrMaybeRelative = errors.New("no supported module source type")

// ParseSource reads a module call's source. With a version argument the source must be a
// registry address, as in terraform.
func ParseSource(raw string, hasVersion bool) (Source, error) {
	if IsLocal(raw) {
		if hasVersion {
			return Source{}, fmt.Errorf("can't use local directory %q as a module registry address", raw)
		}
		clean := path.Clean(strings.ReplaceAll(raw, `\`, "/"))
		if clean != ".." && !strings.HasPrefix(clean, "../") {
			clean = "./" + clean
		}
		return Source{Kind: Local, Local: clean}, nil
	}
	reg, err := tfaddr.ParseModuleSource(raw)
	if err == nil {
		return Source{Kind: Registry, Package: reg.Package, Subdir: reg.Subdir}, nil
	}
	if hasVersion {
		return Source{}, err
	}
	return parseRemote(raw)
}

// parseRemote expands go-getter shorthands and splits off the subdirectory.
func parseRemote(raw string) (Source, error) {
	pkg, sub := getter.SourceDirSubdir(raw)
	if sub != "" {
		sub = path.Clean(sub)
	}
	if strings.HasPrefix(sub, "../") || sub == ".." {
		return Source{}, fmt.Errorf("subdirectory path %q leads outside of the module package", sub)
	}
	norm, err := detect(pkg)
	if err != nil || norm == "" {
		if !filepath.IsAbs(pkg) {
			return Source{}, fmt.Errorf("%w for %s", ErrMaybeRelative, raw)
		}
		norm = "file://" + filepath.ToSlash(pkg)
		if !strings.HasPrefix(filepath.ToSlash(pkg), "/") {
			norm = "file:///" + filepath.ToSlash(pkg)
		}
	}
	norm, more := getter.SourceDirSubdir(norm)
	if more != "" {
		if sub != "" {
			sub = path.Join(more, sub)
		} else {
			sub = path.Clean(more)
		}
		if strings.HasPrefix(sub, "../") {
			return Source{}, fmt.Errorf("subdirectory path %q leads outside of the module package", sub)
		}
	}
	if _, err := url.Parse(strings.TrimPrefix(norm, forcedPrefix(norm))); err != nil {
		return Source{}, err
	}
	return Source{Kind: Remote, Addr: norm, Subdir: sub}, nil
}

// forcedPrefix is "git::" of "git::https://...", "" without one.
func forcedPrefix(s string) string {
	if i := strings.Index(s, "::"); i > 0 && !strings.ContainsAny(s[:i], "/:") {
		return s[:i+2]
	}
	return ""
}
