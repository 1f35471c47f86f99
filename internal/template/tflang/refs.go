package tflang

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// variable is the value of var.name in the evaluator's module: the root's bound value, or,
// in a child module, its call's argument evaluated in the caller (or the default), converted
// to the variable's type.
func (e *evaluator) variable(name string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	m := e.m
	v, declared := m.vars[name]
	if !declared {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared input variable",
			Detail: fmt.Sprintf("An input variable with the name %q has not been declared. This variable can be declared with a variable %q {} block.", name, name), Subject: &rng}}
	}
	if m.parent == nil {
		val, ok := m.varVals[name]
		if !ok {
			return cty.DynamicVal, nil // its error was reported when binding
		}
		return val, nil
	}
	ck := m.prefix + "var." + name
	if val, ok := e.s.values[ck]; ok {
		return val, nil
	}
	val := v.dflt
	var ds hcl.Diagnostics
	subject := m.call.block.DefRange
	if a, ok := m.call.args[name]; ok {
		if ds = e.enter(ck, rng); ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		defer delete(e.s.busy, ck)
		if ds = e.nest(rng); ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		defer e.unnest()
		pe := e.in(m.parent, m.callKey)
		ctx, d := pe.context(a.Expr.Variables())
		ds = append(ds, d...)
		if d.HasErrors() {
			return cty.DynamicVal, ds
		}
		val, d = a.Expr.Value(ctx)
		if val, ds = e.charge(val, append(ds, d...), a.Expr.Range()); ds.HasErrors() {
			return cty.DynamicVal, ds
		}
		subject = a.Expr.Range()
	}
	if val == cty.NilVal { // required and not given: reported by checkArgs
		return cty.DynamicVal, ds
	}
	if val.IsNull() && !v.nullable && v.dflt != cty.NilVal {
		val = v.dflt
	}
	conv, err := v.convert(val)
	if err != nil {
		return cty.DynamicVal, append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for input variable",
			Detail: fmt.Sprintf("The given value is not suitable for %s.var.%s declared at %s: %s.", m.describe(), name, v.block.DefRange.String(), err), Subject: &subject})
	}
	if d := ephemeralArgument(v, conv, subject); d.HasErrors() {
		return cty.DynamicVal, append(ds, d...)
	}
	e.s.values[ck] = conv
	return conv, ds
}

// moduleValue is the value of module.name as the traversals ts use it: an object of the
// outputs they read (all of them when one uses the module as a whole); a tuple of such
// objects with count, an object of them by key with for_each.
func (e *evaluator) moduleValue(name string, ts []hcl.Traversal) (cty.Value, hcl.Diagnostics) {
	rng := ts[0].SourceRange()
	c, ok := e.m.calls[name]
	if !ok {
		return cty.DynamicVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared module",
			Detail: fmt.Sprintf("No module call named %q is declared in %s.", name, e.m.describe()), Subject: &rng}}
	}
	insts := e.m.callInstances(name)
	want, all := map[string]bool{}, false
	for _, t := range ts {
		if o := outputName(t); o != "" {
			want[o] = true
		} else {
			all = true
		}
	}
	var ds hcl.Diagnostics
	if len(insts) > 0 {
		for _, o := range sortedSet(want) {
			if _, ok := insts[0].outputs[o]; !ok {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported attribute",
					Detail: fmt.Sprintf("This object does not have an attribute named %q: module %q declares no such output.", o, name), Subject: &rng})
			}
		}
	}
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	object := func(child *module) cty.Value {
		vals := map[string]cty.Value{}
		for _, o := range child.outOrder {
			if all || want[o] {
				v, d := e.in(child, key{}).output(o, rng)
				ds = append(ds, d...)
				vals[o] = v
			}
		}
		return cty.ObjectVal(vals)
	}
	switch {
	case c.count != nil:
		vals := make([]cty.Value, len(insts))
		for i, child := range insts {
			vals[i] = object(child)
		}
		return cty.TupleVal(vals), ds
	case c.forEach != nil:
		vals := map[string]cty.Value{}
		for _, child := range insts {
			vals[child.callKey.index.AsString()] = object(child)
		}
		return cty.ObjectVal(vals), ds
	case len(insts) == 1:
		return object(insts[0]), ds
	}
	return cty.DynamicVal, ds
}

// outputName is the output a module reference reads: "x" in module.m.x and module.m[0].x, ""
// when it uses the module as a whole.
func outputName(t hcl.Traversal) string {
	for i, s := range t {
		if i < 2 {
			continue
		}
		switch s := s.(type) {
		case hcl.TraverseAttr:
			return s.Name
		case hcl.TraverseIndex:
			if i > 2 {
				return ""
			}
		default:
			return ""
		}
	}
	return ""
}

// output is the value of an output of the evaluator's module.
func (e *evaluator) output(name string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	ck := e.m.prefix + "output." + name
	if v, ok := e.s.values[ck]; ok {
		return v, nil
	}
	attrs, _ := e.m.outputs[name].Body.JustAttributes()
	a, ok := attrs["value"]
	if !ok {
		return cty.DynamicVal, nil // reported when building
	}
	if ds := e.enter(ck, rng); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	defer delete(e.s.busy, ck)
	if ds := e.nest(rng); ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	defer e.unnest()
	ctx, ds := e.context(a.Expr.Variables())
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	v, d := a.Expr.Value(ctx)
	v, ds = e.charge(v, append(ds, d...), a.Expr.Range())
	v, ds = e.m.outputEphemeral(attrs, v, ds, a.Expr.Range())
	if e.m.outputSensitive(attrs) && v != cty.NilVal {
		v = value.Secret(v)
	}
	e.s.values[ck] = v
	return v, ds
}

// references lists the resource instances an expression set depends on, sorted: through
// local values, a child module's variables (its call's arguments) and module outputs too.
func (m *module) references(refs []hcl.Traversal, seen map[string]bool) []string {
	out := map[string]bool{}
	m.walkRefs(refs, seen, out)
	return sortedSet(out)
}

func (m *module) walkRefs(ts []hcl.Traversal, seen, out map[string]bool) {
	visit := func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		return true
	}
	for _, t := range ts {
		root := t.RootName()
		attr := ""
		if len(t) > 1 {
			if a, ok := t[1].(hcl.TraverseAttr); ok {
				attr = a.Name
			}
		}
		var k string
		switch root {
		case "local":
			if la, ok := m.locals[attr]; ok && visit(m.prefix+"local."+attr) {
				m.walkRefs(la.Expr.Variables(), seen, out)
			}
			continue
		case "var":
			if m.parent != nil && visit(m.prefix+"var."+attr) {
				if a, ok := m.call.args[attr]; ok {
					m.parent.walkRefs(a.Expr.Variables(), seen, out)
				}
			}
			continue
		case "module":
			o := outputName(t)
			for _, child := range m.calledInstances(t) {
				for _, name := range child.outOrder {
					if (o == "" || o == name) && visit(child.prefix+"output."+name) {
						attrs, _ := child.outputs[name].Body.JustAttributes()
						for _, a := range attrs {
							if a.Name == "depends_on" {
								dts, _ := traversalList(a.Expr)
								for _, d := range child.dependsOn(dts) {
									out[d] = true
								}
								continue
							}
							child.walkRefs(a.Expr.Variables(), seen, out)
						}
					}
				}
			}
			continue
		case "count", "each", "path", "terraform", "self":
			continue
		case "ephemeral":
			if ek, _, _, ok := ephemeralRef(t); ok {
				m.walkEphemeral(ek, seen, out)
			}
			continue
		case "data":
			if len(t) > 2 {
				a2, ok := t[2].(hcl.TraverseAttr)
				if ok && attr != "" {
					k = "data." + attr + "." + a2.Name
				}
			}
		default:
			if attr != "" {
				k = root + "." + attr
			}
		}
		if _, ok := m.resources[k]; ok {
			for _, inst := range m.resourceInstances(k) {
				out[inst] = true
			}
		}
	}
}

// dependsOn lists the resource instances a depends_on list names: a module there means every
// resource instance in it, nested modules included.
func (m *module) dependsOn(ts []hcl.Traversal) []string {
	out := map[string]bool{}
	for _, t := range ts {
		if t.RootName() != "module" {
			m.walkRefs([]hcl.Traversal{t}, map[string]bool{}, out)
			continue
		}
		for _, child := range m.calledInstances(t) {
			child.allInstances(out)
		}
	}
	return sortedSet(out)
}

// calledInstances is the instances of the module call a traversal module.NAME... names; none
// when NAME is no call of m.
func (m *module) calledInstances(t hcl.Traversal) []*module {
	if len(t) < 2 {
		return nil
	}
	a, ok := t[1].(hcl.TraverseAttr)
	if !ok {
		return nil
	}
	if _, ok := m.calls[a.Name]; !ok {
		return nil
	}
	return m.callInstances(a.Name)
}

// allInstances adds every resource instance in m and below it to out.
func (m *module) allInstances(out map[string]bool) {
	for _, k := range m.resOrder {
		for _, inst := range m.resourceInstances(k) {
			out[inst] = true
		}
	}
	for _, n := range m.callOrder {
		for _, child := range m.callInstances(n) {
			child.allInstances(out)
		}
	}
}

func sortedSet(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkModuleRefs reports references to module calls the module does not make, and to
// outputs the called module does not declare, wherever they are written: terraform finds
// them before anything is applied, so cairn does too.
func (m *module) checkModuleRefs() hcl.Diagnostics {
	var refs []hcl.Traversal
	for _, k := range m.resOrder {
		rb := m.resources[k]
		refs = append(refs, bodyRefs(rb.body)...)
		for _, a := range []*hcl.Attribute{rb.count, rb.forEach} {
			if a != nil {
				refs = append(refs, a.Expr.Variables()...)
			}
		}
		refs = append(refs, rb.deps...)
	}
	for _, a := range m.locals {
		refs = append(refs, a.Expr.Variables()...)
	}
	for _, name := range m.outOrder {
		attrs, _ := m.outputs[name].Body.JustAttributes()
		for _, a := range attrs {
			refs = append(refs, a.Expr.Variables()...)
		}
	}
	for _, n := range m.callOrder {
		c := m.calls[n]
		for _, a := range c.args {
			refs = append(refs, a.Expr.Variables()...)
		}
		refs = append(refs, c.deps...)
	}
	for _, b := range m.providers {
		refs = append(refs, bodyRefs(b.Body)...)
	}
	var ds hcl.Diagnostics
	for _, t := range refs {
		if t.RootName() != "module" || len(t) < 2 {
			continue
		}
		rng := t.SourceRange()
		a, ok := t[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		if _, ok := m.calls[a.Name]; !ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reference to undeclared module",
				Detail: fmt.Sprintf("No module call named %q is declared in %s.", a.Name, m.describe()), Subject: &rng})
			continue
		}
		insts := m.callInstances(a.Name)
		if o := outputName(t); o != "" && len(insts) > 0 {
			if _, ok := insts[0].outputs[o]; !ok {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unsupported attribute",
					Detail: fmt.Sprintf("This object does not have an attribute named %q: module %q declares no such output.", o, a.Name), Subject: &rng})
			}
		}
	}
	return ds
}
