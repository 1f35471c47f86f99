package tflang

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// key is an instance's count index or for_each key and value.
type key struct {
	kind  string // "", "count", "each"
	index cty.Value
	value cty.Value // each.value as expansion saw it: may hold unknowns (resources not applied)

	// forEach is the for_each expression of a map or object key, in the module that
	// evaluates each.value: where value is not wholly known it is evaluated again, in the
	// evaluation's scope, for the value of this key.
	forEach hcl.Expression
}

// evaluator builds the evaluation context of one expression from exactly what it references,
// so evaluating one resource costs its references, not the size of the configuration.
type evaluator struct {
	m   *module
	s   *session
	key key
}

// session is what one evaluation has computed, across the modules it passes through: local
// values, a child module's variables (its call's arguments, evaluated in the caller) and
// outputs, by module prefix and name. It is bounded by one meter (elements and bytes built)
// and by the budget of its scope's context, or of the parse without a scope.
type session struct {
	scope  template.Scope // nil: resources are unknown (count, for_each, validation)
	values map[string]cty.Value
	busy   map[string]bool
	b      *budget.Budget
	meter  *budget.Meter
	table  *funcTable // taken from the loader's pool when first needed; done gives it back
	depth  int        // values being computed within each other (a local using a local ...)
	self   cty.Value  // the resource a postcondition is about; NilVal: self is not available
	check  string     // "check.name" while evaluating its assertions: its scoped data source is visible
}

// evaluator starts an evaluation; call done when it is over.
func (m *module) evaluator(scope template.Scope, k key) *evaluator {
	b := m.ld.b
	if scope != nil {
		b = budget.From(scope.Context())
	}
	return &evaluator{m: m, key: k, s: &session{scope: scope, values: map[string]cty.Value{}, busy: map[string]bool{},
		b: b, meter: b.Meter()}}
}

// done ends the evaluation: its function table goes back to the pool.
func (e *evaluator) done() {
	e.m.ld.tables.put(e.s.table)
	e.s.table = nil
}

// nest enters the computation of a value within another, refusing nesting past the depth
// limit and an evaluation whose time is up or whose request went away; call unnest after.
func (e *evaluator) nest(rng hcl.Range) hcl.Diagnostics {
	if err := e.s.b.Err(); err != nil {
		return hcl.Diagnostics{stopDiag(err, rng)}
	}
	e.s.depth++
	if err := e.s.b.Depth(e.s.depth); err != nil {
		e.s.depth--
		return hcl.Diagnostics{exceededDiag(&budget.Exceeded{Limit: "depth", Max: int64(e.s.b.Limits().Depth),
			What: "values computed from one another"}, rng)}
	}
	return nil
}

func (e *evaluator) unnest() { e.s.depth-- }

// stopDiag is the diagnostic of an evaluation stopped by err: its time is up (a budget) or
// its request was cancelled.
func stopDiag(err error, rng hcl.Range) *hcl.Diagnostic {
	if budget.IsExceeded(err) {
		return exceededDiag(err, rng)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Evaluation stopped",
		Detail: fmt.Sprintf("The request was cancelled: %s.", err), Subject: rng.Ptr()}
}

// in is an evaluator for module m within the same evaluation.
func (e *evaluator) in(m *module, k key) *evaluator {
	return &evaluator{m: m, key: k, s: e.s}
}

// enter marks name as being computed; false (with a diagnostic) when it already is: a cycle.
func (e *evaluator) enter(name string, rng hcl.Range) hcl.Diagnostics {
	if e.s.busy[name] {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cycle in references",
			Detail: fmt.Sprintf("%s refers to itself.", name), Subject: &rng}}
	}
	e.s.busy[name] = true
	return nil
}

func (e *evaluator) context(refs []hcl.Traversal) (*hcl.EvalContext, hcl.Diagnostics) {
	vars := map[string]map[string]cty.Value{}
	set := func(root, name string, v cty.Value) {
		if vars[root] == nil {
			vars[root] = map[string]cty.Value{}
		}
		vars[root][name] = v
	}
	top := map[string]cty.Value{}
	calls := map[string][]hcl.Traversal{}
	var ds hcl.Diagnostics
	for _, t := range refs {
		root := t.RootName()
		rng := t.SourceRange()
		attr := ""
		if len(t) > 1 {
			if a, ok := t[1].(hcl.TraverseAttr); ok {
				attr = a.Name
			}
		}
		switch root {
		case "var":
			v, d := e.variable(attr, rng)
			ds = append(ds, d...)
			set("var", attr, v)
		case "local":
			v, d := e.local(attr, rng)
			ds = append(ds, d...)
			set("local", attr, v)
		case "count":
			if e.key.kind != "count" {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Reference to "count" in non-counted context`,
					Detail: `The "count" object can only be used in "module", "resource", and "data" blocks, and only when the "count" argument is set.`, Subject: &rng})
				continue
			}
			set("count", "index", e.key.index)
		case "each":
			if e.key.kind != "each" {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Reference to "each" in context without for_each`,
					Detail: `The "each" object can be used only in "module" or "resource" blocks, and only when the "for_each" argument is set.`, Subject: &rng})
				continue
			}
			v, d := e.eachValue()
			ds = append(ds, d...)
			set("each", "key", e.key.index)
			set("each", "value", v)
		case "path":
			set("path", "module", cty.StringVal(e.m.rel))
			set("path", "root", cty.StringVal("."))
			cwd := e.m.ld.tables.files.abs // terraform's is absolute; "." when not sent
			if cwd == "" {
				cwd = "."
			}
			set("path", "cwd", cty.StringVal(cwd))
		case "terraform":
			set("terraform", "workspace", cty.StringVal("default"))
		case "module":
			calls[attr] = append(calls[attr], t)
		case "self":
			if e.s.self == cty.NilVal {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: `Invalid "self" reference`,
					Detail: `The "self" object is not available in this context. This object can be used only in resource provisioner, connection, and postcondition blocks.`, Subject: &rng})
				continue
			}
			top["self"] = e.s.self
		case "ephemeral":
			ds = append(ds, e.ephemeralContext(t, vars)...)
		case "data":
			typ := attr
			name := ""
			if len(t) > 2 {
				if a, ok := t[2].(hcl.TraverseAttr); ok {
					name = a.Name
				}
			}
			v, d := e.resource("data."+typ+"."+name, rng)
			ds = append(ds, d...)
			if vars["data"] == nil {
				vars["data"] = map[string]cty.Value{}
			}
			inner := map[string]cty.Value{}
			if ex, ok := vars["data"][typ]; ok {
				inner = ex.AsValueMap()
			}
			inner[name] = v
			vars["data"][typ] = cty.ObjectVal(inner)
		default:
			v, d := e.resource(root+"."+attr, rng)
			ds = append(ds, d...)
			set(root, attr, v)
		}
	}
	for name, ts := range calls {
		v, d := e.moduleValue(name, ts)
		ds = append(ds, d...)
		set("module", name, v)
	}
	for root, m := range vars {
		top[root] = cty.ObjectVal(m)
	}
	if e.s.table == nil {
		e.s.table = e.m.ld.tables.get(e.s.meter, planning(e.s.scope))
	}
	return &hcl.EvalContext{Variables: top, Functions: e.withProviderFunctions(e.s.table.fns)}, ds
}

// Planner is a template.Scope that tells whether it evaluates for a preview (terraform's
// plan), where impure functions (timestamp, uuid, bcrypt) are unknown, or for an apply.
type Planner interface{ Planning() bool }

// planning reports whether an evaluation in scope is a preview; without a scope (count,
// for_each, validations at parse time) it is, as terraform evaluates those when planning.
func planning(scope template.Scope) bool {
	if scope == nil {
		return true
	}
	p, ok := scope.(Planner)
	return ok && p.Planning()
}

// eachValue is each.value of the evaluator's instance. Expansion knows the keys of for_each
// but not always the values (time_static.e's instances before they are applied), so a value
// with unknowns is read again from the for_each expression, evaluated in this evaluation's
// scope: at apply time, from the applied resources it references.
func (e *evaluator) eachValue() (cty.Value, hcl.Diagnostics) {
	k := e.key
	if k.forEach == nil || e.s.scope == nil || k.value.IsWhollyKnown() {
		return k.value, nil
	}
	ck := e.m.prefix + "for_each:" + k.forEach.Range().String()
	v, ok := e.s.values[ck]
	if !ok {
		if ds := e.enter(ck, k.forEach.Range()); ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		if ds := e.nest(k.forEach.Range()); ds.HasErrors() {
			delete(e.s.busy, ck)
			return cty.DynamicVal, ds
		}
		defer e.unnest()
		ee := e.in(e.m, key{})
		ctx, ds := ee.context(k.forEach.Variables())
		if ds.HasErrors() {
			delete(e.s.busy, ck)
			return cty.DynamicVal, ds
		}
		var d hcl.Diagnostics
		v, d = k.forEach.Value(ctx)
		delete(e.s.busy, ck)
		if ds = append(ds, d...); ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		e.s.values[ck] = v
	}
	if !v.IsKnown() || v.IsNull() || k.index.IsNull() || k.index.Type() != cty.String {
		return k.value, nil
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType():
		if ty.HasAttribute(k.index.AsString()) {
			return v.GetAttr(k.index.AsString()), nil
		}
	case ty.IsMapType():
		if hv := v.HasIndex(k.index); hv.IsKnown() && hv.True() {
			return v.Index(k.index), nil
		}
	}
	return k.value, nil
}

// resource is the value of a resource block: one instance's object, a tuple of counted
// instances, or an object of for_each instances.
func (e *evaluator) resource(k string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	rb, ok := e.m.resources[k]
	if !ok {
		mode, typName := "managed", k
		if rest, ok := strings.CutPrefix(k, "data."); ok {
			mode, typName = "data", rest
		}
		typ, name, _ := strings.Cut(typName, ".")
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared resource",
			Detail: fmt.Sprintf("A %s resource %q %q has not been declared in %s.", mode, typ, name, e.m.describe()), Subject: &rng}}
	}
	if rb.check != "" && rb.check != e.s.check {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to scoped resource",
			Detail: fmt.Sprintf("The referenced data resource %q %q is not available from this context.", rb.typ, rb.name), Subject: &rng}}
	}
	insts := e.m.resourceInstances(k)
	var ds hcl.Diagnostics
	get := func(a string) cty.Value {
		if rb.mode == template.Ephemeral {
			v, d := e.ephemeralInstance(a, rng)
			ds = append(ds, d...)
			return v
		}
		if e.s.scope == nil {
			return cty.DynamicVal
		}
		rv, ok := e.s.scope.Resource(a)
		if !ok || rv.Outputs == cty.NilVal {
			return cty.DynamicVal
		}
		return rv.Outputs
	}
	switch {
	case rb.count != nil:
		vals := make([]cty.Value, len(insts))
		for i, a := range insts {
			vals[i] = get(a)
		}
		return cty.TupleVal(vals), ds
	case rb.forEach != nil:
		vals := map[string]cty.Value{}
		for _, a := range insts {
			vals[instanceKey(a)] = get(a)
		}
		return cty.ObjectVal(vals), ds
	default:
		v := get(e.m.prefix + k)
		return v, ds
	}
}

// instanceKey is the for_each key of an instance address `x.y["k"]`.
func instanceKey(a string) string {
	i := strings.LastIndex(a, `["`)
	return strings.TrimSuffix(a[i+2:], `"]`)
}

func (e *evaluator) local(name string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	ck := e.m.prefix + "local." + name
	if v, ok := e.s.values[ck]; ok {
		return v, nil
	}
	a, ok := e.m.locals[name]
	if !ok {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared local value",
			Detail: fmt.Sprintf("A local value with the name %q has not been declared.", name), Subject: &rng}}
	}
	if e.s.busy[ck] {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cycle in local values",
			Detail: fmt.Sprintf("local.%s refers to itself.", name), Subject: &rng}}
	}
	if ds := e.nest(rng); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	defer e.unnest()
	e.s.busy[ck] = true
	defer delete(e.s.busy, ck)
	ctx, ds := e.context(a.Expr.Variables())
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	v, d := a.Expr.Value(ctx)
	v, d = e.charge(v, append(ds, d...), a.Expr.Range())
	e.s.values[ck] = v
	return v, d
}

// charge charges the named value v (a local, an output, a module's variable) to the
// evaluation, through every alias: locals that repeat one another ([local.a, local.a], ...)
// would otherwise make values that every later walk pays for exponentially.
func (e *evaluator) charge(v cty.Value, ds hcl.Diagnostics, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if ds.HasErrors() || v == cty.NilVal {
		return v, ds
	}
	if err := budget.Charge(e.s.meter, v, "a value of references"); err != nil {
		return cty.DynamicVal, append(ds, stopDiag(err, rng))
	}
	return v, ds
}

// bodyExpr is a resource, data source or provider body: a template.BodyExpr.
type bodyExpr struct {
	m    *module
	body hcl.Body
	key  key
	// stored: a resource or data source body, whose configuration is kept, which therefore
	// may not hold ephemeral values (ephemeral.go)
	stored bool
}

// EvalSpec decodes the body with the provider's schema, dynamic blocks expanded.
func (b *bodyExpr) EvalSpec(s template.Scope, spec hcldec.Spec) (cty.Value, diag.Diagnostics) {
	e := b.m.evaluator(s, b.key)
	defer e.done()
	if ds := e.nest(b.body.MissingItemRange()); ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	ctx, ds := e.context(dynblock.VariablesHCLDec(b.body, spec))
	if ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	v, d := hcldec.Decode(e.expand(b.body, ctx), spec, ctx)
	if ds = append(ds, d...); b.stored && !ds.HasErrors() {
		ds = append(ds, ephemeralAttributes(b.body, v)...)
	}
	return e.result(v, ds, b.body.MissingItemRange())
}

// result is what an evaluation hands the engine: v, unless v refers to more than the limits
// allow, through every alias (the engine stores and sends it whole).
func (e *evaluator) result(v cty.Value, ds hcl.Diagnostics, rng hcl.Range) (cty.Value, diag.Diagnostics) {
	if !ds.HasErrors() && v != cty.NilVal {
		if err := budget.Charge(e.s.b.Meter(), v, "the value"); err != nil {
			v, ds = cty.DynamicVal, append(ds, stopDiag(err, rng))
		}
	}
	return v, convertDiags(ds, e.m.files)
}

// Eval decodes the body without a schema: its attributes, and each type of nested block as a
// tuple of objects, in order (dynamic blocks expanded, labels dropped). The meta-argument
// blocks of a resource (lifecycle, provisioner, connection) are not part of the body.
func (b *bodyExpr) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	e := b.m.evaluator(s, b.key)
	defer e.done()
	if ds := e.nest(b.body.MissingItemRange()); ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	sb, native := b.body.(*hclsyntax.Body)
	if !native { // JSON: nested blocks are attributes holding objects
		attrs, ds := b.body.JustAttributes()
		if ds.HasErrors() {
			return cty.DynamicVal, convertDiags(ds, b.m.files)
		}
		var refs []hcl.Traversal
		for _, a := range attrs {
			refs = append(refs, a.Expr.Variables()...)
		}
		ctx, d := e.context(refs)
		if ds = append(ds, d...); ds.HasErrors() {
			return cty.DynamicVal, convertDiags(ds, b.m.files)
		}
		out := map[string]cty.Value{}
		for name, a := range attrs {
			v, d := a.Expr.Value(ctx)
			ds = append(ds, d...)
			out[name] = v
		}
		if b.stored && !ds.HasErrors() {
			ds = append(ds, ephemeralAttributes(b.body, cty.ObjectVal(out))...)
		}
		return e.result(cty.ObjectVal(out), ds, b.body.MissingItemRange())
	}
	sh := shapeOf(sb, true)
	ctx, ds := e.context(sh.variables(dynblock.WalkVariables(b.body)))
	if ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, b.m.files)
	}
	v, d := decodeShaped(e.expand(b.body, ctx), sh, ctx)
	if ds = append(ds, d...); b.stored && !ds.HasErrors() {
		ds = append(ds, ephemeralAttributes(b.body, v)...)
	}
	return e.result(v, ds, b.body.MissingItemRange())
}

// metaBlock reports whether a resource body's top-level block of type typ is a meta-argument.
func metaBlock(typ string) bool {
	for _, b := range metaSchema.Blocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// exprValue is an output's value.
type exprValue struct {
	m         *module
	expr      hcl.Expression
	sensitive bool
}

func (x *exprValue) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	e := x.m.evaluator(s, key{})
	defer e.done()
	if ds := e.nest(x.expr.Range()); ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, x.m.files)
	}
	ctx, ds := e.context(x.expr.Variables())
	if ds.HasErrors() {
		return cty.DynamicVal, convertDiags(ds, x.m.files)
	}
	v, d := x.expr.Value(ctx)
	v, ds = x.m.outputEphemeral(nil, v, append(ds, d...), x.expr.Range())
	if x.sensitive && v != cty.NilVal {
		v = value.Secret(v)
	}
	return e.result(v, ds, x.expr.Range())
}

// bodyRefs is every traversal in a body, nested blocks included, without its schema.
func bodyRefs(b hcl.Body) []hcl.Traversal {
	var out []hcl.Traversal
	if sb, ok := b.(*hclsyntax.Body); ok {
		hclsyntax.VisitAll(sb, func(n hclsyntax.Node) hcl.Diagnostics {
			if x, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
				out = append(out, x.Traversal)
			}
			return nil
		})
		return out
	}
	attrs, _ := b.JustAttributes() // JSON: nested blocks are attributes holding objects
	for _, a := range attrs {
		out = append(out, a.Expr.Variables()...)
	}
	return out
}
