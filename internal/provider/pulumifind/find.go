// Package pulumifind finds installed Pulumi resource provider plugins (`pulumi-resource-<pkg>`)
// where Pulumi keeps them, and never downloads one: the project's `plugins:` with local
// paths, then cairn's --plugin-dir directories, then `$PULUMI_HOME/plugins` (default
// `~/.pulumi/plugins`). The directories share Pulumi's plugin cache layout,
// `resource-<pkg>-v<semver>/pulumi-resource-<pkg>`.
package pulumifind

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"

	// Pulumi's own version library: the same tolerant parsing and equality as its plugin cache.
	"github.com/blang/semver"
)

// ProjectPlugin is one entry of a Pulumi.yaml's `plugins: providers:` list.
type ProjectPlugin struct {
	Name    string
	Path    string // the directory holding pulumi-resource-<Name>; relative paths are the caller's to resolve
	Version string // optional; without it the entry serves any requested version
}

// Finder searches its places in order. The zero value searches $PULUMI_HOME/plugins only.
type Finder struct {
	Project    []ProjectPlugin
	PluginDirs []string // cairn's --plugin-dir, searched before the Pulumi home
	// PulumiHome overrides $PULUMI_HOME (then ~/.pulumi); its plugins directory is searched last.
	PulumiHome string
}

// Plugin is a found provider plugin.
type Plugin struct {
	Name       string
	Version    string // empty for a project plugin declared without a version
	Executable string
}

// NotFoundError says which plugin was looked for, where, and which versions were there.
type NotFoundError struct {
	Name    string
	Version string   // the pinned version, empty when any would do
	Places  []string // where it was looked for, in order
	Found   []string // versions present that did not match, newest first
}

func (e *NotFoundError) Error() string {
	what := binaryPrefix + e.Name
	if e.Version != "" {
		what += " " + e.Version
	}
	msg := fmt.Sprintf("no %s in %s", what, strings.Join(e.Places, ", "))
	if len(e.Found) > 0 {
		return msg + " (found " + strings.Join(e.Found, ", ") + ")"
	}
	return msg + " (cairn never downloads plugins: install it with `pulumi plugin install resource " +
		strings.TrimSpace(e.Name+" "+e.Version) + "` or put it in a --plugin-dir)"
}

const binaryPrefix = "pulumi-resource-"

// installingDir matches the temporary directories older Pulumi versions extracted into.
var installingDir = regexp.MustCompile(`\.tmp[0-9]+$`)

// Find returns the plugin for pkg: exactly version when it is not empty, otherwise the newest
// installed, a stable release before any pre-release. The first place that holds a match wins,
// so a --plugin-dir shadows the Pulumi home as Pulumi's own ambient plugins shadow its cache.
func (f Finder) Find(pkg, version string) (Plugin, error) {
	var want *semver.Version
	if version != "" {
		v, err := semver.ParseTolerant(version)
		if err != nil {
			return Plugin{}, fmt.Errorf("%s: invalid version %q: %w", binaryPrefix+pkg, version, err)
		}
		want = &v
	}
	nf := &NotFoundError{Name: pkg, Version: version}
	var found []semver.Version

	if p, ok, err := f.fromProject(pkg, want, &found); err != nil || ok {
		return p, err
	}
	if len(f.Project) > 0 {
		nf.Places = append(nf.Places, "the project's plugins")
	}
	dirs := append([]string(nil), f.PluginDirs...)
	home, err := f.pluginHome()
	if err != nil {
		return Plugin{}, err
	}
	dirs = append(dirs, home)
	for _, dir := range dirs {
		nf.Places = append(nf.Places, dir)
		cands, err := scan(dir, pkg)
		if err != nil {
			return Plugin{}, err
		}
		if c, ok := pick(cands, want); ok {
			return Plugin{Name: pkg, Version: c.version.String(), Executable: c.exe}, nil
		}
		for _, c := range cands {
			found = append(found, c.version)
		}
	}
	nf.Found = newestFirst(found)
	return Plugin{}, nf
}

// fromProject applies Pulumi's rules for project plugins: a version mismatch skips the entry,
// an entry without a version serves any request, two entries for one version are an error.
func (f Finder) fromProject(pkg string, want *semver.Version, found *[]semver.Version) (Plugin, bool, error) {
	seen := map[string]bool{}
	var match *Plugin
	for _, pp := range f.Project {
		if pp.Name != pkg {
			continue
		}
		var have *semver.Version
		if pp.Version != "" {
			v, err := semver.ParseTolerant(pp.Version)
			if err != nil {
				return Plugin{}, false, fmt.Errorf("project plugin %s: invalid version %q: %w", pkg, pp.Version, err)
			}
			have = &v
			if seen[v.String()] {
				return Plugin{}, false, fmt.Errorf("project plugins list %s %s twice", pkg, v)
			}
			seen[v.String()] = true
		}
		if have != nil && want != nil && !have.EQ(*want) {
			*found = append(*found, *have)
			continue
		}
		if match == nil {
			p := Plugin{Name: pkg, Executable: executable(filepath.Clean(pp.Path), pkg)}
			if have != nil {
				p.Version = have.String()
			}
			match = &p
		}
	}
	if match == nil {
		return Plugin{}, false, nil
	}
	return *match, true, nil
}

func (f Finder) pluginHome() (string, error) {
	home := f.PulumiHome
	if home == "" {
		home = os.Getenv("PULUMI_HOME")
	}
	if home == "" {
		user, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the Pulumi plugin cache: set PULUMI_HOME: %w", err)
		}
		home = filepath.Join(user, ".pulumi")
	}
	return filepath.Join(home, "plugins"), nil
}

type candidate struct {
	version semver.Version
	exe     string
}

// scan lists the finished installs of pkg in dir; a missing dir holds none.
func scan(dir, pkg string) ([]candidate, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read plugin directory: %w", err)
	}
	prefix := "resource-" + pkg + "-v"
	var out []candidate
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || installingDir.MatchString(name) {
			continue
		}
		v, err := semver.ParseTolerant(strings.TrimPrefix(name, prefix))
		if err != nil {
			continue // not a plugin directory, as Pulumi skips it
		}
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path + ".partial"); err == nil {
			continue // an install that has not finished
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot check plugin install: %w", err)
		}
		exe := executable(path, pkg)
		if _, err := os.Stat(exe); err != nil {
			continue // a directory without the binary cannot be launched
		}
		out = append(out, candidate{version: v, exe: exe})
	}
	return out, nil
}

// pick returns the exact match of want, or with want nil the newest stable (newest
// pre-release when there is no stable one).
func pick(cands []candidate, want *semver.Version) (candidate, bool) {
	var best *candidate
	for i := range cands {
		c := &cands[i]
		switch {
		case want != nil:
			if c.version.EQ(*want) && (best == nil || c.version.GT(best.version)) {
				best = c
			}
		case best == nil, better(c.version, best.version):
			best = c
		}
	}
	if best == nil {
		return candidate{}, false
	}
	return *best, true
}

// better orders versions as Pulumi's newest-installed choice does: stable beats pre-release,
// then the greater version.
func better(a, b semver.Version) bool {
	aPre, bPre := len(a.Pre) > 0, len(b.Pre) > 0
	if aPre != bPre {
		return bPre
	}
	return a.GT(b)
}

func newestFirst(vs []semver.Version) []string {
	sort.Slice(vs, func(i, j int) bool { return vs[i].GT(vs[j]) })
	var out []string
	for _, v := range vs {
		if s := v.String(); len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// executable is the plugin binary in dir, with the extension Windows needs when present.
func executable(dir, pkg string) string {
	base := filepath.Join(dir, binaryPrefix+pkg)
	if runtime.GOOS == "windows" {
		for _, ext := range []string{".exe", ".cmd"} {
			if _, err := os.Stat(base + ext); err == nil {
				return base + ext
			}
		}
	}
	return base
}
