package tflang

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// bindVariables gives each root variable its value, with terraform's precedence: default <
// TF_VAR_ environment < terraform.tfvars < *.auto.tfvars (lexical order) < -var-file (in order)
// < -var; then checks type constraints and validation blocks.
func (m *module) bindVariables(opts Options, st *template.Stack) hcl.Diagnostics {
	var ds hcl.Diagnostics
	raw := map[string]cty.Value{}
	set := func(name string, v cty.Value, rng *hcl.Range) {
		if _, ok := m.vars[name]; !ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("A variable named %q was assigned, but the root module does not declare a variable of that name.", name), Subject: rng})
			return
		}
		raw[name] = v
	}
	for _, name := range sortedKeys(opts.Env) {
		if v, ok := m.vars[name]; ok { // unknown TF_VAR_ names are ignored, as terraform does
			val, d := m.raw(v, opts.Env[name], "TF_VAR_"+name)
			ds = append(ds, d...)
			raw[name] = val
		}
	}
	var files []string
	for _, base := range []string{"terraform.tfvars", "terraform.tfvars.json"} { // terraform's order
		if name := path.Join(m.dir, base); hasFile(m.files, name) {
			files = append(files, name)
		}
	}
	var auto []string
	for name := range m.files {
		if path.Dir(name) == m.dir && (strings.HasSuffix(name, ".auto.tfvars") || strings.HasSuffix(name, ".auto.tfvars.json")) {
			auto = append(auto, name)
		}
	}
	sort.Strings(auto)
	files = append(append(files, auto...), opts.VarFiles...)
	for _, name := range files {
		src, ok := m.files[name]
		if !ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Failed to read variables file",
				Detail: fmt.Sprintf("Given variables file %s does not exist.", name)})
			continue
		}
		f, d := parseFile(src, name, m.ld.parse)
		ds = append(ds, d...)
		if f == nil {
			continue
		}
		attrs, d := f.Body.JustAttributes()
		ds = append(ds, d...)
		for n, a := range attrs {
			v, d := m.static(a.Expr)
			ds = append(ds, d...)
			set(n, v, &a.NameRange)
		}
	}
	for _, name := range sortedKeys(opts.Vars) {
		v, ok := m.vars[name]
		if !ok {
			set(name, cty.NilVal, nil)
			continue
		}
		val, d := m.raw(v, opts.Vars[name], "-var "+name)
		ds = append(ds, d...)
		raw[name] = val
	}
	m.varVals = map[string]cty.Value{}
	for _, name := range m.varOrder {
		v := m.vars[name]
		val, given := raw[name]
		switch {
		case given:
		case v.dflt != cty.NilVal:
			val = v.dflt
		case opts.Validate:
			val = cty.UnknownVal(v.ty)
		default:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No value for required variable",
				Detail:  fmt.Sprintf("The root module input variable %q is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable.", name),
				Subject: &v.block.DefRange})
			continue
		}
		if val.IsNull() && !v.nullable && v.dflt != cty.NilVal {
			val = v.dflt
		}
		conv, err := v.convert(val)
		if err != nil {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for input variable",
				Detail: fmt.Sprintf("The given value is not suitable for var.%s declared at %s: %s.", name, v.block.DefRange.String(), err), Subject: &v.block.DefRange})
			continue
		}
		m.varVals[name] = conv
		st.Parameters = append(st.Parameters, &template.Parameter{Name: name, Type: v.ty.FriendlyName(), Description: v.desc,
			NoEcho: v.sensitive, Value: conv, Range: rangeOf(v.block.DefRange), Ephemeral: v.ephemeral})
	}
	if ds.HasErrors() {
		return ds
	}
	for _, name := range m.varOrder {
		ds = append(ds, m.validate(name)...)
	}
	return ds
}

// validate evaluates a variable's validation blocks.
func (m *module) validate(name string) hcl.Diagnostics {
	var ds hcl.Diagnostics
	for _, b := range m.vars[name].validations {
		ds = append(ds, m.validateOne(b)...)
	}
	return ds
}

// validateOne evaluates one validation block; its evaluator's function table goes back to the
// pool when it returns.
func (m *module) validateOne(b *hcl.Block) hcl.Diagnostics {
	attrs, ds := b.Body.JustAttributes()
	cond, ok := attrs["condition"]
	if !ok {
		return ds
	}
	e := m.evaluator(nil, key{})
	defer e.done()
	ctx, d := e.context(cond.Expr.Variables())
	ds = append(ds, d...)
	v, d := cond.Expr.Value(ctx)
	ds = append(ds, d...)
	if d.HasErrors() || !v.IsKnown() || v.IsNull() {
		return ds
	}
	v, _ = v.Unmark()
	if v.Type() == cty.Bool && v.False() {
		msg := "Invalid value for variable"
		if ma, ok := attrs["error_message"]; ok {
			if mv, d := ma.Expr.Value(ctx); !d.HasErrors() && mv.Type() == cty.String {
				mv, _ = mv.Unmark()
				msg = mv.AsString()
			}
		}
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail: fmt.Sprintf("%s\n\nThis was checked by the validation rule at %s.", msg, b.DefRange.String()), Subject: cond.Expr.Range().Ptr()})
	}
	return ds
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasFile(files map[string][]byte, name string) bool {
	_, ok := files[name]
	return ok
}
