package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/template/tflang"
	"github.com/cairn-dev/cairn/internal/value"
)

// Plugins finds and starts the provider plugins a Terraform-language stack requires. The
// engine holds no knowledge of where plugins live or how they are spoken to; cmd/cairn (through
// app) plugs in an implementation.
type Plugins interface {
	// Resolve picks a package for every requirement, honouring lock (the content of
	// .terraform.lock.hcl, nil when there is none) unless upgrade is set. It returns the
	// chosen packages by requirement source and the lock file to keep.
	// ctx carries the tenant (package tenant) whose private providers are visible.
	Resolve(ctx context.Context, reqs []*template.ProviderRequirement, lock []byte, upgrade bool) (map[string]Plugin, []byte, diag.Diagnostics)
}

// Plugin is a resolved provider package that can start provider instances.
type Plugin interface {
	Version() string
	// Open returns a provider instance named for messages by name (the local name). It starts
	// lazily: the first call launches the process, in directory dir when not empty (terraform
	// runs providers in its working directory: a local_file's relative filename lands there).
	Open(name, dir string) provider.Provider
}

// LockFileName is the file of a Terraform-language configuration that pins provider versions.
const LockFileName = ".terraform.lock.hcl"

// providerSet hands out the provider of each resource for one operation: CloudFormation and
// ROS types come from the engine's registry, Terraform-language resources from one plugin
// instance per provider configuration, started lazily and configured before first use.
type providerSet struct {
	e    *Engine
	tmpl *template.Stack
	pkgs map[string]Plugin // by requirement source
	lock []byte            // the lock file after resolution
	dir  *runDir           // where provider processes (and provisioners) run; nil: made on first use

	mu   sync.Mutex
	inst map[string]*instance // by provider configuration address

	checked sync.Map // *template.Resource → checkedProps (checkedprops.go)

	// appliedWith are the fingerprints of the stack's last successful deploy: a provider
	// configuration with the same one is configured lazily (see configured)
	appliedWith map[string]providerFP
}

type instance struct {
	p provider.Provider

	once sync.Once // configuration
	diag diag.Diagnostics
	err  error
	fp   providerFP // set once configured
}

// providerFP identifies what a provider configuration's resources were applied with: the
// plugin's version and a digest of its evaluated configuration. A resource whose own
// configuration is unchanged is skipped only when its provider's fingerprint is too (a new
// version, or a changed provider block such as AWS default_tags, must plan it again).
type providerFP struct {
	Version string `json:"v"`
	Config  string `json:"c,omitempty"` // "" when the configuration could not be digested
}

// fingerprints decodes state.Stack.Providers.
func fingerprints(b []byte) map[string]providerFP {
	out := map[string]providerFP{}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &out) // unreadable: nothing matches, everything is planned
	}
	return out
}

// version is the plugin version serving provider configuration addr ("" if unknown).
func (ps *providerSet) version(addr string) string {
	if ps.tmpl == nil {
		return ""
	}
	cfg := ps.tmpl.Provider(addr)
	if cfg == nil {
		return ""
	}
	req := ps.tmpl.Requirement(cfg.Name)
	if req == nil {
		return ""
	}
	if pkg, ok := ps.pkgs[req.Source]; ok {
		return pkg.Version()
	}
	return ""
}

// fingerprint is the fingerprint of a configured provider configuration.
func (ps *providerSet) fingerprint(addr string) (providerFP, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	in, ok := ps.inst[addr]
	if !ok || in.fp.Version == "" {
		return providerFP{}, false
	}
	return in.fp, true
}

// fingerprintsJSON records every configured provider configuration's fingerprint.
func (ps *providerSet) fingerprintsJSON() []byte {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := map[string]providerFP{}
	for addr, in := range ps.inst {
		if in.fp.Version != "" {
			out[addr] = in.fp
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// resolveProviders resolves the plugins of a Terraform-language stack; other dialects need
// nothing.
func (e *Engine) resolveProviders(ctx context.Context, tmpl *template.Stack, files map[string]string, upgrade bool) (*providerSet, diag.Diagnostics) {
	ps := &providerSet{e: e, tmpl: tmpl, inst: map[string]*instance{}}
	if len(tmpl.Requirements) == 0 {
		return ps, nil
	}
	reqs, builtins := splitBuiltin(tmpl.Requirements) // provision.go
	if len(reqs) == 0 {
		ps.pkgs = builtins
		return ps, nil
	}
	if e.o.Plugins == nil {
		return nil, diag.Diagnostics{diag.Errorf(reqs[0].Range, "",
			"this cairn was started without Terraform provider support")}
	}
	var lock []byte
	if s, ok := files[LockFileName]; ok {
		lock = []byte(s)
	}
	pkgs, newLock, diags := e.o.Plugins.Resolve(ctx, reqs, lock, upgrade)
	if diags.HasErrors() {
		return nil, diags
	}
	ps.pkgs, ps.lock = withBuiltins(pkgs, builtins), newLock
	return ps, diags
}

// lookup returns the provider serving a resource: res.Provider's instance for the Terraform
// language (not yet configured: see configured), the registry's for the others.
func (ps *providerSet) lookup(typ, providerAddr string) (provider.Provider, error) {
	if providerAddr == "" {
		return ps.e.reg.Lookup(typ)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if in, ok := ps.inst[providerAddr]; ok {
		return in.p, nil
	}
	p, err := ps.openLocked(providerAddr,
		fmt.Sprintf("provider configuration %s is not present in the template; it is needed to manage %s: add it back, or delete the resource first", providerAddr, typ))
	if err != nil {
		return nil, err
	}
	in := &instance{p: p}
	ps.inst[providerAddr] = in
	return in.p, nil
}

// openLocked opens a new instance of the plugin serving provider configuration addr (not
// configured), in the run's working directory; missing is the error when the template has no
// such configuration. ps.mu is held.
func (ps *providerSet) openLocked(addr, missing string) (provider.Provider, error) {
	var cfg *template.ProviderConfig
	if ps.tmpl != nil {
		cfg = ps.tmpl.Provider(addr)
	}
	if cfg == nil {
		return nil, errors.New(missing)
	}
	req := ps.tmpl.Requirement(cfg.Name)
	if req == nil {
		return nil, fmt.Errorf("provider %s has no required_providers entry", cfg.Name)
	}
	pkg, ok := ps.pkgs[req.Source]
	if !ok {
		return nil, fmt.Errorf("provider %s (%s) was not resolved", cfg.Name, req.Source)
	}
	dir, err := ps.workDirLocked()
	if err != nil {
		return nil, err
	}
	return openMapped(pkg, cfg, dir) // envmappings.go
}

// configured returns the provider of providerAddr, configured once with its provider block
// evaluated in sc. A configuration that failed fails every later call the same way.
func (ps *providerSet) configured(ctx context.Context, sc template.Scope, typ, providerAddr string) (provider.Provider, error) {
	p, err := ps.lookup(typ, providerAddr)
	if err != nil || providerAddr == "" {
		return p, err
	}
	ps.mu.Lock()
	in := ps.inst[providerAddr]
	ps.mu.Unlock()
	in.once.Do(func() {
		cfg := ps.tmpl.Provider(providerAddr)
		val, diags := evalBody(ctx, p, provider.SchemaRequest{Kind: provider.SchemaProvider}, cfg.Config, sc)
		if diags.HasErrors() {
			in.diag = diags
			return
		}
		fp := providerFP{Version: ps.version(providerAddr)}
		// ephemeral parts are left out: they are not stored, not even as a digest, and
		// change from run to run without changing what the resources were applied with
		if b, err := value.Marshal(tflang.WithoutEphemeral(val)); err == nil && val.IsWhollyKnown() {
			sum := sha256.Sum256(b)
			fp.Config = hex.EncodeToString(sum[:])
		}
		// The configuration the resources were last applied with was accepted then: it is
		// sent with the first call a resource needs, so that a run with nothing to do starts
		// no plugin. A new or changed one is validated and configured now.
		req := provider.ConfigureRequest{Config: val}
		if urn := ps.tmpl.Policy.URN; urn != nil {
			req.URN = urn(providerAddr, "")
		}
		if lc, ok := p.(provider.LazyConfigurer); ok && fp.Config != "" && ps.appliedWith[providerAddr] == fp {
			lc.ConfigureLazily(req)
			in.diag, in.fp = diags, fp
			return
		}
		resp, err := p.Configure(ctx, req)
		in.diag, in.err = diags.Append(resp.Diagnostics), err
		if err == nil && !in.diag.HasErrors() {
			in.fp = fp
		}
	})
	switch {
	case in.err != nil:
		return nil, in.err
	case in.diag.HasErrors():
		return nil, fmt.Errorf("cannot configure %s: %s", providerAddr, reasonOf(in.diag.Err()))
	}
	return p, nil
}

// close stops every provider instance the set started, then removes the run's directory if
// the set made it.
func (ps *providerSet) close() error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var errs []error
	for _, addr := range sortedKeys(ps.inst) {
		errs = append(errs, ps.inst[addr].p.Close())
	}
	ps.inst = map[string]*instance{}
	if ps.dir != nil {
		ps.dir.close()
	}
	return errors.Join(errs...)
}

// versions lists the chosen provider versions, "source vX", sorted, for messages.
func (ps *providerSet) versions() []string {
	var out []string
	for src, p := range ps.pkgs {
		out = append(out, src+" v"+p.Version())
	}
	sort.Strings(out)
	return out
}

// evalBody evaluates an expression that may need the provider's schema to decode (a block of
// the Terraform language).
func evalBody(ctx context.Context, p provider.Provider, req provider.SchemaRequest, x template.Expr, sc template.Scope) (cty.Value, diag.Diagnostics) {
	bx, ok := x.(template.BodyExpr)
	if !ok {
		return x.Eval(sc)
	}
	schema, err := p.Schema(ctx, req)
	if errors.Is(err, provider.ErrUnknownType) {
		summary := "Invalid resource type"
		if req.Kind == provider.SchemaData {
			summary = "Invalid data source"
		}
		return cty.NilVal, diag.Diagnostics{{Severity: diag.Error, Summary: summary, Detail: err.Error() + "."}}
	}
	if err != nil {
		what := string(req.Kind) + " " + req.Type
		if req.Kind == provider.SchemaProvider {
			what = "provider configuration"
		}
		return cty.NilVal, diag.Diagnostics{diag.Errorf(diag.Range{}, "", "cannot read the schema of %s: %s", strings.TrimSpace(what), err)}
	}
	return bx.EvalSpec(sc, schema.Spec)
}

// schemaKind is the schema a resource's properties decode with.
func schemaKind(res *template.Resource) provider.SchemaRequest {
	if res.Mode == template.Data {
		return provider.SchemaRequest{Kind: provider.SchemaData, Type: res.Type}
	}
	return provider.SchemaRequest{Kind: provider.SchemaResource, Type: res.Type}
}

// workDir is the working directory of the run's provider processes and provisioners (see
// runDir), made on first use.
func (ps *providerSet) workDir() (string, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.workDirLocked()
}

func (ps *providerSet) workDirLocked() (string, error) {
	if ps.dir == nil { // a set without a configuration: an empty directory
		ps.dir = &runDir{parent: ps.e.o.RunsDir}
	}
	return ps.dir.path()
}

// runDir is where a run's provider processes and provisioners run, as terraform runs both in
// its working directory (hashicorp/local writes a relative filename there, a command reads
// data.txt there). That is the configuration's own directory on the client only when the
// server is the CLI's in-process one (Options.ClientDirs) and the tenant may run code on the
// server: a path the client sends may exist on another server by coincidence (/tmp, a home
// directory) and name something unrelated. Otherwise it is a directory of the run's own,
// holding the configuration's files as the client sent them, made on first use and removed
// when the run ends; never the server's working directory, which may hold its database.
type runDir struct {
	client string            // the client's directory, used as it is; "" to make one
	files  map[string]string // written into a made directory
	parent string            // Options.RunsDir: a made directory goes under it ("": the system's temporary directory)

	once  sync.Once
	dir   string
	owned bool // made here, removed by close
	err   error
}

// clientRunsHere says a binary in the client's directory wd may run as a plugin: the server
// is the CLI's in-process one, the tenant may run code, and wd is an absolute path.
func (e *Engine) clientRunsHere(ctx context.Context, wd string) bool {
	return e.o.ClientDirs && filepath.IsAbs(filepath.FromSlash(wd)) && e.mayRunCode(ctx)
}

// runDir picks the directory of a run for the configuration of src.
func (e *Engine) runDir(ctx context.Context, src source) *runDir {
	d := &runDir{files: src.files, parent: e.o.RunsDir}
	wd := filepath.FromSlash(src.workDir)
	if !e.o.ClientDirs || !filepath.IsAbs(wd) || !e.mayRunCode(ctx) {
		return d
	}
	if fi, err := os.Stat(wd); err == nil && fi.IsDir() {
		d.client = wd
	}
	return d
}

// path returns the directory, making it on first use.
func (d *runDir) path() (string, error) {
	d.once.Do(func() {
		if d.client != "" {
			d.dir = d.client
			return
		}
		if d.dir, d.err = makeRunDir(d.parent); d.err != nil {
			return
		}
		d.owned = true
		d.err = writeFiles(d.dir, d.files)
	})
	if d.err != nil {
		return "", fmt.Errorf("cannot prepare the run's working directory: %w", d.err)
	}
	return d.dir, nil
}

// writeFiles writes a configuration's files under dir, except those outside it (a module in
// ../shared, sent as "../shared/main.tf").
func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		rel := filepath.FromSlash(name)
		if !filepath.IsLocal(rel) {
			continue
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// close removes the directory if the run made it; a second call does nothing.
func (d *runDir) close() {
	d.once.Do(func() { d.err = errors.New("the run has ended") }) // never made: not now either
	if d.owned {
		_ = os.RemoveAll(d.dir)
		d.owned = false
	}
}
