// Package install installs the modules a Terraform configuration calls, on the client, as
// `terraform init` does: registry modules through the module registry protocol (Registry),
// git, archive and other remote packages through hashicorp/go-getter (S3 and GCS are refused),
// each into .terraform/modules/<key>, recorded in .terraform/modules/modules.json. What is
// installed and still matches its call's source and version is used again without the network.
package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"

	"github.com/cairn-dev/cairn/internal/template/tflang"
	"github.com/cairn-dev/cairn/internal/tfmodule"
)

// Options say what to install.
type Options struct {
	Dir      string    // the root module's directory
	Upgrade  bool      // install every remote module again, the newest allowed version
	Registry *Registry // nil: CLIRegistry, made when a registry module first needs it
}

// Result is what Install found.
type Result struct {
	// Manifest records every module call, local ones included, as terraform does.
	Manifest tfmodule.Manifest
	// Remote reports whether a call's source is a registry or remote package.
	Remote bool
	// Installed names the modules downloaded by this run ("label", "a.b").
	Installed []string
	// Dirs lists the directory of every module the configuration calls, relative to the
	// root and slash-separated ("modules/net", "../..", ".terraform/modules/label"), each
	// once, in the order they were found.
	Dirs []string
}

// maxFileSize bounds a configuration file read while looking for module calls.
const maxFileSize = 4 << 20

// Install installs the remote modules the configuration in o.Dir calls, directly or through
// other modules, that are missing or no longer match their call, and writes modules.json
// when a call is remote or the file existed already (a configuration of local modules only
// is left as it is). Diagnostics name the source of the failing call.
func Install(ctx context.Context, o Options) (Result, hcl.Diagnostics) {
	manPath := filepath.Join(o.Dir, filepath.FromSlash(tfmodule.ManifestPath))
	old, readErr := os.ReadFile(manPath)
	man, err := tfmodule.ParseManifest(old)
	if err != nil {
		if readErr == nil {
			man = tfmodule.Manifest{} // an unreadable manifest is replaced, as everything in it is reinstalled
		}
	}
	in := &installer{o: o, man: man, versions: map[string][]*version.Version{}, fetched: map[string]string{},
		seen: map[string]bool{}, pkgs: map[string]pkg{}}
	in.man[""] = tfmodule.Record{Key: "", Dir: "."}
	in.walk(ctx, nil, ".")
	res := Result{Manifest: in.man, Remote: in.remote, Installed: in.installed, Dirs: in.dirs}
	if in.diags.HasErrors() || (!in.remote && readErr != nil) {
		return res, in.diags
	}
	if b := in.man.Bytes(); !bytes.Equal(b, old) {
		if err := os.MkdirAll(filepath.Dir(manPath), 0o755); err == nil {
			err = os.WriteFile(manPath, b, 0o644)
		}
		if err != nil {
			in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Failed to update module manifest",
				Detail: fmt.Sprintf("Unable to write the module manifest file: %s", err)})
		}
	}
	return res, in.diags
}

type installer struct {
	o         Options
	man       tfmodule.Manifest
	diags     hcl.Diagnostics
	remote    bool
	installed []string
	dirs      []string
	seen      map[string]bool
	versions  map[string][]*version.Version // registry package -> its versions
	fetched   map[string]string             // package address -> where this run put it
	pkgs      map[string]pkg                // module key -> the downloaded package it is in
}

// pkg is a downloaded package a module is in: a remote or registry module's, shared with
// the local modules it calls. The root configuration's modules are in none (the zero pkg).
type pkg struct {
	root string // its directory relative to the configuration root: .terraform/modules/<key>
	addr string // its address, as terraform names it in errors
}

// walk installs the calls of the module in dir (relative to the root) at call path p.
func (in *installer) walk(ctx context.Context, p []string, dir string) {
	if dir != "." && !in.seen[dir] {
		in.seen[dir] = true
		in.dirs = append(in.dirs, dir)
	}
	files, err := readModule(in.o.Dir, dir)
	if errors.Is(err, os.ErrNotExist) {
		return // a local module directory that does not exist: parsing reports it at its call
	}
	if err != nil {
		in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unreadable module directory",
			Detail: fmt.Sprintf("The directory %s could not be read: %s.", dir, err)})
		return
	}
	for _, call := range tflang.ModuleCalls(files, dir) {
		cp := append(append([]string(nil), p...), call.Name)
		if len(cp) > 32 {
			in.fail(call, "Module calls nest too deeply", "Module calls within module calls go more than 32 levels deep; a module probably calls itself.")
			continue
		}
		if ctx.Err() != nil {
			in.fail(call, "Module installation was interrupted", ctx.Err().Error())
			return
		}
		if childDir, ok := in.install(ctx, p, cp, call); ok {
			in.walk(ctx, cp, childDir)
		}
	}
}

// fail records an error at the call's source.
func (in *installer) fail(call tflang.ModuleCall, summary, detail string) {
	rng := call.SourceRange
	in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng})
}

// install makes sure the call at path cp is installed and returns its directory.
func (in *installer) install(ctx context.Context, parent, cp []string, call tflang.ModuleCall) (string, bool) {
	key := tfmodule.Key(cp)
	parentDir, parentPkg := in.man[tfmodule.Key(parent)].Dir, in.pkgs[tfmodule.Key(parent)]
	if call.Source.Kind != tfmodule.Local {
		in.remote = true
		if parentPkg.root != "" && call.Source.Kind == tfmodule.Remote && onThisComputer(call.Source.Addr) {
			in.fail(call, "Module package on this computer", fmt.Sprintf("Module %q (%s:%d) is called from the downloaded package %q, "+
				"but its source %q is a directory on this computer. cairn sends the files of every module to the server, so a downloaded "+
				"module may use only directories of its own package (\"./…\") and other remote packages.",
				call.Name, call.SourceRange.Filename, call.SourceRange.Start.Line, parentPkg.addr, call.Source.String()))
			return "", false
		}
	}
	if rec, ok := in.man[key]; ok {
		if in.o.Upgrade && call.Source.Kind != tfmodule.Local || rec.Check(call.Source, call.Versions) != "" {
			delete(in.man, key)
			for k := range in.man {
				if strings.HasPrefix(k, key+".") {
					delete(in.man, k)
				}
			}
		} else if p := packageOf(key, call.Source); call.Source.Kind != tfmodule.Local && inside(rec.Dir, p.root) {
			if fi, err := os.Stat(filepath.Join(in.o.Dir, filepath.FromSlash(rec.Dir))); err == nil && fi.IsDir() {
				in.pkgs[key] = p
				return rec.Dir, true
			}
		}
	}
	switch call.Source.Kind {
	case tfmodule.Local:
		// Resolved again each time, not taken from the manifest, so that leaving the
		// package is refused also when terraform init recorded it.
		dir := path.Join(parentDir, call.Source.Local)
		if parentPkg.root != "" && !in.staysInside(dir, parentPkg.root) {
			in.fail(call, "Local module path escapes module package", fmt.Sprintf("The given source directory for %s would be outside of its "+
				"containing package %q. Local source addresses starting with \"../\" must stay within the same package that the calling module belongs to.",
				moduleAddr(cp), parentPkg.addr))
			delete(in.man, key)
			return "", false
		}
		in.pkgs[key] = parentPkg
		in.man[key] = tfmodule.Record{Key: key, Source: call.Source.String(), Dir: dir}
		return dir, true
	case tfmodule.Registry:
		return in.installRegistry(ctx, key, call)
	}
	if call.Version != "" {
		in.fail(call, "Invalid version constraint", fmt.Sprintf("Cannot apply a version constraint to module %q because it doesn't come from a module registry.", call.Name))
		return "", false
	}
	dir, ok := in.fetch(ctx, key, call, call.Source)
	if ok {
		in.pkgs[key] = packageOf(key, call.Source)
		in.man[key] = tfmodule.Record{Key: key, Source: call.Source.String(), Dir: dir}
	}
	return dir, ok
}

// packageOf is the package a remote or registry call at key is installed as.
func packageOf(key string, src tfmodule.Source) pkg {
	p := pkg{root: path.Join(tfmodule.ModulesDir, key), addr: src.Addr}
	if src.Kind == tfmodule.Registry {
		p.addr = src.Package.String()
	}
	return p
}

// inside reports whether dir is root or below it, both relative to the configuration root.
func inside(dir, root string) bool {
	return dir == root || strings.HasPrefix(dir, root+"/")
}

// staysInside reports whether the module directory dir is inside the package directory
// root, by name and, when it exists, once symbolic links are followed (a package may hold
// a link out of it).
func (in *installer) staysInside(dir, root string) bool {
	if !inside(dir, root) {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(in.o.Dir, filepath.FromSlash(dir)))
	if err != nil {
		return true // missing: parsing reports it at its call
	}
	realRoot, err := filepath.EvalSymlinks(filepath.Join(in.o.Dir, filepath.FromSlash(root)))
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// moduleAddr is terraform's name of the module at call path p: "module.a.module.b".
func moduleAddr(p []string) string {
	return "module." + strings.Join(p, ".module.")
}

// installRegistry picks the newest version of a registry module its constraints allow and
// fetches the package the registry names for it.
func (in *installer) installRegistry(ctx context.Context, key string, call tflang.ModuleCall) (string, bool) {
	pkg := call.Source.Package
	reg := in.o.Registry
	if reg == nil {
		var err error
		if reg, err = CLIRegistry(); err != nil {
			in.fail(call, "Invalid CLI configuration", err.Error())
			return "", false
		}
		in.o.Registry = reg
	}
	where := fmt.Sprintf("%s:%d", call.SourceRange.Filename, call.SourceRange.Start.Line)
	vs, ok := in.versions[pkg.String()]
	if !ok {
		raw, err := reg.Versions(ctx, pkg)
		switch {
		case errors.Is(err, errNotFound):
			in.fail(call, "Module not found", fmt.Sprintf("Module %q (from %s) cannot be found in the module registry at %s.", call.Name, where, pkg.Host.ForDisplay()))
			return "", false
		case err != nil:
			in.fail(call, "Error accessing remote module registry", fmt.Sprintf("Failed to retrieve available versions for module %q (%s) from %s: %s.", call.Name, where, pkg.Host.ForDisplay(), err))
			return "", false
		}
		for _, s := range raw {
			if v, err := version.NewVersion(s); err == nil {
				vs = append(vs, v)
			}
		}
		in.versions[pkg.String()] = vs
	}
	var newest, match *version.Version
	for _, v := range vs {
		if v.Prerelease() != "" && !exactlyRequested(call.Versions, v) {
			continue // a pre-release is chosen only when a constraint names it exactly, as terraform does
		}
		if newest == nil || v.GreaterThan(newest) {
			newest = v
		}
		if call.Versions.Check(v) && (match == nil || v.GreaterThan(match)) {
			match = v
		}
	}
	switch {
	case newest == nil:
		in.fail(call, "Module has no versions", fmt.Sprintf("Module %q (%s) has no versions available on %s.", call.Source, where, pkg.Host.ForDisplay()))
		return "", false
	case match == nil:
		in.fail(call, "Unresolvable module version constraint", fmt.Sprintf("There is no available version of module %q (%s) which matches the given version constraint %q. The newest available version is %s.", call.Source, where, call.Version, newest))
		return "", false
	}
	loc, err := reg.Location(ctx, pkg, match.String())
	if err != nil {
		in.fail(call, "Error accessing remote module registry", fmt.Sprintf("Failed to retrieve a download URL for %s %s from %s: %s", call.Source, match, pkg.Host.ForDisplay(), err))
		return "", false
	}
	real, err := tfmodule.ParseSource(loc, false)
	if err == nil && real.Kind == tfmodule.Remote && onThisComputer(real.Addr) {
		in.fail(call, "Invalid package location from module registry", fmt.Sprintf("Module registry %s returned source location %q for %s %s: "+
			"a directory on this computer, which cairn does not install from a registry.", pkg.Host.ForDisplay(), loc, call.Source, match))
		return "", false
	}
	if err != nil || real.Kind != tfmodule.Remote {
		in.fail(call, "Invalid package location from module registry", fmt.Sprintf("Module registry %s returned invalid source location %q for %s %s: must be a direct remote package address.", pkg.Host.ForDisplay(), loc, call.Source, match))
		return "", false
	}
	if call.Source.Subdir != "" {
		real.Subdir = path.Join(real.Subdir, call.Source.Subdir)
	}
	dir, ok := in.fetch(ctx, key, call, real)
	if ok {
		in.pkgs[key] = packageOf(key, call.Source)
		in.man[key] = tfmodule.Record{Key: key, Source: call.Source.String(), Version: match.String(), Dir: dir}
	}
	return dir, ok
}

// exactlyRequested reports whether a constraint is "= v" or "v".
func exactlyRequested(cs version.Constraints, v *version.Version) bool {
	for _, c := range cs {
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.String()), "="))
		if w, err := version.NewVersion(s); err == nil && w.Equal(v) && w.Prerelease() == v.Prerelease() {
			return true
		}
	}
	return false
}

// fetch downloads src's package into .terraform/modules/<key> and returns the module's
// directory relative to the root: the package's subdirectory, globs expanded.
func (in *installer) fetch(ctx context.Context, key string, call tflang.ModuleCall, src tfmodule.Source) (string, bool) {
	if store := src.CloudStorage(); store != "" {
		in.fail(call, "Unsupported module source", fmt.Sprintf("Module %q (%s:%d) comes from %s (%q): %s.",
			call.Name, call.SourceRange.Filename, call.SourceRange.Start.Line, store, src.Addr, cloudStorageDetail(store)))
		return "", false
	}
	instRel := path.Join(tfmodule.ModulesDir, key)
	inst := filepath.Join(in.o.Dir, filepath.FromSlash(instRel))
	if err := os.RemoveAll(inst); err != nil {
		in.fail(call, "Failed to remove local module cache", fmt.Sprintf("cairn tried to remove %s in order to reinstall this module, but encountered an error: %s", inst, err))
		return "", false
	}
	err := errors.New("not fetched")
	if prev, ok := in.fetched[src.Addr]; ok {
		err = os.CopyFS(inst, os.DirFS(prev))
	}
	if err != nil {
		_ = os.RemoveAll(inst)
		_, err = newClient().Get(ctx, &getter.Request{Src: src.Addr, Dst: inst, Pwd: inst, GetMode: getter.ModeDir})
	}
	if err != nil {
		in.fail(call, "Failed to download module", fmt.Sprintf("Could not download module %q (%s:%d) source code from %q: %s.",
			call.Name, call.SourceRange.Filename, call.SourceRange.Start.Line, src.Addr, err))
		return "", false
	}
	in.fetched[src.Addr] = inst
	in.installed = append(in.installed, key)
	if src.Subdir == "" {
		return instRel, true
	}
	matches, err := filepath.Glob(filepath.Join(inst, filepath.FromSlash(src.Subdir)))
	if err != nil || len(matches) != 1 {
		detail := fmt.Sprintf("The directory %s does not exist. The target submodule %s does not exist within the target module.", path.Join(instRel, src.Subdir), src.Subdir)
		if len(matches) > 1 {
			detail = fmt.Sprintf("subdir %q matches multiple paths", src.Subdir)
		}
		in.fail(call, "Unreadable module subdirectory", detail)
		return "", false
	}
	rel, err := filepath.Rel(in.o.Dir, matches[0])
	if err != nil {
		in.fail(call, "Unreadable module subdirectory", err.Error())
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// readModule reads the configuration files directly in dir (relative to root), keyed by
// their slash-separated path relative to root, as tflang names them.
func readModule(root, dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".tf") && !strings.HasSuffix(name, ".tf.json") {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(dir), name)
		if fi, err := os.Stat(full); err != nil || fi.IsDir() || fi.Size() > maxFileSize {
			continue
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		files[path.Join(dir, name)] = b
	}
	return files, nil
}
