package tflang

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/tfmodule"
)

// moduleCall is a module block. A local source ("./x", "../x") names a directory among the
// configuration's files; a registry or remote source is found through the modules manifest
// the client installed (.terraform/modules/modules.json), never fetched here.
type moduleCall struct {
	name      string
	block     *hcl.Block
	source    string // as written
	src       tfmodule.Source
	sourceRng hcl.Range
	version   string                    // the version argument as written, "" without one
	versions  version.Constraints       // version, parsed
	args      map[string]*hcl.Attribute // input variables
	count     *hcl.Attribute
	forEach   *hcl.Attribute
	deps      []hcl.Traversal
	providers map[string]string // the child's provider configuration ("aws", "aws.east") -> the caller's
}

var callSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source", Required: true}, {Name: "version"},
	{Name: "count"}, {Name: "for_each"}, {Name: "depends_on"}, {Name: "providers"}}}

func (m *config) addCall(b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	if prev, dup := m.calls[name]; dup {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Duplicate module call",
			Detail:  fmt.Sprintf("A module call named %q was already defined at %s. Module calls must have unique names within a module.", name, prev.block.DefRange),
			Subject: &b.LabelRanges[0]}}
	}
	content, remain, ds := b.Body.PartialContent(callSchema)
	if ds.HasErrors() {
		return ds
	}
	c := &moduleCall{name: name, block: b, providers: map[string]string{}}
	sa := content.Attributes["source"]
	c.sourceRng = sa.Expr.Range()
	v, d := m.static(sa.Expr)
	if d.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source",
			Detail: "The module source must be a literal string.", Subject: &c.sourceRng})
	}
	c.source = v.AsString()
	va, hasVersion := content.Attributes["version"]
	src, err := tfmodule.ParseSource(c.source, hasVersion && !tfmodule.IsLocal(c.source))
	switch {
	case errors.Is(err, tfmodule.ErrMaybeRelative):
		return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source address",
			Detail: fmt.Sprintf("Terraform failed to determine your intended installation method for remote module package %q.\n\n"+
				"If you intended this as a path relative to the current module, use \"./%s\" instead. The \"./\" prefix indicates that the address is a relative filesystem path.", c.source, c.source),
			Subject: &c.sourceRng})
	case err != nil && hasVersion:
		return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid registry module source address",
			Detail:  fmt.Sprintf("Failed to parse module registry address: %s.\n\nTerraform assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.", err),
			Subject: &c.sourceRng})
	case err != nil:
		return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source address",
			Detail: fmt.Sprintf("Failed to parse module source address: %s.", err), Subject: &c.sourceRng})
	}
	c.src = src
	if hasVersion {
		if tfmodule.IsLocal(c.source) {
			return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid argument",
				Detail: "Cannot use a version argument with a local module source.", Subject: &va.NameRange})
		}
		vv, d := m.static(va.Expr)
		var perr error
		if !d.HasErrors() && vv.Type() == cty.String && !vv.IsNull() {
			c.version = vv.AsString()
			c.versions, perr = version.NewConstraint(c.version)
		}
		if d.HasErrors() || c.version == "" || perr != nil {
			return append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid version constraint",
				Detail: "This string does not use correct version constraint syntax.", Subject: va.Expr.Range().Ptr()})
		}
	}
	c.count, c.forEach = content.Attributes["count"], content.Attributes["for_each"]
	if c.count != nil && c.forEach != nil {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Invalid combination of "count" and "for_each"`,
			Detail: `The "count" and "for_each" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of module instances to be created.`, Subject: &c.forEach.NameRange})
	}
	if a, ok := content.Attributes["depends_on"]; ok {
		c.deps, d = traversalList(a.Expr)
		ds = append(ds, d...)
	}
	if a, ok := content.Attributes["providers"]; ok {
		pairs, d := hcl.ExprMap(a.Expr)
		ds = append(ds, d...)
		for _, p := range pairs {
			kt, d1 := hcl.AbsTraversalForExpr(p.Key)
			vt, d2 := hcl.AbsTraversalForExpr(p.Value)
			ds = append(append(ds, d1...), d2...)
			if !d1.HasErrors() && !d2.HasErrors() {
				c.providers[traversalString(kt)] = traversalString(vt)
			}
		}
	}
	args, d := remain.JustAttributes()
	ds = append(ds, d...)
	c.args = args
	m.calls[name] = c
	m.callOrder = append(m.callOrder, name)
	return ds
}

// traversalList reads a list of references: depends_on.
func traversalList(expr hcl.Expression) ([]hcl.Traversal, hcl.Diagnostics) {
	exprs, ds := hcl.ExprList(expr)
	var out []hcl.Traversal
	for _, e := range exprs {
		t, d := hcl.AbsTraversalForExpr(e)
		ds = append(ds, d...)
		if !d.HasErrors() {
			out = append(out, t)
		}
	}
	return out, ds
}

// providerLocal is the configuration a provider block declares: "aws", or "aws.east" with an alias.
func (m *config) providerLocal(b *hcl.Block) string {
	content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "alias"}}})
	if aa, ok := content.Attributes["alias"]; ok {
		if v, d := m.static(aa.Expr); !d.HasErrors() && v.Type() == cty.String && !v.IsNull() {
			return b.Labels[0] + "." + v.AsString()
		}
	}
	return b.Labels[0]
}

// loader reads module directories from the configuration's files, each once.
type loader struct {
	b       *budget.Budget
	parse   *budget.Meter // what parsing costs (see checkSource)
	stack   *budget.Meter // the stack's resources and module instances
	static  *budget.Budget
	tables  *tablePool
	files   map[string][]byte
	root    string // the root module's directory among files
	configs map[string]*config
	// manifest is the client's modules.json, read when a remote call first needs it.
	manifest    tfmodule.Manifest
	manifestErr error
	diags       hcl.Diagnostics // from expansions made on demand while evaluating
	over        bool            // a budget stopped the expansion: expand nothing more
	funcs       *providerFuncs  // made by providerFunctions
	parsed      []parsedFile    // the .tf files loaded, for providerFunctions
}

func newLoader(ctx context.Context, files map[string][]byte, root string) *loader {
	b := budget.From(ctx)
	return &loader{b: b, parse: b.Meter(), stack: b.Meter(), tables: &tablePool{files: sentFiles{files: files, root: root, globs: &globCache{}}},
		// static values are evaluated after the request too (outputs' sensitive): its limits, not its end
		static: budget.From(budget.WithLimits(context.Background(), b.Limits())),
		files:  files, root: root, configs: map[string]*config{}}
}

// parseFile parses a configuration or variables file: checked first (checkSource,
// jsonDepth), then parsed once, then rewritten (see rewrite).
func parseFile(src []byte, name string, m *budget.Meter) (*hcl.File, hcl.Diagnostics) {
	if strings.HasSuffix(name, ".json") {
		if ds := jsonDepth(src, name, m); ds.HasErrors() {
			return nil, ds
		}
		f, ds := hcljson.Parse(src, name)
		if f != nil {
			f.Body = jsonBody{f.Body, m.Budget(), &templates{}}
		}
		return f, ds
	}
	s, ds := checkSource(src, name, hcl.InitialPos, lexConfig, m, 0)
	if ds.HasErrors() {
		return nil, ds
	}
	f, ds := hclsyntax.ParseConfig(s.src, name, hcl.InitialPos)
	if f != nil {
		f.Bytes = src
		if body, ok := f.Body.(*hclsyntax.Body); ok {
			rewrite(body, s)
		}
	}
	return f, ds
}

// configFileNames lists the .tf and .tf.json files directly in dir, sorted.
func configFileNames(files map[string][]byte, dir string) []string {
	var names []string
	for name := range files {
		if path.Dir(name) == dir && (strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// load reads the module in dir; nil if dir holds no configuration files. A directory's
// diagnostics are returned the first time only.
func (ld *loader) load(dir string) (*config, hcl.Diagnostics) {
	if c, ok := ld.configs[dir]; ok {
		return c, nil
	}
	names := configFileNames(ld.files, dir)
	if len(names) == 0 {
		return nil, nil
	}
	c := newConfig(ld.files, dir)
	c.staticB = ld.static
	ld.configs[dir] = c
	var hd hcl.Diagnostics
	for _, name := range names {
		f, ds := parseFile(ld.files[name], name, ld.parse)
		hd = append(hd, ds...)
		if f == nil {
			continue
		}
		if body, ok := f.Body.(*hclsyntax.Body); ok {
			ld.parsed = append(ld.parsed, parsedFile{name, body})
		}
		content, ds := f.Body.Content(rootSchema)
		hd = append(hd, ds...)
		for _, b := range content.Blocks {
			hd = append(hd, c.addBlock(b)...)
		}
	}
	return c, hd
}

func (ld *loader) newModule(c *config, parent *module, call *moduleCall, k key) *module {
	m := &module{config: c, ld: ld, rel: ".", instances: map[string][]string{}, keys: map[string][]key{},
		children: map[string][]*module{}, expanding: map[string]bool{}}
	if parent != nil {
		m.parent, m.call, m.callKey = parent, call, k
		m.prefix = parent.prefix + "module." + call.name + keySuffix(k) + "."
	}
	return m
}

// describe names the module in messages.
func (m *module) describe() string {
	if m.parent == nil {
		return "the root module"
	}
	return strings.TrimSuffix(m.prefix, ".")
}

// callInstances expands module call name: its instances, made once (count and for_each are
// evaluated then) and remembered.
func (m *module) callInstances(name string) []*module {
	if insts, ok := m.children[name]; ok {
		return insts
	}
	c := m.calls[name]
	m.children[name] = []*module{} // also what a cycle or an error leaves
	ck := "module." + name
	if m.expanding[ck] {
		m.ld.diags = append(m.ld.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle in module expansion",
			Detail: fmt.Sprintf("The count or for_each of module %q depends on the module itself.", name), Subject: c.block.DefRange.Ptr()})
		return nil
	}
	m.expanding[ck] = true
	defer delete(m.expanding, ck)
	dir, rel, ok := m.callDir(c)
	if !ok {
		return nil
	}
	for a := m; a != nil; a = a.parent {
		if a.dir == dir {
			m.ld.diags = append(m.ld.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Module calls itself",
				Detail: fmt.Sprintf("Module %q has source %q, the directory of %s, which is one of its callers.", name, c.source, a.describe()), Subject: &c.sourceRng})
			return nil
		}
	}
	cfg, ds := m.ld.load(dir)
	m.ld.diags = append(m.ld.diags, ds...)
	if cfg == nil {
		m.ld.diags = append(m.ld.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unreadable module directory",
			Detail:  fmt.Sprintf("Module %q has source %q, but the directory %s does not exist or holds no Terraform configuration files (.tf or .tf.json).", name, c.source, dir),
			Subject: &c.sourceRng})
		return nil
	}
	if ds.HasErrors() {
		return nil
	}
	if d := c.checkArgs(cfg); d.HasErrors() {
		m.ld.diags = append(m.ld.diags, d...)
		return nil
	}
	depth := 1
	for p := m; p.parent != nil; p = p.parent {
		depth++
	}
	if err := m.ld.b.Depth(depth); err != nil {
		m.ld.diags = append(m.ld.diags, exceededDiag(&budget.Exceeded{Limit: "depth", Max: int64(m.ld.b.Limits().Depth),
			What: "module calls within module calls"}, c.block.DefRange))
		return nil
	}
	keys, d := m.expandMeta(c.count, c.forEach)
	m.ld.diags = append(m.ld.diags, d...)
	if d.HasErrors() || !m.ld.charge(len(keys), c.block.DefRange) {
		return nil
	}
	deps := append(append([]string(nil), m.deps...), m.dependsOn(c.deps)...)
	insts := make([]*module, 0, len(keys))
	for _, k := range keys {
		child := m.ld.newModule(cfg, m, c, k)
		child.rel, child.deps = rel, deps
		insts = append(insts, child)
	}
	m.children[name] = insts
	return insts
}

// callDir is the directory of the module call c makes, as a key prefix of the files and
// relative to the root module (path.module): a local source is a path from the caller's
// directory; a remote one is where the client installed it, as modules.json records.
func (m *module) callDir(c *moduleCall) (dir, rel string, ok bool) {
	if c.src.Kind == tfmodule.Local {
		return path.Join(m.dir, c.source), path.Join(m.rel, c.source), true
	}
	names := []string{c.name}
	for a := m; a.parent != nil; a = a.parent {
		names = append([]string{a.call.name}, names...)
	}
	key := tfmodule.Key(names)
	man, err := m.ld.readManifest()
	fail := func(summary, detail string) (string, string, bool) {
		m.ld.diags = append(m.ld.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &c.sourceRng})
		return "", "", false
	}
	if err != nil {
		return fail("Invalid modules manifest", fmt.Sprintf("Module %q has source %q, but %s cannot be read: %s. Run \"cairn init\" to install the modules again.", c.name, c.source, tfmodule.ManifestPath, err))
	}
	r, found := man[key]
	if !found {
		return fail("Module not installed", fmt.Sprintf("Module %q has source %q, which is not installed. The cairn CLI installs remote modules "+
			"into %s when it deploys, previews or validates a configuration directory (or run \"cairn init\", or \"terraform init\"); "+
			"the server never downloads modules.", c.name, c.source, tfmodule.ModulesDir))
	}
	if why := r.Check(c.src, c.versions); why != "" {
		summary := "Module version requirements have changed"
		if r.Source != c.src.String() {
			summary = "Module source has changed"
		}
		return fail(summary, why+" Run \"cairn init\" (or deploy from the cairn CLI) to install the module again.")
	}
	rel = path.Clean(r.Dir)
	return path.Join(m.ld.root, rel), rel, true
}

// readManifest parses the client's modules.json once.
func (ld *loader) readManifest() (tfmodule.Manifest, error) {
	if ld.manifest == nil && ld.manifestErr == nil {
		ld.manifest, ld.manifestErr = tfmodule.ParseManifest(ld.files[path.Join(ld.root, tfmodule.ManifestPath)])
	}
	return ld.manifest, ld.manifestErr
}

// checkArgs checks a call's arguments against the variables the module declares.
func (c *moduleCall) checkArgs(cfg *config) hcl.Diagnostics {
	var ds hcl.Diagnostics
	names := make([]string, 0, len(c.args))
	for n := range c.args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := cfg.vars[n]; !ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
				Detail: fmt.Sprintf("An argument named %q is not expected here: module %q declares no variable %q.", n, c.name, n), Subject: &c.args[n].NameRange})
		}
	}
	for _, n := range cfg.varOrder {
		if _, ok := c.args[n]; !ok && cfg.vars[n].dflt == cty.NilVal {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
				Detail: fmt.Sprintf("The argument %q is required, but no definition was found.", n), Subject: c.block.DefRange.Ptr()})
		}
	}
	if (c.count != nil || c.forEach != nil || len(c.deps) > 0) && len(cfg.providers) > 0 {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Module is incompatible with count, for_each, and depends_on",
			Detail:  fmt.Sprintf("The module at module.%s contains its own provider configurations, so calls to it may not use the count, for_each, or depends_on arguments.", c.name),
			Subject: c.block.DefRange.Ptr()})
	}
	return ds
}

// keySuffix is the address suffix of an instance key: "", "[0]" or `["a"]`.
func keySuffix(k key) string {
	switch k.kind {
	case "count":
		return "[" + k.index.AsBigFloat().Text('f', 0) + "]"
	case "each":
		return fmt.Sprintf("[%q]", k.index.AsString())
	}
	return ""
}

// providerFor is the address of the provider configuration that serves local ("aws",
// "aws.east") in m: the module's own provider block, else the one its call passes in
// providers, else, for a default configuration, its caller's, as terraform inherits them.
// A default configuration nobody declares is the root's implied one.
func (m *module) providerFor(local string) string {
	for {
		if m.provLocal[local] {
			return m.prefix + "provider." + local
		}
		if m.parent == nil {
			return "provider." + local
		}
		if to, ok := m.call.providers[local]; ok {
			local, m = to, m.parent
			continue
		}
		if strings.Contains(local, ".") { // an alias the caller did not pass: reported as missing
			return m.prefix + "provider." + local
		}
		local, m = m.parent.localOf(m.sourceOf(local), local), m.parent
	}
}

// sourceOf is the provider source the module means by a local name.
func (m *config) sourceOf(local string) string {
	for _, r := range m.reqs {
		if r.Name == local {
			return r.Source
		}
	}
	if p, err := addr.ParseProvider("hashicorp/" + local); err == nil {
		return p.String()
	}
	return local
}

// localOf is the module's local name for a provider source, fallback if it declares none.
func (m *config) localOf(source, fallback string) string {
	for _, r := range m.reqs {
		if r.Source == source {
			return r.Name
		}
	}
	return fallback
}

// ModuleCall is a module block as a client installing modules needs it.
type ModuleCall struct {
	Name        string
	Source      tfmodule.Source
	Version     string // the version argument, "" without one
	Versions    version.Constraints
	SourceRange hcl.Range // of the source argument's value
}

// ModuleCalls lists the module calls of the module in dir of files, sorted by name as
// terraform installs them. A call whose source or version is invalid is left out: parsing
// the configuration reports it, with its position.
func ModuleCalls(files map[string][]byte, dir string) []ModuleCall {
	c := newConfig(files, dir)
	for _, name := range configFileNames(files, dir) {
		if !bytes.Contains(files[name], []byte("module")) {
			continue // no module block without the word: skip the parse (large configurations)
		}
		f, _ := parseFile(files[name], name, budget.From(context.Background()).Meter())
		if f == nil {
			continue
		}
		content, _, _ := f.Body.PartialContent(rootSchema)
		for _, b := range content.Blocks {
			if b.Type == "module" {
				_ = c.addCall(b)
			}
		}
	}
	out := make([]ModuleCall, 0, len(c.calls))
	for _, n := range c.callOrder {
		call := c.calls[n]
		if call.src.Kind == tfmodule.Local && call.src.Local == "" {
			continue // the source did not parse
		}
		out = append(out, ModuleCall{Name: n, Source: call.src, Version: call.version, Versions: call.versions, SourceRange: call.sourceRng})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
