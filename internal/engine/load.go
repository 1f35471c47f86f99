package engine

import (
	"bytes"
	"context"
	"sync"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/dag"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/template/cfn"
	"github.com/cairn-dev/cairn/internal/template/pulumiyaml"
	"github.com/cairn-dev/cairn/internal/template/tflang"
	"github.com/cairn-dev/cairn/internal/value"
)

// source is a template as a request carries it: one CloudFormation/ROS document, or the files
// of a Terraform-language configuration with its variable values.
type source struct {
	name     string
	text     string
	files    map[string]string
	varFiles []string
	env      map[string]string
	params   map[string]string
	// previous holds the parameter values of the stack's last deploy when its dialect
	// RemembersParameters (rememberedParameters): those a redeploy is not given keep them.
	previous map[string]string
	upgrade  bool
	workDir  string // where the client read the configuration (api.DeployRequest.WorkDir)
	// applied holds the stored configuration (value.Marshal) of each resource whose last
	// apply succeeded, and appliedWith the provider fingerprints of the last deploy that
	// succeeded. A Terraform-language resource whose configuration is byte-for-byte the same,
	// served by the same provider version, is not checked again when loading: it was valid
	// when it was applied (--upgrade checks everything).
	applied     map[string]state.Resource
	appliedWith map[string]providerFP
}

func sourceOf(req api.DeployRequest) source {
	return source{name: req.TemplateName, text: req.Template, files: req.Files, varFiles: req.VarFiles,
		env: req.Env, params: req.Parameters, upgrade: req.Upgrade, workDir: req.WorkDir}
}

type loadFlags int

const (
	loadValidate loadFlags = 1 << iota // parameters without a value are unknown, not an error
	loadCheck                          // every resource is checked with its provider
)

// dialects are the policies of the dialects parse knows, CloudFormation first.
var dialects = append(cfn.Policies(), tflang.Policy(), pulumiyaml.Policy())

// policyOf is the policy of a stored stack's dialect, for stacks whose template is not parsed
// (or not yet). A stack without a known dialect is CloudFormation, cairn's first.
func policyOf(dialect string) template.DialectPolicy {
	for _, p := range dialects {
		if string(p.Dialect) == dialect {
			return p
		}
	}
	return dialects[0]
}

// parse picks the dialect from the source and parses it.
func (e *Engine) parse(ctx context.Context, stackName, stackID string, src source, validate bool) (*template.Stack, diag.Diagnostics) {
	if src.files != nil {
		for _, fe := range dirFrontEnds { // frontends.go
			if fe.detect(src.files) {
				return fe.parse(ctx, e, stackName, src, validate)
			}
		}
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"no Terraform configuration files (.tf or .tf.json) or Pulumi.yaml in the template directory")}
	}
	text := []byte(src.text)
	d, ok := cfn.Detect(text)
	if !ok {
		return nil, diag.Diagnostics{diag.Errorf(diag.Range{Filename: src.name}, "",
			"not a CloudFormation or ROS template: expected AWSTemplateFormatVersion, ROSTemplateFormatVersion or a Resources section")}
	}
	if stackID == "" {
		stackID = e.stackID(stackName, cfn.Policy(d))
	}
	return cfn.Parse(src.name, text, cfn.Options{Parameters: src.params, Previous: src.previous, StackName: stackName, StackID: stackID,
		Region: e.o.Region, AccountID: e.o.AccountID, Validate: validate, Context: ctx})
}

// appliedConfigs returns, for a Terraform-language stack, the stored configuration of every
// resource whose last apply succeeded (source.applied); nil for other stacks.
func (e *Engine) appliedConfigs(ctx context.Context, stack state.Stack) map[string]state.Resource {
	if !skipsUnchanged(stack) {
		return nil // before reading its resources
	}
	rows, err := e.store.ListResources(ctx, keyOf(stack))
	if err != nil {
		return nil // checking everything is always correct
	}
	return appliedOf(stack, rows)
}

// appliedOf is appliedConfigs of stack's resource rows, for a caller that has them.
func appliedOf(stack state.Stack, rows []state.Resource) map[string]state.Resource {
	if !skipsUnchanged(stack) {
		return nil
	}
	out := make(map[string]state.Resource, len(rows))
	for _, row := range rows {
		if applied(row) {
			out[row.Name] = state.Resource{Props: row.Props, Provider: row.Provider}
		}
	}
	return out
}

// skipsUnchanged reports whether a deploy of stack may skip the resources it applied
// unchanged: its dialect does so, and the stack still holds them.
func skipsUnchanged(stack state.Stack) bool {
	return policyOf(stack.Dialect).SkipsUnchanged && stack.Status != "DELETE_COMPLETE"
}

// load parses and binds a template for stack, resolves the providers it needs and, with
// loadCheck, checks every resource with its provider as far as its inputs are known. The
// caller closes the provider set.
func (e *Engine) load(ctx context.Context, stackName, stackID string, src source, flags loadFlags) (*template.Stack, *providerSet, diag.Diagnostics) {
	st, diags := e.parse(ctx, stackName, stackID, src, flags&loadValidate != 0)
	if st != nil && !diags.HasErrors() {
		diags = diags.Append(e.checkProvisioners(ctx, st)) // provision.go
	}
	if st == nil || diags.HasErrors() {
		return nil, nil, diags
	}
	if cycle := graphOf(st).Cycle(); cycle != nil {
		return nil, nil, diags.Append(diag.Errorf(diag.Range{}, "", "%s", (&dag.CycleError{Path: cycle}).Error()))
	}
	ps, pdiags := e.resolveProviders(ctx, st, src.files, src.upgrade)
	diags = diags.Append(pdiags)
	if ps == nil {
		return nil, nil, diags
	}
	ps.dir = e.runDir(ctx, src) // providers.go
	ps.appliedWith = src.appliedWith
	if diags = diags.Append(ps.loadFunctions(ctx, st)); diags.HasErrors() {
		_ = ps.close()
		return nil, nil, diags
	}
	if flags&loadCheck != 0 {
		asks := flags&loadValidate != 0 || !st.Policy.ChecksInRun // else the run asks the provider
		diags = diags.Append(e.checkAll(ctx, st, ps, stackName, stackID, src, asks))
		diags = diags.Append(checkEphemerals(ctx, st, ps)) // ephemeral.go
		if st.Policy.ChecksOutputs && !diags.HasErrors() {
			sc := schemaScope{ctx: ctx, st: st, ps: ps}
			diags = diags.Append(checkOutputs(st, sc), outputPreconditions(st, sc))
		}
	}
	if diags.HasErrors() {
		_ = ps.close()
		return nil, nil, diags
	}
	return st, ps, diags
}

// graphOf is the stack's dependency graph: resources, and provider configurations before the
// resources they serve.
func graphOf(st *template.Stack) *dag.Graph {
	g := dag.New()
	for _, p := range st.Providers {
		g.Add(p.Addr, p.DependsOn...)
	}
	for _, r := range st.Resources {
		deps := r.DependsOn
		if r.Provider != "" {
			deps = append(append([]string(nil), deps...), r.Provider)
		}
		g.Add(r.Name, deps...)
	}
	return g
}

// checkAll checks every resource, in parallel: a configuration of thousands of resources is
// validated in one pass over the providers. Without asks, resources are evaluated but their
// providers are not asked (the run checks them: DialectPolicy.ChecksInRun).
func (e *Engine) checkAll(ctx context.Context, st *template.Stack, ps *providerSet, stackName, stackID string, src source, asks bool) diag.Diagnostics {
	out := make([]diag.Diagnostics, len(st.Resources))
	sem := make(chan struct{}, e.o.Parallelism)
	var wg sync.WaitGroup
	for i, r := range st.Resources {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			var applied []byte
			row, had := src.applied[r.Name]
			if fp, ok := src.appliedWith[r.Provider]; had && ok && row.Provider == r.Provider && fp.Version == ps.version(r.Provider) {
				applied = row.Props
			}
			out[i] = e.check(ctx, st, ps, r, stackName, stackID, applied, asks)
		}()
	}
	wg.Wait()
	var diags diag.Diagnostics
	for _, ds := range out {
		diags = diags.Append(ds)
	}
	return diags
}

// check validates one resource's properties (unknown where they depend on other resources).
func (e *Engine) check(ctx context.Context, st *template.Stack, ps *providerSet, r *template.Resource, stackName, stackID string, applied []byte, asks bool) diag.Diagnostics {
	path := resourcePath(st, r)
	p, err := ps.lookup(r.Type, r.Provider)
	if err != nil {
		return diag.Diagnostics{diag.Errorf(r.TypeRange, typePath(st, r), "%s", err.Error())}
	}
	if ds := checkConditions(r, unknownScope{ctx, st}, path); ds.HasErrors() {
		return ds
	}
	props, diags := evalBody(ctx, p, schemaKind(r), r.Properties, unknownScope{ctx, st})
	if diags.HasErrors() {
		return locate(diags, r, path)
	}
	if r.Mode == template.Data || !asks {
		return diags // a data source is validated when it is read; the run checks the rest
	}
	if applied != nil && st.Policy.SkipsUnchanged && props.IsWhollyKnown() {
		if b, err := value.Marshal(props); err == nil && bytes.Equal(b, applied) {
			ps.rememberChecked(r, props, b)
			return diags
		}
	}
	req := provider.CheckRequest{Resource: e.providerResource(st.Policy, stackName, stackID, r), Props: props}
	if old, err := value.Unmarshal(applied); applied != nil && err == nil && !old.IsNull() {
		req.OldProps = old // the inputs it was applied with, as the run's check sends them
	}
	resp, err := p.Check(ctx, req)
	if err != nil {
		return diags.Append(diag.Errorf(r.Range, path, "cannot check resource: %s", err))
	}
	for _, f := range resp.Failures {
		if st.Policy.ChecksInRun && judgedAtRun(props, f.Property) { // the run judges it once known, as pulumi does
			continue
		}
		diags = diags.Append(checkDiag(st, r, f, diag.Error))
	}
	for _, f := range resp.Warnings {
		diags = diags.Append(checkDiag(st, r, f, diag.Warning))
	}
	return diags
}

func checkDiag(st *template.Stack, r *template.Resource, f provider.CheckFailure, sev diag.Severity) diag.Diagnostic {
	fpath := propsPath(st, r)
	if f.Property != "" {
		fpath += "." + f.Property
	}
	d := diag.Errorf(r.PropertyRange(f.Property), fpath, "%s", f.Reason)
	d.Severity = sev
	return d
}

// resourcePath is a resource's path in diagnostics: "Resources.X" in CloudFormation,
// "resource.type.name" / "data.type.name" in the Terraform language.
func resourcePath(st *template.Stack, r *template.Resource) string {
	return st.Policy.Paths(r).Resource
}

func typePath(st *template.Stack, r *template.Resource) string {
	return st.Policy.Paths(r).Type
}

func propsPath(st *template.Stack, r *template.Resource) string {
	return st.Policy.Paths(r).Properties
}

// locate gives diagnostics without a place the resource's.
func locate(ds diag.Diagnostics, r *template.Resource, path string) diag.Diagnostics {
	out := make(diag.Diagnostics, len(ds))
	for i, d := range ds {
		if d.Range.Filename == "" {
			d.Range = r.Range
		}
		if d.Path == "" {
			d.Path = path
		}
		out[i] = d
	}
	return out
}

// schemaScope is the Terraform language's resources before anything is applied, as their
// schemas tell them: unknown values with the sensitive attributes marked.
type schemaScope struct {
	ctx context.Context
	st  *template.Stack
	ps  *providerSet
}

func (s schemaScope) Context() context.Context { return s.ctx }

func (s schemaScope) Resource(name string) (template.ResourceValue, bool) {
	r := s.st.Resource(name)
	if r == nil {
		return template.ResourceValue{}, false
	}
	p, err := s.ps.lookup(r.Type, r.Provider)
	if err != nil {
		return template.UnknownResource, true
	}
	sc, err := p.Schema(s.ctx, schemaKind(r))
	if err != nil || sc.Unknown == cty.NilVal {
		return template.UnknownResource, true
	}
	return template.ResourceValue{ID: cty.UnknownVal(cty.String), Outputs: sc.Unknown}, true
}

// checkOutputs evaluates the root outputs as terraform's plan does, before anything is
// created: in a schemaScope every resource is unknown but typed, so what fails here (a type
// error, a limit) fails once the values are known too; and it refuses, as terraform does, an
// output that shows secrets without being declared sensitive.
func checkOutputs(st *template.Stack, sc template.Scope) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, o := range st.Outputs {
		v, ds := o.Value.Eval(sc)
		for _, d := range ds {
			if d.Severity == diag.Error {
				diags = diags.Append(d)
			}
		}
		if o.Sensitive || ds.HasErrors() || v == cty.NilVal || !value.IsSecret(v) {
			continue
		}
		diags = diags.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Output refers to sensitive values",
			Detail: "To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, " +
				"cairn, like terraform, requires that any root module output containing sensitive data be explicitly marked as sensitive. " +
				"If you do intend to export this data, add sensitive = true to output \"" + o.Name + "\".",
			Range: o.Range, Path: "output." + o.Name})
	}
	return diags
}
