package tflang

import (
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/terraform-linters/tflint-plugin-sdk/terraform/lang/marks"
	"github.com/terraform-linters/tflint/terraform/lang/funcs"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// Ephemeral values (terraform 1.10+): `variable { ephemeral = true }`, `output { ephemeral =
// true }` in child modules, and `ephemeral` resource blocks. Their values carry the mark
// terraform's functions know (marks.Ephemeral, the one tflint's ephemeralasnull strips), and
// may flow only into places that are not stored: provider configurations, locals, ephemeral
// resources and outputs, ephemeral module variables. A resource or data source argument, or
// a root output, holding one is terraform's error.

// EphemeralScope is a template.Scope that opens ephemeral resources: the value of instance
// name (`ephemeral.random_password.p[0]`), opened once for the run, or an error when it could
// not be opened. Without it an ephemeral resource's value is unknown.
type EphemeralScope interface {
	Ephemeral(name string) (cty.Value, error)
}

func markEphemeral(v cty.Value) cty.Value { return v.Mark(marks.Ephemeral) }

// IsEphemeral reports whether v or anything inside it is ephemeral.
func IsEphemeral(v cty.Value) bool {
	return v != cty.NilVal && marks.Contains(v, marks.Ephemeral)
}

// WithoutEphemeral is v with its ephemeral parts null, as ephemeralasnull makes them: what
// may be digested or kept of a value that was given ephemeral parts.
func WithoutEphemeral(v cty.Value) cty.Value {
	if !IsEphemeral(v) {
		return v
	}
	out, err := funcs.EphemeralAsNull(v)
	if err != nil {
		return cty.DynamicVal
	}
	return out
}

// ephemeralFlag reads an `ephemeral = true|false` argument.
func (m *config) ephemeralFlag(a *hcl.Attribute) (bool, hcl.Diagnostics) {
	if a == nil {
		return false, nil
	}
	v, ds := m.static(a.Expr)
	if ds.HasErrors() {
		return false, ds
	}
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.Bool {
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for ephemeral",
			Detail: "The ephemeral argument must be true or false.", Subject: a.Expr.Range().Ptr()}}
	}
	return v.True(), nil
}

// outputEphemeral applies an output block's `ephemeral` to its value v: an ephemeral output
// marks it; another may not hold an ephemeral value. A root module's output may not be
// ephemeral at all (checked when building, see rootOutputEphemeral).
func (m *config) outputEphemeral(attrs hcl.Attributes, v cty.Value, ds hcl.Diagnostics, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if ds.HasErrors() || v == cty.NilVal {
		return v, ds
	}
	eph, d := m.ephemeralFlag(attrs["ephemeral"])
	ds = append(ds, d...)
	switch {
	case eph:
		return markEphemeral(v), ds
	case IsEphemeral(v):
		return cty.DynamicVal, append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Ephemeral value not allowed",
			Detail:  "This output value is not declared as returning an ephemeral value, so it cannot be set to a result derived from an ephemeral value.",
			Subject: &rng})
	}
	return v, ds
}

// rootOutputEphemeral refuses `ephemeral = true` on a root module's output, as terraform does.
func (m *config) rootOutputEphemeral(b *hcl.Block, attrs hcl.Attributes) hcl.Diagnostics {
	eph, ds := m.ephemeralFlag(attrs["ephemeral"])
	if eph {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Ephemeral output not allowed",
			Detail: "Ephemeral outputs are not allowed in context of a root module", Subject: b.DefRange.Ptr()})
	}
	return ds
}

// ephemeralArgument refuses an ephemeral value for a module variable not declared ephemeral.
func ephemeralArgument(v *variable, val cty.Value, rng hcl.Range) hcl.Diagnostics {
	if v.ephemeral || !IsEphemeral(val) {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Ephemeral value not allowed",
		Detail:  "This input variable is not declared as accepting a ephemeral values, so it cannot be set to a result derived from an ephemeral value.",
		Subject: &rng}}
}

// ephemeralAttributes refuses ephemeral values in the arguments of a resource or data source
// body, whose configuration is stored: terraform's "Invalid use of ephemeral value", at the
// argument. cairn does not yet tell write-only attributes (which may take them) apart.
func ephemeralAttributes(body hcl.Body, v cty.Value) hcl.Diagnostics {
	if !IsEphemeral(v) || !v.Type().IsObjectType() || v.IsNull() || !v.IsKnown() {
		if IsEphemeral(v) {
			rng := body.MissingItemRange()
			return hcl.Diagnostics{invalidEphemeral("", rng)}
		}
		return nil
	}
	places := map[string]hcl.Range{}
	if sb, ok := body.(*hclsyntax.Body); ok {
		for name, a := range sb.Attributes {
			places[name] = a.Expr.Range()
		}
		for _, blk := range sb.Blocks {
			name := blk.Type
			if blk.Type == "dynamic" && len(blk.Labels) == 1 {
				name = blk.Labels[0]
			}
			if _, seen := places[name]; !seen {
				places[name] = blk.DefRange()
			}
		}
	} else if attrs, d := body.JustAttributes(); !d.HasErrors() {
		for name, a := range attrs {
			places[name] = a.Expr.Range()
		}
	}
	var ds hcl.Diagnostics
	names := make([]string, 0, len(places))
	for name := range places {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v.Type().HasAttribute(name) && IsEphemeral(v.GetAttr(name)) {
			ds = append(ds, invalidEphemeral(name, places[name]))
		}
	}
	if len(ds) == 0 {
		ds = append(ds, invalidEphemeral("", body.MissingItemRange()))
	}
	return ds
}

func invalidEphemeral(name string, rng hcl.Range) *hcl.Diagnostic {
	detail := "Ephemeral values are not valid here, because the configuration must be persisted to state."
	if name != "" {
		detail = fmt.Sprintf("Ephemeral values are not valid for %q, because it is not a write-only attribute and must be persisted to state.", name)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid use of ephemeral value", Detail: detail, Subject: &rng}
}

// ephemeralRef is the reference `ephemeral.TYPE.NAME` of traversal t: its block key and the
// two names; ok false when t names no block.
func ephemeralRef(t hcl.Traversal) (k, typ, name string, ok bool) {
	if len(t) < 3 {
		return "", "", "", false
	}
	a1, ok1 := t[1].(hcl.TraverseAttr)
	a2, ok2 := t[2].(hcl.TraverseAttr)
	if !ok1 || !ok2 {
		return "", "", "", false
	}
	return "ephemeral." + a1.Name + "." + a2.Name, a1.Name, a2.Name, true
}

// ephemeralContext adds the value of the ephemeral resource t refers to to vars["ephemeral"].
func (e *evaluator) ephemeralContext(t hcl.Traversal, vars map[string]map[string]cty.Value) hcl.Diagnostics {
	rng := t.SourceRange()
	k, typ, name, ok := ephemeralRef(t)
	if !ok {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
			Detail: "The \"ephemeral\" object must be followed by two attribute names: the ephemeral resource type and name.", Subject: &rng}}
	}
	if _, declared := e.m.resources[k]; !declared {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Reference to undeclared resource",
			Detail: fmt.Sprintf("An ephemeral resource %q %q has not been declared in %s.", typ, name, e.m.describe()), Subject: &rng}}
	}
	v, ds := e.resource(k, rng)
	if vars["ephemeral"] == nil {
		vars["ephemeral"] = map[string]cty.Value{}
	}
	inner := map[string]cty.Value{}
	if ex, ok := vars["ephemeral"][typ]; ok {
		inner = ex.AsValueMap()
	}
	inner[name] = v
	vars["ephemeral"][typ] = cty.ObjectVal(inner)
	return ds
}

// ephemeralInstance is the value of one instance of an ephemeral resource: opened by the
// scope, unknown without one (validation, count and for_each), always marked ephemeral.
func (e *evaluator) ephemeralInstance(addr string, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	es, ok := e.s.scope.(EphemeralScope)
	if !ok || e.s.scope == nil {
		return markEphemeral(cty.DynamicVal), nil
	}
	v, err := es.Ephemeral(addr)
	if err != nil {
		return markEphemeral(cty.DynamicVal), hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Failed to open ephemeral resource",
			Detail: fmt.Sprintf("%s: %s", addr, err), Subject: &rng}}
	}
	if v == cty.NilVal {
		v = cty.DynamicVal
	}
	return markEphemeral(v), nil
}

// walkEphemeral adds to out what the ephemeral resource block k needs before it can be
// opened: the resources its arguments, count, for_each and depends_on refer to. The block
// itself is no step of the run: it is opened when something evaluates it.
func (m *module) walkEphemeral(k string, seen, out map[string]bool) {
	rb, ok := m.resources[k]
	if !ok || rb.mode != template.Ephemeral || seen[m.prefix+k] {
		return
	}
	seen[m.prefix+k] = true
	refs := bodyRefs(rb.body)
	for _, a := range []*hcl.Attribute{rb.count, rb.forEach} {
		if a != nil {
			refs = append(refs, a.Expr.Variables()...)
		}
	}
	for _, r := range append(rb.lifecycle.pre, rb.lifecycle.post...) {
		refs = append(refs, r.refs()...)
	}
	m.walkRefs(refs, seen, out)
	for _, d := range m.dependsOn(rb.deps) {
		out[d] = true
	}
	for _, d := range m.deps {
		out[d] = true
	}
}

// ephemeralProviders lists the provider configurations serving the ephemeral resources refs
// reach (through locals, module variables and outputs, other ephemeral resources): a provider
// configuration must wait for them, and may not need its own.
func (m *module) ephemeralProviders(refs []hcl.Traversal, seen map[string]bool, out, ephs map[string]bool) {
	for _, t := range refs {
		switch t.RootName() {
		case "local":
			if len(t) > 1 {
				if a, ok := t[1].(hcl.TraverseAttr); ok {
					if la, ok := m.locals[a.Name]; ok && !seen[m.prefix+"local."+a.Name] {
						seen[m.prefix+"local."+a.Name] = true
						m.ephemeralProviders(la.Expr.Variables(), seen, out, ephs)
					}
				}
			}
		case "var":
			if m.parent != nil && len(t) > 1 {
				if a, ok := t[1].(hcl.TraverseAttr); ok && !seen[m.prefix+"var."+a.Name] {
					seen[m.prefix+"var."+a.Name] = true
					if arg, ok := m.call.args[a.Name]; ok {
						m.parent.ephemeralProviders(arg.Expr.Variables(), seen, out, ephs)
					}
				}
			}
		case "module":
			o := outputName(t)
			for _, child := range m.calledInstances(t) {
				for _, name := range child.outOrder {
					if (o == "" || o == name) && !seen[child.prefix+"output."+name] {
						seen[child.prefix+"output."+name] = true
						attrs, _ := child.outputs[name].Body.JustAttributes()
						if va, ok := attrs["value"]; ok {
							child.ephemeralProviders(va.Expr.Variables(), seen, out, ephs)
						}
					}
				}
			}
		case "ephemeral":
			k, _, _, ok := ephemeralRef(t)
			rb, declared := m.resources[k]
			if !ok || !declared || seen[m.prefix+k+"#p"] {
				continue
			}
			seen[m.prefix+k+"#p"] = true
			out[m.providerFor(rb.provider[len("provider."):])] = true
			ephs[m.prefix+k] = true
			m.ephemeralProviders(bodyRefs(rb.body), seen, out, ephs)
		}
	}
}

// providerCycles refuses a provider configuration that needs an ephemeral resource its own
// configuration serves: it cannot be configured before it opens it.
func (m *module) providerCycles(st *template.Stack, mods []*module) hcl.Diagnostics {
	var ds hcl.Diagnostics
	for _, mod := range mods {
		for _, b := range mod.providers {
			addr := mod.prefix + "provider." + mod.providerLocal(b)
			cfg := st.Provider(addr)
			if cfg == nil {
				continue
			}
			need := map[string]bool{}
			mod.ephemeralProviders(bodyRefs(b.Body), map[string]bool{}, need, map[string]bool{})
			if need[addr] {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle in provider configuration",
					Detail:  fmt.Sprintf("The configuration of %s uses an ephemeral resource that %s itself must open.", addr, addr),
					Subject: b.DefRange.Ptr()})
				continue
			}
			delete(need, addr)
			cfg.DependsOn = union(cfg.DependsOn, sortedSet(need))
		}
		for _, k := range mod.resOrder {
			rb := mod.resources[k]
			if rb.mode != template.Ephemeral {
				continue
			}
			ephs := map[string]bool{}
			mod.ephemeralProviders(bodyRefs(rb.body), map[string]bool{}, map[string]bool{}, ephs)
			if ephs[mod.prefix+k] {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle in ephemeral resources",
					Detail: fmt.Sprintf("The configuration of %s%s refers to itself through other ephemeral resources.", mod.prefix, k), Subject: rb.block.DefRange.Ptr()})
			}
		}
	}
	return ds
}

// addEphemerals adds rb's instances to st.Ephemerals; ok false when rb is not ephemeral.
func (m *module) addEphemeral(st *template.Stack, rb *resourceBlock, r *template.Resource) bool {
	if rb.mode != template.Ephemeral {
		return false
	}
	st.Ephemerals = append(st.Ephemerals, r)
	return true
}

// checkEphemeralArguments evaluates the arguments of the module calls of mods (instances of
// child modules) that set variables not declared ephemeral, as terraform's validate does, when
// the configuration has anything ephemeral: an ephemeral value there is an error even if the
// module never reads the variable.
func checkEphemeralArguments(mods []*module) hcl.Diagnostics {
	found := false
	for _, mod := range mods {
		for _, v := range mod.vars {
			found = found || v.ephemeral
		}
		for _, rb := range mod.resources {
			found = found || rb.mode == template.Ephemeral
		}
	}
	if !found {
		return nil
	}
	var ds hcl.Diagnostics
	for _, mod := range mods {
		if mod.parent == nil {
			continue
		}
		for _, name := range mod.varOrder {
			a, ok := mod.call.args[name]
			if !ok || mod.vars[name].ephemeral {
				continue
			}
			e := mod.evaluator(nil, key{})
			_, d := e.variable(name, a.Expr.Range())
			e.done()
			ds = append(ds, d...)
		}
	}
	return ds
}
