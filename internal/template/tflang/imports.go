package tflang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// The schema of an import block in terraform 1.11 (identity came in 1.12).
var importSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "to", Required: true}, {Name: "id", Required: true}, {Name: "for_each"}, {Name: "provider"}}}

// importBlock is one decoded import block of the root module.
type importBlock struct {
	block    *hcl.Block
	to       hcl.Expression
	toAttr   *hcl.Attribute
	id       *hcl.Attribute
	forEach  *hcl.Attribute
	provider *hcl.Attribute
	resource string // the target's resource block, with its module path and no keys: "module.m.time_static.t"
	static   string // the target instance when no key needs evaluating, else ""
}

// refuseChildImports reports import blocks outside the root module, as terraform does: one
// error for each module path that has them.
func refuseChildImports(mods []*module) hcl.Diagnostics {
	var ds hcl.Diagnostics
	seen := map[string]bool{}
	for _, mod := range mods[1:] {
		path := modulePath(mod.prefix)
		if len(mod.imports) == 0 || seen[path] {
			continue
		}
		seen[path] = true
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid import configuration",
			Detail:  fmt.Sprintf("An import block was detected in %q. Import blocks are only allowed in the root module.", path),
			Subject: mod.imports[0].DefRange.Ptr()})
	}
	return ds
}

// modulePath is a module instance prefix ("module.a[0].module.b.") without its keys:
// "module.a.module.b", as terraform names a module's configuration.
func modulePath(prefix string) string {
	var b strings.Builder
	depth := 0
	for _, r := range strings.TrimSuffix(prefix, ".") {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// addImports adds the root module's import blocks to st, one per target instance, checking
// them as terraform's validate and plan do. st must hold every resource instance by now; a
// target's instance gains the resources its id references as dependencies. With validating,
// a for_each not known yet (variables without values) is no error, as in terraform validate.
func (m *module) addImports(st *template.Stack, mods []*module, validating bool) hcl.Diagnostics {
	ds := refuseChildImports(mods)
	byPrefix := map[string]*module{}
	for _, mod := range mods {
		byPrefix[mod.prefix] = mod
	}
	var blocks []*importBlock
	for _, b := range m.imports {
		ib, d := m.decodeImport(b)
		ds = append(ds, d...)
		if d.HasErrors() {
			continue
		}
		for _, prev := range blocks {
			if ib.static != "" && ib.static == prev.static {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Duplicate import configuration for %q", ib.resource),
					Detail: fmt.Sprintf("An import block for the resource %q was already declared at %s. A resource can have only one import block.",
						ib.resource, prev.block.DefRange), Subject: ib.to.Range().Ptr()})
			}
		}
		ds = append(ds, m.checkImportProvider(ib)...)
		blocks = append(blocks, ib)
	}
	if ds.HasErrors() {
		return ds
	}
	seen := map[string]*importBlock{}
	for _, ib := range blocks {
		keys, d := m.importKeys(ib, validating)
		if ds = append(ds, d...); d.HasErrors() {
			continue
		}
		for _, k := range keys {
			to, d := importTarget(ib, k)
			if ds = append(ds, d...); d.HasErrors() {
				continue
			}
			res, d := targetInstance(st, byPrefix, ib, to)
			if ds = append(ds, d...); d.HasErrors() {
				continue
			}
			if prev, dup := seen[to]; dup {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Duplicate import configuration for %q", to),
					Detail: fmt.Sprintf("An import block for the resource instance %q was already declared at %s. A resource can have only one import block.",
						to, prev.block.DefRange), Subject: ib.to.Range().Ptr()})
				continue
			}
			seen[to] = ib
			id := &importID{m: m, expr: ib.id.Expr, key: k}
			if d := id.check(); d.HasErrors() {
				ds = append(ds, d...)
				continue
			}
			res.DependsOn = union(res.DependsOn, m.references(ib.id.Expr.Variables(), map[string]bool{}))
			st.Imports = append(st.Imports, &template.Import{To: to, ID: id, Range: rangeOf(ib.block.DefRange), IDRange: rangeOf(ib.id.Expr.Range())})
		}
	}
	return ds
}

// decodeImport reads an import block and the resource its to argument names.
func (m *module) decodeImport(b *hcl.Block) (*importBlock, hcl.Diagnostics) {
	content, ds := b.Body.Content(importSchema)
	if ds.HasErrors() {
		return nil, ds
	}
	ib := &importBlock{block: b, toAttr: content.Attributes["to"], id: content.Attributes["id"],
		forEach: content.Attributes["for_each"], provider: content.Attributes["provider"]}
	to, ds := unwrapJSONRef(ib.toAttr.Expr)
	if ds.HasErrors() {
		return nil, ds
	}
	ib.to = to
	tr, ds := importTraversal(to, cty.NilVal)
	if ds.HasErrors() {
		return nil, ds
	}
	a, ds := parseImportAddr(tr, to.Range())
	if ds.HasErrors() {
		return nil, ds
	}
	if a.data {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid import address",
			Detail: "Only managed resources can be imported.", Subject: ib.toAttr.Range.Ptr()}}
	}
	ib.resource = modulePath(a.prefix) + "." + a.resource
	ib.resource = strings.TrimPrefix(ib.resource, ".")
	if st, d := hcl.AbsTraversalForExpr(to); !d.HasErrors() {
		if sa, d := parseImportAddr(st, to.Range()); !d.HasErrors() {
			ib.static = sa.String()
		}
	}
	for _, t := range ib.id.Expr.Variables() {
		if ref := referencedResource(t); ref != "" && ref == a.resource {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid import id argument",
				Detail: "The import ID cannot reference the resource being imported.", Subject: t.SourceRange().Ptr()}}
		}
	}
	return ib, nil
}

// referencedResource is the managed resource ("type.name") a traversal refers to, or "".
func referencedResource(t hcl.Traversal) string {
	switch t.RootName() {
	case "var", "local", "each", "count", "path", "terraform", "module", "data", "self", "ephemeral":
		return ""
	}
	if len(t) < 2 {
		return ""
	}
	if a, ok := t[1].(hcl.TraverseAttr); ok {
		return t.RootName() + "." + a.Name
	}
	return ""
}

// checkImportProvider checks an import block's provider argument: terraform takes it only for
// configuration generation, so it must agree with the provider the resource block names.
func (m *module) checkImportProvider(ib *importBlock) hcl.Diagnostics {
	if ib.provider == nil {
		return nil
	}
	bad := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid import provider argument", Detail: detail, Subject: ib.provider.Range.Ptr()}}
	}
	if strings.HasPrefix(ib.resource, "module.") {
		return bad("The provider argument can only be specified in import blocks that will generate configuration.\n\n" +
			"Use the providers argument within the module block to configure providers for all resources within a module, including imported resources.")
	}
	t, ds := hcl.AbsTraversalForExpr(ib.provider.Expr)
	if ds.HasErrors() {
		return ds
	}
	rb, ok := m.resources[ib.resource]
	if !ok {
		return nil // reported as a target without configuration
	}
	explicit := false
	if content, _, _ := rb.block.Body.PartialContent(metaSchema); content != nil {
		_, explicit = content.Attributes["provider"]
	}
	if !explicit || rb.provider != "provider."+traversalString(t) {
		return bad("The provider argument can only be specified in import blocks that will generate configuration.\n\n" +
			"Use the provider argument in the target resource block to configure the provider for a resource with explicit provider configuration.")
	}
	return nil
}

// importKeys evaluates an import block's for_each, as terraform does: any collection whose
// elements are known while planning (here: variables, locals and functions), each element an
// instance with each.key and each.value. Without for_each there is one instance, unkeyed.
func (m *module) importKeys(ib *importBlock, validating bool) ([]key, hcl.Diagnostics) {
	if ib.forEach == nil {
		return []key{{}}, nil
	}
	e := m.evaluator(nil, key{})
	defer e.done()
	expr := ib.forEach.Expr
	ctx, ds := e.context(expr.Variables())
	if ds.HasErrors() {
		return nil, ds
	}
	v, d := expr.Value(ctx)
	if ds = append(ds, d...); ds.HasErrors() {
		return nil, ds
	}
	if !v.IsWhollyKnown() && validating {
		return nil, nil
	}
	if !v.IsWhollyKnown() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: expr.Range().Ptr(),
			Detail: `The "for_each" expression includes values derived from other resource attributes that cannot be determined until apply, and so cairn cannot determine the full set of values that might be used to import this resource.`}}
	}
	if v.IsNull() {
		return nil, nil
	}
	v, marks := v.Unmark()
	if !v.CanIterateElements() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: expr.Range().Ptr(),
			Detail: `The "for_each" expression must be a collection.`}}
	}
	if err := m.ld.b.Instances(int64(v.LengthInt()), "for_each"); err != nil {
		return nil, hcl.Diagnostics{exceededDiag(err, expr.Range())}
	}
	var out []key
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		out = append(out, key{kind: "each", index: k, value: ev.WithMarks(marks)})
	}
	return out, nil
}

// importTarget is the instance address an import block's to names for one instance.
func importTarget(ib *importBlock, k key) (string, hcl.Diagnostics) {
	var tr hcl.Traversal
	var ds hcl.Diagnostics
	if ib.forEach == nil {
		tr, ds = hcl.AbsTraversalForExpr(ib.to)
	} else {
		each := cty.ObjectVal(map[string]cty.Value{"key": k.index, "value": k.value})
		tr, ds = importTraversal(ib.to, each)
	}
	if ds.HasErrors() {
		return "", ds
	}
	a, ds := parseImportAddr(tr, ib.to.Range())
	if ds.HasErrors() {
		return "", ds
	}
	return a.String(), nil
}

// targetInstance finds the resource instance an import targets, checking that its key agrees
// with the resource's count or for_each (terraform's validate) and that the configuration
// declares it (terraform's plan).
func targetInstance(st *template.Stack, byPrefix map[string]*module, ib *importBlock, to string) (*template.Resource, hcl.Diagnostics) {
	missing := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Configuration for import target does not exist", Subject: ib.to.Range().Ptr(),
		Detail: fmt.Sprintf("The configuration for the given import target %s does not exist. All target instances must have an associated configuration to be imported.", to)}}
	prefix, res, keySuffix := splitInstance(to)
	mod, ok := byPrefix[prefix]
	if !ok {
		return nil, missing
	}
	rb, ok := mod.resources[res]
	if !ok {
		return nil, missing
	}
	bad := func(detail string) (*template.Resource, hcl.Diagnostics) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid import 'to' expression", Detail: detail, Subject: ib.to.Range().Ptr()}}
	}
	switch {
	case strings.HasPrefix(keySuffix, `["`) && rb.forEach == nil:
		return bad("The target resource does not use for_each.")
	case keySuffix != "" && !strings.HasPrefix(keySuffix, `["`) && rb.count == nil:
		return bad("The target resource does not use count.")
	case keySuffix == "" && rb.forEach != nil:
		return bad("The target resource is using for_each.")
	case keySuffix == "" && rb.count != nil:
		return bad("The target resource is using count.")
	}
	r := st.Resource(to)
	if r == nil {
		return nil, missing
	}
	return r, nil
}

// splitInstance splits `module.m["a"].time_static.t[0]` into its module instance prefix
// (`module.m["a"].`), resource (`time_static.t`) and key (`[0]`).
func splitInstance(addr string) (prefix, res, key string) {
	rest := addr
	for strings.HasPrefix(rest, "module.") {
		i := len("module.")
		for i < len(rest) && rest[i] != '.' && rest[i] != '[' {
			i++
		}
		if i < len(rest) && rest[i] == '[' {
			i = closeBracket(rest, i) + 1
		}
		if i >= len(rest) {
			break
		}
		prefix += rest[:i+1]
		rest = rest[i+1:]
	}
	if j := strings.IndexByte(rest, '['); j >= 0 {
		return prefix, rest[:j], rest[j:]
	}
	return prefix, rest, ""
}

// closeBracket is the index of the "]" closing the "[" at i, skipping quoted strings.
func closeBracket(s string, i int) int {
	quoted := false
	for j := i + 1; j < len(s); j++ {
		switch {
		case quoted && s[j] == '\\':
			j++
		case s[j] == '"':
			quoted = !quoted
		case !quoted && s[j] == ']':
			return j
		}
	}
	return len(s) - 1
}

// importAddr is a parsed import target.
type importAddr struct {
	prefix   string // module instances with keys and a final ".", or ""
	resource string // "type.name"
	key      string // "[0]", `["k"]` or ""
	data     bool
}

func (a importAddr) String() string { return a.prefix + a.resource + a.key }

// parseImportAddr reads a resource instance address from a traversal whose keys are known.
func parseImportAddr(tr hcl.Traversal, rng hcl.Range) (importAddr, hcl.Diagnostics) {
	bad := func(detail string) (importAddr, hcl.Diagnostics) {
		return importAddr{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid address", Detail: detail, Subject: rng.Ptr()}}
	}
	type step struct {
		name, key string
		keyed     bool
	}
	var steps []step
	for _, t := range tr {
		switch t := t.(type) {
		case hcl.TraverseRoot:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseAttr:
			steps = append(steps, step{name: t.Name})
		case hcl.TraverseIndex:
			if len(steps) == 0 || steps[len(steps)-1].keyed {
				return bad("An instance key must follow a resource or module name.")
			}
			k, err := instanceKeyOf(t.Key)
			if err != "" {
				return importAddr{}, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid index", Detail: err, Subject: t.SrcRange.Ptr()}}
			}
			steps[len(steps)-1].key, steps[len(steps)-1].keyed = k, true
		default:
			return bad("A resource instance address is required here.")
		}
	}
	var a importAddr
	i := 0
	for i+1 < len(steps) && steps[i].name == "module" && !steps[i].keyed {
		a.prefix += "module." + steps[i+1].name + steps[i+1].key + "."
		i += 2
	}
	rest := steps[i:]
	if len(rest) == 3 && rest[0].name == "data" && !rest[0].keyed && !rest[1].keyed {
		a.data, a.resource, a.key = true, rest[1].name+"."+rest[2].name, rest[2].key
		return a, nil
	}
	if len(rest) != 2 || rest[0].keyed || rest[0].name == "module" {
		return bad("A resource instance address is required here.")
	}
	a.resource, a.key = rest[0].name+"."+rest[1].name, rest[1].key
	return a, nil
}

// instanceKeyOf formats an instance key as an address shows it; err says why it is unusable.
func instanceKeyOf(k cty.Value) (string, string) {
	if k.IsMarked() {
		return "", "Import address index expression cannot be sensitive."
	}
	if !k.IsKnown() || k.IsNull() {
		return "", "An instance key must be known and not null."
	}
	switch k.Type() {
	case cty.String:
		return fmt.Sprintf("[%q]", k.AsString()), ""
	case cty.Number:
		bf := k.AsBigFloat()
		if !bf.IsInt() || bf.Sign() < 0 {
			return "", "An instance key must be a whole number or a string."
		}
		return "[" + bf.Text('f', 0) + "]", ""
	}
	return "", "An instance key must be a number or a string."
}

// importTraversal turns an import block's to into a traversal, evaluating its index keys with
// only each.key and each.value available, as terraform does. With each NilVal the keys are
// left out: the traversal names the resource block.
func importTraversal(expr hcl.Expression, each cty.Value) (hcl.Traversal, hcl.Diagnostics) {
	switch e := expr.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if each == cty.NilVal {
			return withoutKeys(e.Traversal), nil
		}
		return e.Traversal, nil
	case *hclsyntax.RelativeTraversalExpr:
		src, ds := importTraversal(e.Source, each)
		if ds.HasErrors() {
			return nil, ds
		}
		rel := e.Traversal
		if each == cty.NilVal {
			rel = withoutKeys(rel)
		}
		return append(append(hcl.Traversal{}, src...), rel...), nil
	case *hclsyntax.IndexExpr:
		src, ds := importTraversal(e.Collection, each)
		if ds.HasErrors() || each == cty.NilVal {
			return src, ds
		}
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"each": each}}
		k, ds := e.Key.Value(ctx)
		for _, d := range ds {
			if d.Summary == "Unknown variable" {
				d.Detail += ` Only "each.key" and "each.value" can be used in import address index expressions.`
			}
		}
		if ds.HasErrors() {
			return nil, ds
		}
		return append(append(hcl.Traversal{}, src...), hcl.TraverseIndex{Key: k, SrcRange: e.Key.Range()}), nil
	}
	t, ds := hcl.AbsTraversalForExpr(expr)
	if each == cty.NilVal {
		t = withoutKeys(t)
	}
	return t, ds
}

func withoutKeys(t hcl.Traversal) hcl.Traversal {
	out := make(hcl.Traversal, 0, len(t))
	for _, s := range t {
		if _, ok := s.(hcl.TraverseIndex); !ok {
			out = append(out, s)
		}
	}
	return out
}

// unwrapJSONRef reads the string a .tf.json import block gives for to as an HCL expression.
func unwrapJSONRef(expr hcl.Expression) (hcl.Expression, hcl.Diagnostics) {
	if !hcljson.IsJSONExpression(expr) {
		return expr, nil
	}
	v, ds := expr.Value(nil)
	if ds.HasErrors() {
		return nil, ds
	}
	if v.Type() != cty.String || v.IsNull() {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference expression",
			Detail: "A single reference string is required.", Subject: expr.Range().Ptr()}}
	}
	rng := expr.Range()
	return hclsyntax.ParseExpression([]byte(v.AsString()), rng.Filename, rng.Start)
}

// importID is the id argument of one import block instance: a template.Expr evaluated in the
// root module, with the instance's each.key and each.value.
type importID struct {
	m    *module
	expr hcl.Expression
	key  key
}

// Eval implements template.Expr: the id as a string, which may be unknown (the engine refuses
// that when it plans the import); a null, empty or non-string id is an error.
func (x *importID) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	v, ds := x.eval(s)
	return v, convertDiags(ds, x.m.files)
}

// check evaluates the id while the stack is built, with resources unknown, so that what can
// be found wrong before planning is.
func (x *importID) check() hcl.Diagnostics {
	_, ds := x.eval(nil)
	return ds
}

func (x *importID) eval(s template.Scope) (cty.Value, hcl.Diagnostics) {
	e := x.m.evaluator(s, x.key)
	defer e.done()
	rng := x.expr.Range()
	if ds := e.nest(rng); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	defer e.unnest()
	ctx, ds := e.context(x.expr.Variables())
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	v, d := x.expr.Value(ctx)
	if ds = append(ds, d...); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	v, _ = v.UnmarkDeep() // the id is only sent to the provider
	bad := func(detail string) (cty.Value, hcl.Diagnostics) {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid import id argument", Detail: detail, Subject: &rng}}
	}
	if v.IsNull() {
		return bad("The import ID cannot be null.")
	}
	if !v.IsKnown() {
		return cty.UnknownVal(cty.String), nil
	}
	sv, err := convert.Convert(v, cty.String)
	if err != nil {
		return bad("The import ID value is unsuitable: not a string.")
	}
	if sv.AsString() == "" {
		return bad("The import ID value evaluates to an empty string, please provide a non-empty value.")
	}
	return sv, nil
}
