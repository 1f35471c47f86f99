package pulumiyaml

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-yaml/pkg/pulumiyaml/syntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// File names of a Pulumi YAML project.
const (
	ProjectFile = "Pulumi.yaml"
	MainFile    = "Main.yaml"
)

// StackFile is the name of the config file of stack.
func StackFile(stack string) string { return "Pulumi." + stack + ".yaml" }

// Parse reads a Pulumi YAML project (files by name: Pulumi.yaml, Main.yaml when the program
// is there, Pulumi.<stack>.yaml when the stack has config) and binds its config for stack,
// overrides winning over the stack file (keys as `key` or `<project>:key`, values as text).
// ctx carries the request's budget (internal/budget), which bounds the decoding.
func Parse(ctx context.Context, files map[string]string, stack string, overrides map[string]string) (*template.Stack, diag.Diagnostics) {
	return ParseWith(ctx, files, stack, overrides, Options{})
}

// Options are what the engine gives the front end besides the files.
type Options struct {
	// Schema reads package schemas, to resolve type tokens as Pulumi does; nil keeps them
	// as written.
	Schema SchemaFunc
	// LocalPlugins lets the project's `plugins:` name plugin binaries in its directory (the
	// client is on this machine and may run code here); otherwise they are ignored with a
	// warning (plugins.go).
	LocalPlugins bool
}

// ParseWith is Parse with opts.
func ParseWith(ctx context.Context, files map[string]string, stack string, overrides map[string]string, opts Options) (*template.Stack, diag.Diagnostics) {
	bud := budget.From(ctx)
	projText, ok := files[ProjectFile]
	if !ok {
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{}, "", "no %s: a Pulumi project needs one", ProjectFile)}
	}
	proj, ds := decodeFile(bud, ProjectFile, projText)
	if ds.HasErrors() {
		return nil, ds
	}
	p := &parser{prog: &program{stack: stack, variables: map[string]expr{}, resources: map[string]bool{}, src: newSources(ctx, files), bud: bud},
		providerOpt: map[string]string{}, providersOpt: map[string][]string{}, defaultProv: map[string]bool{}, invokes: map[string]*invokeExpr{},
		downloadURL: map[string]string{}}
	p.ds = ds
	p.project(proj)
	program := proj
	dir, mainName, found := programFile(files, p.main)
	if dir != "." {
		p.prog.src.dir = dir // files the program names are relative to its directory, as pulumi.cwd is
	}
	switch {
	case !found:
		p.errorf(where{rng: rangeOf(proj)}, "main: %s: no %s, %s or %s there", p.main, "Main.json", MainFile, ProjectFile)
	case mainName != ProjectFile:
		main, d := decodeFile(bud, mainName, files[mainName])
		p.ds = append(p.ds, d...)
		if main == nil {
			return nil, p.ds
		}
		for _, e := range entries(proj, "") {
			if programKeys[e.key] && e.key != "config" && e.key != "configuration" {
				p.errorf(e.at, "%s is in %s but the program is in %s", e.key, ProjectFile, mainName)
			}
		}
		program, p.mainFile = main, mainName
	}
	decls, d := packageDecls(bud, files, dir)
	p.packages, p.ds = append(decls, p.packages...), append(p.ds, d...)
	if p.ds.HasErrors() {
		return nil, p.ds
	}
	given := map[string]stackValue{}
	if text, ok := files[StackFile(stack)]; ok && strings.TrimSpace(text) != "" { // an empty stack file is no config, as for pulumi
		sf, d := decodeFile(bud, StackFile(stack), text)
		p.ds = append(p.ds, d...)
		g, d := stackConfig(sf, p.prog.project, StackFile(stack))
		p.ds, given = append(p.ds, d...), g
	}
	for k, v := range overrides {
		given[configKey(k, p.prog.project)] = stackValue{v: cty.StringVal(v), text: true}
	}
	st := p.program(program, given)
	if st != nil {
		p.localPlugins(st.Requirements, opts.LocalPlugins) // plugins.go
	}
	if !p.ds.HasErrors() {
		p.resolveTypes(withLocalPlugins(ctx, st.Requirements), st, opts.Schema)
		p.prog.recordTypes(st.Resources)
	}
	if p.ds.HasErrors() {
		return nil, p.ds
	}
	st.Policy.StateFormat = stateFormat(p.prog.project, st)
	st.Policy.URN = urnOf(p.prog.project, p.prog.stack, st)
	return st, p.ds
}

// programFile finds the program as pulumi-yaml's LoadDir does: Main.json, then Main.yaml,
// then Pulumi.yaml, in the program directory (main:, the project's by default); main: may
// also name the program file itself. It returns the program directory, for the package
// declarations below it, and the program's file name.
func programFile(files map[string]string, main string) (dir, name string, ok bool) {
	main = strings.TrimSuffix(path.Clean("./"+main), "/")
	if main != "." {
		if _, isFile := files[main]; isFile {
			return path.Dir(main), main, true
		}
	}
	for _, f := range []string{"Main.json", MainFile, ProjectFile} {
		if _, ok := files[path.Join(main, f)]; ok {
			return main, path.Join(main, f), true
		}
	}
	return main, "", false
}

// programKeys are the top-level keys of a program (in Pulumi.yaml or Main.yaml).
var programKeys = map[string]bool{"config": true, "configuration": true, "variables": true, "resources": true, "outputs": true}

type parser struct {
	prog     *program
	main     string                // Pulumi.yaml's main: the program's directory or file ("" for the project's)
	mainFile string                // the file holding the program when not Pulumi.yaml
	packages []packageDecl         // package declarations: sdks/*.yaml and Pulumi.yaml's packages:
	given    map[string]stackValue // the stack's config values, provider namespaces included
	// by resource name: the provider option, the providers option, defaultProvider: true
	providerOpt  map[string]string
	providersOpt map[string][]string
	defaultProv  map[string]bool
	downloadURL  map[string]string            // the pluginDownloadURL option (downloadurl.go)
	envMappings  map[string]map[string]string // by provider resource name: its envVarMappings option
	plugins      []projectPlugin              // the project's plugins: providers
	invokes      map[string]*invokeExpr       // by data resource name, as expressions use them
	varDeps      map[string]map[string]bool   // by variable: the resources and invokes it needs (collect)
	decls        []*configDecl
	versions     []pinned
	ds           diag.Diagnostics
	st           *template.Stack                        // the stack being read
	set          map[*template.Resource]map[string]bool // inheritable options each resource sets (options.go)
}

func (p *parser) errorf(at where, format string, args ...any) {
	p.ds = append(p.ds, diag.Errorf(at.rng, at.path, format, args...))
}

func (p *parser) warnf(at where, format string, args ...any) {
	p.ds = append(p.ds, diag.Warnf(at.rng, at.path, format, args...))
}

// project reads Pulumi.yaml's project keys: name, runtime and the project's config.
func (p *parser) project(obj *syntax.ObjectNode) {
	hasName, hasRuntime := false, false
	for _, e := range entries(obj, "") {
		switch e.key {
		case "name":
			s, ok := e.value.(*syntax.StringNode)
			if !ok || s.Value() == "" {
				p.errorf(e.at, "name must be a non-empty string")
				continue
			}
			p.prog.project, hasName = s.Value(), true
		case "runtime":
			hasRuntime = true
			rt := e.value
			if o, ok := rt.(*syntax.ObjectNode); ok {
				rt = nil
				for _, f := range entries(o, e.at.path) {
					if f.key == "name" {
						rt = f.value
					}
				}
			}
			if s, ok := rt.(*syntax.StringNode); !ok || s.Value() != "yaml" {
				p.errorf(e.at, "runtime %s: cairn runs only Pulumi YAML programs (runtime: yaml)", strings.TrimSpace(nodeText(rt)))
			}
		case "config", "configuration": // configuration: is pulumi-yaml's older name
			d, ds := parseConfigDecls(e.value, e.at.path)
			p.decls, p.ds = append(p.decls, d...), append(p.ds, ds...)
		case "main":
			s, ok := e.value.(*syntax.StringNode)
			if !ok {
				p.errorf(e.at, "main must be a path relative to the project")
				continue
			}
			p.main = s.Value()
		case "packages":
			p.projectPackages(e)
		case "plugins":
			p.projectPlugins(e) // plugins.go
		case "description", "stackConfigDir", "backend", "options", "template", "author", "license", "website", "variables", "resources", "outputs", "pulumi":
			// says nothing to a deploy, or is the program
		case "components":
			p.errorf(e.at, "%s: is not supported yet by cairn's Pulumi YAML front end", e.key)
		default:
			p.warnf(e.at, "unknown project key %q is ignored", e.key)
		}
	}
	if !hasName {
		p.ds = append(p.ds, diag.Errorf(rangeOf(obj), "name", "%s needs a name", ProjectFile))
	}
	if !hasRuntime {
		p.ds = append(p.ds, diag.Errorf(rangeOf(obj), "runtime", "%s needs runtime: yaml", ProjectFile))
	}
}

func nodeText(n syntax.Node) string {
	if n == nil {
		return "(none)"
	}
	return n.String()
}

// program reads the program: config, variables, resources and outputs.
func (p *parser) program(obj *syntax.ObjectNode, given map[string]stackValue) *template.Stack {
	st := &template.Stack{Dialect: template.PulumiYAML, Policy: Policy()}
	p.st = st
	p.given = given
	var vars, res, outs, settings []entry
	for _, e := range entries(obj, "") {
		switch e.key {
		case "config", "configuration":
			if obj != nil && e.value != nil && p.fromMain(obj) {
				d, ds := parseConfigDecls(e.value, e.at.path)
				p.decls, p.ds = append(p.decls, d...), append(p.ds, ds...)
			}
		case "variables":
			vars = p.section(e)
		case "resources":
			res = p.section(e)
		case "outputs":
			outs = p.section(e)
		case "pulumi":
			settings = append(settings, e)
		case "description":
			if s, ok := e.value.(*syntax.StringNode); ok {
				st.Description = s.Value()
			}
		}
	}
	params, cfg, ds := bindConfig(p.decls, given, StackFile(p.prog.stack))
	p.ds = append(p.ds, ds...)
	st.Parameters, p.prog.config = params, cfg
	for _, e := range settings {
		p.requiredVersion(e)
	}

	names := map[string]where{}
	claim := func(name string, at where) bool {
		if prev, dup := names[name]; dup {
			p.errorf(at, "%q is already declared at %s: config, variables and resources share one namespace", name, prev.rng)
			return false
		}
		if name == "pulumi" {
			p.errorf(at, "pulumi is a built-in variable and cannot be declared")
			return false
		}
		if reserved(name) {
			p.errorf(at, "%q is reserved: cairn names its own rows with %q and %q", name, template.DeposedMark, invokePrefix)
			return false
		}
		names[name] = at
		return true
	}
	for name := range cfg {
		names[name] = where{}
	}
	for _, e := range vars {
		if claim(e.key, e.at) {
			x, ds := toExpr(e.value, e.at.path, nil, "")
			p.ds = append(p.ds, ds...)
			p.prog.variables[e.key] = x
		}
	}
	for _, e := range res {
		if claim(e.key, e.at) {
			p.prog.resources[e.key] = true
			p.logicalName(e)
		}
	}
	for _, e := range res {
		if r := p.resource(e); r != nil {
			st.Resources = append(st.Resources, r)
		}
	}
	p.refuseBuiltinResources(st.Resources)
	p.refuseDuplicateNames(st.Resources)
	for _, e := range outs {
		x, ds := toExpr(e.value, e.at.path, nil, "")
		p.ds = append(p.ds, ds...)
		p.deps(x, e.at) // checks that every name it uses exists
		st.Outputs = append(st.Outputs, &template.Output{Name: e.key, Value: rootExpr{x, p.prog, e.at}, Range: e.at.rng})
	}
	for _, name := range slices.Sorted(maps.Keys(p.prog.variables)) {
		if x := p.prog.variables[name]; x != nil {
			p.deps(x, where{}) // every variable is evaluated, its invokes called
		}
	}
	st.Resources = append(st.Resources, p.invokeResources()...) // invoke.go
	p.expandInvokeDeps(st)                                      // propdeps.go
	st.Requirements = p.requirements(st.Resources)
	p.inherit(st)         // options.go: before the providers are assigned
	p.assignProviders(st) // providers.go
	p.checkCycles(st.Resources)
	return st
}

// fromMain says whether obj is Main.yaml's program (Pulumi.yaml's config was read with the project).
func (p *parser) fromMain(obj *syntax.ObjectNode) bool {
	return p.mainFile != "" && rangeOf(obj).Filename == p.mainFile
}

func (p *parser) section(e entry) []entry {
	if _, isNull := e.value.(*syntax.NullNode); isNull {
		return nil
	}
	o, ok := e.value.(*syntax.ObjectNode)
	if !ok {
		p.errorf(where{rng: rangeOf(e.value), path: e.at.path}, "%s must be an object", e.key)
		return nil
	}
	return entries(o, e.at.path)
}

// deps returns the resources x needs, directly or through variables, sorted; a name that is
// not declared is an error at its access.
func (p *parser) deps(x expr, at where) []string {
	set := map[string]bool{}
	p.collect(x, set, map[string]bool{})
	return slices.Sorted(maps.Keys(set))
}

func (p *parser) collect(x expr, set, visiting map[string]bool) {
	x.accesses(func(a *access) {
		if a.inv != nil { // an invoke: its data resource (invoke.go)
			set[a.root], p.invokes[a.root] = true, a.inv
			return
		}
		switch {
		case p.prog.resources[a.root]:
			set[p.prog.nameOf(a.root)] = true
		case p.prog.variables[a.root] != nil:
			if visiting[a.root] {
				p.errorf(a.where, "variable %q refers to itself", a.root)
				return
			}
			deps, done := p.varDeps[a.root]
			if !done { // each variable is walked once: a chain of uses costs its length, not 2^length
				deps = map[string]bool{}
				visiting[a.root] = true
				p.collect(p.prog.variables[a.root], deps, visiting)
				delete(visiting, a.root)
				if p.varDeps == nil {
					p.varDeps = map[string]map[string]bool{}
				}
				p.varDeps[a.root] = deps
			}
			for d := range deps {
				set[d] = true
			}
		case a.root == "pulumi":
		default:
			if _, ok := p.prog.config[a.root]; !ok {
				p.errorf(a.where, "${%s}: %q is not a config value, variable or resource", a.text, a.root)
			}
		}
	})
}

// checkCycles refuses resources that need each other.
func (p *parser) checkCycles(rs []*template.Resource) {
	byName := map[string]*template.Resource{}
	for _, r := range rs {
		byName[r.Name] = r
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(r *template.Resource, chain []string) bool
	visit = func(r *template.Resource, chain []string) bool {
		switch state[r.Name] {
		case 1:
			p.ds = append(p.ds, diag.Errorf(r.Range, "resources."+r.Name, "dependency cycle: %s", strings.Join(append(chain, r.Name), " -> ")))
			return false
		case 2:
			return true
		}
		state[r.Name] = 1
		for _, d := range r.DependsOn {
			if dr := byName[d]; dr != nil && !visit(dr, append(chain, r.Name)) {
				return false
			}
		}
		state[r.Name] = 2
		return true
	}
	for _, r := range rs {
		if !visit(r, nil) {
			return
		}
	}
}
