package tflang

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// config is what the files of one module directory declare. Every instance of a module
// shares its directory's config; nothing in it changes once loaded.
type config struct {
	files     map[string][]byte
	dir       string // the module's directory, as a prefix of the keys of files
	reqs      []*template.ProviderRequirement
	providers []*hcl.Block
	provLocal map[string]bool // "aws", "aws.east": the provider configurations the module's blocks declare
	staticB   *budget.Budget  // of static values; nil: the default limits
	vars      map[string]*variable
	varOrder  []string
	locals    map[string]*hcl.Attribute
	resources map[string]*resourceBlock // by "type.name" or "data.type.name"
	resOrder  []string
	outputs   map[string]*hcl.Block
	outOrder  []string
	calls     map[string]*moduleCall
	callOrder []string
	checks    []*checkBlock
	refactors []*hcl.Block // moved and removed blocks (refactor.go)
	imports   []*hcl.Block // import blocks (imports.go)
}

func newConfig(files map[string][]byte, dir string) *config {
	return &config{files: files, dir: dir, vars: map[string]*variable{}, locals: map[string]*hcl.Attribute{},
		resources: map[string]*resourceBlock{}, outputs: map[string]*hcl.Block{}, calls: map[string]*moduleCall{},
		provLocal: map[string]bool{}}
}

// module is one instance of a module: the root, or one instance of a module call (count and
// for_each make several). Everything it computes is computed while the stack is built; the
// engine's concurrent evaluations only read it.
type module struct {
	*config
	ld      *loader
	prefix  string // "" for the root, "module.a[0]." below it: prepended to resource addresses
	rel     string // path.module: the directory relative to the root module's
	parent  *module
	call    *moduleCall // the call that made this instance; nil for the root
	callKey key         // this instance's count.index or each.key/value in the call
	deps    []string    // resource instances everything in the module waits for (depends_on on calls)

	// bound values
	varVals   map[string]cty.Value // the root module's variables; a child's are its call's arguments
	instances map[string][]string  // resource block key -> instance addresses
	keys      map[string][]key     // resource block key -> instance keys
	children  map[string][]*module // call name -> instances, in key order
	expanding map[string]bool      // resource blocks and calls being expanded, to find cycles
}
type variable struct {
	block       *hcl.Block
	ty          cty.Type
	def         *typeexpr.Defaults
	dflt        cty.Value
	sensitive   bool
	nullable    bool
	validations []*hcl.Block
	desc        string
	ephemeral   bool // never stored (ephemeral.go)
}

type resourceBlock struct {
	mode      template.Mode
	typ       string
	name      string
	block     *hcl.Block
	body      hcl.Body // without meta-arguments
	count     *hcl.Attribute
	forEach   *hcl.Attribute
	provider  string // provider config address
	deps      []hcl.Traversal
	lifecycle lifecycle
	check     string // "check.name" for the data source scoped to a check block
	provs     []*provBlock
	conn      *hcl.Block // the resource's connection block (provisioner.go)
}

type lifecycle struct {
	cbd, prevent, ignoreAll bool
	ignore                  []cty.Path
	replaceBy               []hcl.Traversal
	pre, post               []*checkRule
}

var metaSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "count"}, {Name: "for_each"}, {Name: "provider"}, {Name: "depends_on"}},
	Blocks: []hcl.BlockHeaderSchema{{Type: "lifecycle"}, {Type: "connection"}, {Type: "provisioner", LabelNames: []string{"type"}}}}

func (m *config) addBlock(b *hcl.Block) hcl.Diagnostics {
	switch b.Type {
	case "terraform":
		return m.addTerraform(b)
	case "provider":
		m.providers = append(m.providers, b)
		m.provLocal[m.providerLocal(b)] = true
	case "variable":
		return m.addVariable(b)
	case "locals":
		attrs, ds := b.Body.JustAttributes()
		for name, a := range attrs {
			if _, dup := m.locals[name]; dup {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate local value definition",
					Detail: fmt.Sprintf("A local value named %q was already defined. Local value names must be unique within a module.", name), Subject: &a.NameRange})
			}
			m.locals[name] = a
		}
		return ds
	case "output":
		name := b.Labels[0]
		if _, dup := m.outputs[name]; dup {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Duplicate output definition",
				Detail: fmt.Sprintf("An output named %q was already defined. Output names must be unique within a module.", name), Subject: &b.LabelRanges[0]}}
		}
		m.outputs[name] = b
		m.outOrder = append(m.outOrder, name)
	case "resource", "data", "ephemeral":
		return m.addResource(b)
	case "module":
		return m.addCall(b)
	case "check":
		return m.addCheck(b)
	case "moved", "removed":
		m.refactors = append(m.refactors, b)
	case "import":
		m.imports = append(m.imports, b)
	default:
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Unsupported block type %q", b.Type),
			Detail: fmt.Sprintf("cairn does not support %s blocks yet.", b.Type), Subject: &b.DefRange}}
	}
	return nil
}

func (m *config) addTerraform(b *hcl.Block) hcl.Diagnostics {
	content, _, ds := b.Body.PartialContent(terraformSchema)
	ds = append(ds, m.checkCore(content)...) // version.go
	for _, rp := range content.Blocks {
		if rp.Type != "required_providers" {
			continue
		}
		attrs, d := rp.Body.JustAttributes()
		ds = append(ds, d...)
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ds = append(ds, m.addRequirement(n, attrs[n])...)
		}
	}
	return ds
}

// addRequirement reads one required_providers entry: { source, version }, a bare version
// string (legacy), or the array of such objects Huawei RFS .tf.json templates use.
func (m *config) addRequirement(name string, a *hcl.Attribute) hcl.Diagnostics {
	v, ds := m.requirementValue(a.Expr)
	if ds.HasErrors() {
		return ds
	}
	req := &template.ProviderRequirement{Name: name, Source: "hashicorp/" + name, Range: rangeOf(a.Range)}
	if v.Type().IsTupleType() || v.Type().IsListType() { // RFS array form
		for _, e := range v.AsValueSlice() {
			if e.Type().IsObjectType() && e.Type().HasAttribute(name) {
				v = e.GetAttr(name)
			}
		}
	}
	switch {
	case v.Type() == cty.String:
		req.Versions = v.AsString()
	case v.Type().IsObjectType() || v.Type().IsMapType():
		for k, x := range v.AsValueMap() {
			if x.IsNull() || x.Type() != cty.String {
				continue
			}
			switch k {
			case "source":
				req.Source = x.AsString()
			case "version":
				req.Versions = x.AsString()
			}
		}
	default:
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid required_providers object",
			Detail: "required_providers entries must be objects with source and version.", Subject: &a.Range}}
	}
	src, err := addr.ParseProvider(req.Source)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid provider source string", Detail: err.Error(), Subject: &a.Range}}
	}
	req.Source = src.String()
	m.reqs = append(m.reqs, req)
	return nil
}

// requirementValue evaluates a required_providers entry. configuration_aliases holds
// references (aws.east), which have no value: they are checked and left out.
func (m *config) requirementValue(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	pairs, d := hcl.ExprMap(expr)
	if d.HasErrors() { // a version string, or the RFS array form
		return m.static(expr)
	}
	var ds hcl.Diagnostics
	attrs := map[string]cty.Value{}
	for _, p := range pairs {
		k, d := m.static(p.Key)
		ds = append(ds, d...)
		if d.HasErrors() || k.Type() != cty.String || k.IsNull() {
			continue
		}
		if k.AsString() == "configuration_aliases" {
			exprs, d := hcl.ExprList(p.Value)
			ds = append(ds, d...)
			for _, e := range exprs {
				_, d := hcl.AbsTraversalForExpr(e)
				ds = append(ds, d...)
			}
			continue
		}
		v, d := m.static(p.Value)
		ds = append(ds, d...)
		attrs[k.AsString()] = v
	}
	return cty.ObjectVal(attrs), ds
}

func (m *config) addVariable(b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	if _, dup := m.vars[name]; dup {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Duplicate variable declaration",
			Detail: fmt.Sprintf("A variable named %q was already declared. Variable names must be unique within a module.", name), Subject: &b.LabelRanges[0]}}
	}
	content, ds := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"},
		{Name: "sensitive"}, {Name: "nullable"}, {Name: "ephemeral"}}, Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}}})
	v := &variable{block: b, ty: cty.DynamicPseudoType, nullable: true}
	if a, ok := content.Attributes["type"]; ok {
		ty, def, d := typeexpr.TypeConstraintWithDefaults(a.Expr)
		ds = append(ds, d...)
		v.ty, v.def = ty, def
	}
	if a, ok := content.Attributes["default"]; ok {
		dv, d := m.static(a.Expr)
		ds = append(ds, d...)
		v.dflt = dv
	}
	for _, key := range []string{"sensitive", "nullable"} {
		if a, ok := content.Attributes[key]; ok {
			bv, d := m.static(a.Expr)
			ds = append(ds, d...)
			if !d.HasErrors() && bv.Type() == cty.Bool && bv.IsKnown() && !bv.IsNull() {
				if key == "sensitive" {
					v.sensitive = bv.True()
				} else {
					v.nullable = bv.True()
				}
			}
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		if dv, d := m.static(a.Expr); !d.HasErrors() && dv.Type() == cty.String && !dv.IsNull() {
			v.desc = dv.AsString()
		}
	}
	v.validations = content.Blocks
	eph, d := m.ephemeralFlag(content.Attributes["ephemeral"])
	v.ephemeral = eph
	ds = append(ds, d...)
	m.vars[name] = v
	m.varOrder = append(m.varOrder, name)
	return ds
}

func (m *config) addResource(b *hcl.Block) hcl.Diagnostics {
	r := &resourceBlock{typ: b.Labels[0], name: b.Labels[1], block: b}
	key := r.typ + "." + r.name
	if b.Type == "data" {
		r.mode, key = template.Data, "data."+key
	} else if b.Type == "ephemeral" {
		r.mode, key = template.Ephemeral, "ephemeral."+key
	}
	if _, dup := m.resources[key]; dup {
		what := "resource"
		if r.mode == template.Data {
			what = "data"
		}
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Duplicate %s %q configuration", what, key),
			Detail: fmt.Sprintf("A %s named %q was already declared. Resource names must be unique per type in each module.", r.typ, r.name), Subject: &b.DefRange}}
	}
	content, remain, ds := b.Body.PartialContent(metaSchema)
	r.body = remain
	r.count, r.forEach = content.Attributes["count"], content.Attributes["for_each"]
	if r.count != nil && r.forEach != nil {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Invalid combination of "count" and "for_each"`,
			Detail: `The "count" and "for_each" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.`, Subject: &r.forEach.NameRange})
	}
	local := r.typ
	if i := strings.IndexByte(local, '_'); i > 0 {
		local = local[:i]
	}
	r.provider = "provider." + local
	if a, ok := content.Attributes["provider"]; ok {
		t, d := hcl.AbsTraversalForExpr(a.Expr)
		ds = append(ds, d...)
		if !d.HasErrors() {
			r.provider = "provider." + strings.TrimPrefix(traversalString(t), "provider.")
		}
	}
	if a, ok := content.Attributes["depends_on"]; ok {
		exprs, d := hcl.ExprList(a.Expr)
		ds = append(ds, d...)
		for _, e := range exprs {
			t, d := hcl.AbsTraversalForExpr(e)
			ds = append(ds, d...)
			r.deps = append(r.deps, t)
		}
	}
	for _, lb := range content.Blocks {
		if lb.Type == "lifecycle" {
			ds = append(ds, r.lifecycle.read(m, lb)...)
		}
	}
	ds = append(ds, selfReferences(r.lifecycle.pre, "precondition", key)...)
	ds = append(ds, selfReferences(r.lifecycle.post, "postcondition", key)...)
	ds = append(ds, r.readProvisioners(content.Blocks)...)
	ds = append(ds, selfReferences(r.lifecycle.pre, "precondition", key)...)
	ds = append(ds, selfReferences(r.lifecycle.post, "postcondition", key)...)
	m.resources[key] = r
	m.resOrder = append(m.resOrder, key)
	return ds
}

func (l *lifecycle) read(m *config, b *hcl.Block) hcl.Diagnostics {
	attrs, ds := l.readRules(b)
	for name, a := range attrs {
		switch name {
		case "create_before_destroy", "prevent_destroy":
			v, d := m.static(a.Expr)
			ds = append(ds, d...)
			if !d.HasErrors() && v.Type() == cty.Bool && !v.IsNull() {
				if name == "prevent_destroy" {
					l.prevent = v.True()
				} else {
					l.cbd = v.True()
				}
			}
		case "ignore_changes":
			if kw := hcl.ExprAsKeyword(a.Expr); kw == "all" {
				l.ignoreAll = true
				continue
			}
			exprs, d := hcl.ExprList(a.Expr)
			ds = append(ds, d...)
			for _, e := range exprs {
				t, d := hcl.RelTraversalForExpr(e)
				ds = append(ds, d...)
				if !d.HasErrors() {
					l.ignore = append(l.ignore, traversalPath(t))
				}
			}
		case "replace_triggered_by":
			exprs, d := hcl.ExprList(a.Expr)
			ds = append(ds, d...)
			for _, e := range exprs {
				for _, t := range e.Variables() {
					l.replaceBy = append(l.replaceBy, t)
				}
			}
		default:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported argument",
				Detail: fmt.Sprintf("An argument named %q is not expected here.", name), Subject: &a.NameRange})
		}
	}
	return ds
}

// traversalPath turns `tags["x"]` or `a.b` into a cty.Path.
func traversalPath(t hcl.Traversal) cty.Path {
	var p cty.Path
	for _, s := range t {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			p = p.GetAttr(s.Name)
		case hcl.TraverseAttr:
			p = p.GetAttr(s.Name)
		case hcl.TraverseIndex:
			p = p.Index(s.Key)
		}
	}
	return p
}

func traversalString(t hcl.Traversal) string {
	var parts []string
	for _, s := range t {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			parts = append(parts, s.Name)
		case hcl.TraverseAttr:
			parts = append(parts, s.Name)
		}
	}
	return strings.Join(parts, ".")
}

// convertVar converts a variable's value to its type constraint, with its defaults.
func (v *variable) convert(val cty.Value) (cty.Value, error) {
	if v.def != nil {
		val = v.def.Apply(val)
	}
	out, err := convert.Convert(val, v.ty)
	if err != nil {
		return cty.NilVal, err
	}
	if v.sensitive {
		out = value.Secret(out)
	}
	if v.ephemeral {
		out = markEphemeral(out)
	}
	return out, nil
}

// raw parses a -var or TF_VAR_ value of v as terraform does: a literal string for primitive
// and unconstrained types, an HCL expression otherwise, checked as files are.
func (m *config) raw(v *variable, s, name string) (cty.Value, hcl.Diagnostics) {
	if v.ty.IsPrimitiveType() || v.ty == cty.DynamicPseudoType {
		return cty.StringVal(s), nil
	}
	src, ds := checkSource([]byte(s), name, hcl.InitialPos, lexExpression, m.budget().Meter(), 0)
	if ds.HasErrors() {
		return cty.NilVal, ds
	}
	expr, ds := hclsyntax.ParseExpression(src.src, name, hcl.InitialPos)
	if ds.HasErrors() {
		return cty.NilVal, ds
	}
	rewrite(expr, src)
	return m.static(expr)
}

func (m *config) budget() *budget.Budget {
	if m.staticB == nil {
		return budget.From(context.Background())
	}
	return m.staticB
}

// static evaluates a value that may reference nothing and call no function (see
// staticContext). JSON strings stay literal there, as hcljson does without a context.
func (m *config) static(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	if _, native := expr.(hclsyntax.Expression); !native {
		return expr.Value(nil)
	}
	return expr.Value(staticContext(m.budget().Meter()))
}
