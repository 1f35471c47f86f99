package tflang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// build binds variables, expands count and for_each, and produces the stack.
func (m *module) build(opts Options) (*template.Stack, hcl.Diagnostics) {
	st := &template.Stack{Dialect: template.Terraform}
	ds := m.bindVariables(opts, st)
	if ds.HasErrors() {
		return nil, ds
	}
	m.localVals = map[string]cty.Value{}
	m.instances = map[string][]string{}
	keys := map[string][]key{}
	for _, k := range m.resOrder {
		ks, d := m.expand(m.resources[k])
		ds = append(ds, d...)
		keys[k] = ks
		for _, ik := range ks {
			m.instances[k] = append(m.instances[k], instanceAddr(k, ik))
		}
	}
	if ds.HasErrors() {
		return nil, ds
	}
	used := map[string]bool{}
	for _, k := range m.resOrder {
		rb := m.resources[k]
		local := strings.TrimPrefix(rb.provider, "provider.")
		local, _, _ = strings.Cut(local, ".")
		used[local] = true
		refs := bodyRefs(rb.body)
		refs = append(refs, rb.deps...)
		for _, a := range []*hcl.Attribute{rb.count, rb.forEach} {
			if a != nil {
				refs = append(refs, a.Expr.Variables()...)
			}
		}
		refs = append(refs, rb.lifecycle.replaceBy...)
		deps := m.references(refs, map[string]bool{})
		for _, ik := range keys[k] {
			r := &template.Resource{Name: instanceAddr(k, ik), Type: rb.typ, Mode: rb.mode, Properties: &bodyExpr{m: m, body: rb.body, key: ik},
				DependsOn: deps, Provider: rb.provider, Range: rangeOf(rb.block.DefRange), TypeRange: rangeOf(rb.block.LabelRanges[0]),
				CreateBeforeDestroy: rb.lifecycle.cbd, PreventDestroy: rb.lifecycle.prevent,
				IgnoreChanges: rb.lifecycle.ignore, IgnoreAllChanges: rb.lifecycle.ignoreAll,
				ReplaceTriggeredBy: m.references(rb.lifecycle.replaceBy, map[string]bool{}),
				PropertyRanges:     map[string]diag.Range{}}
			if attrs, d := rb.body.JustAttributes(); !d.HasErrors() {
				for name, a := range attrs {
					r.PropertyRanges[name] = rangeOf(a.Range)
				}
			}
			st.Resources = append(st.Resources, r)
		}
	}
	ds = append(ds, m.buildProviders(st, used)...)
	for _, name := range m.outOrder {
		b := m.outputs[name]
		attrs, d := b.Body.JustAttributes()
		ds = append(ds, d...)
		a, ok := attrs["value"]
		if !ok {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
				Detail: `The argument "value" is required, but no definition was found.`, Subject: &b.DefRange})
			continue
		}
		o := &template.Output{Name: name, Value: &exprValue{m: m, expr: a.Expr}, Range: rangeOf(b.DefRange)}
		if da, ok := attrs["description"]; ok {
			if v, d := da.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String {
				o.Description = v.AsString()
			}
		}
		if sa, ok := attrs["sensitive"]; ok {
			if v, d := sa.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.Bool && v.True() {
				o.Value = &exprValue{m: m, expr: a.Expr, sensitive: true}
				o.Sensitive = true
			}
		}
		st.Outputs = append(st.Outputs, o)
	}
	return st, ds
}

// instanceAddr is the address of one instance of resource block k.
func instanceAddr(k string, ik key) string {
	switch ik.kind {
	case "count":
		return fmt.Sprintf("%s[%s]", k, ik.index.AsBigFloat().Text('f', 0))
	case "each":
		return fmt.Sprintf("%s[%q]", k, ik.index.AsString())
	}
	return k
}

// expand evaluates count or for_each, which must be known before anything is applied.
func (m *module) expand(rb *resourceBlock) ([]key, hcl.Diagnostics) {
	e := m.evaluator(nil, key{})
	switch {
	case rb.count != nil:
		ctx, ds := e.context(rb.count.Expr.Variables())
		if ds.HasErrors() {
			return nil, ds
		}
		v, d := rb.count.Expr.Value(ctx)
		ds = append(ds, d...)
		if ds.HasErrors() {
			return nil, ds
		}
		v, _ = v.Unmark()
		if !v.IsKnown() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: rb.count.Expr.Range().Ptr(),
				Detail: `The "count" value depends on resource attributes that cannot be determined until apply, so cairn cannot predict how many instances will be created.`}}
		}
		if v.IsNull() || v.Type() != cty.Number {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: rb.count.Expr.Range().Ptr(),
				Detail: "The given \"count\" argument value is unsuitable: a whole number is required."}}
		}
		n, acc := v.AsBigFloat().Int64()
		if n < 0 || acc != 0 && !v.AsBigFloat().IsInt() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: rb.count.Expr.Range().Ptr(),
				Detail: "The given \"count\" argument value is unsuitable: must be a whole number greater than or equal to zero."}}
		}
		out := make([]key, n)
		for i := range out {
			out[i] = key{kind: "count", index: cty.NumberIntVal(int64(i))}
		}
		return out, nil
	case rb.forEach != nil:
		ctx, ds := e.context(rb.forEach.Expr.Variables())
		if ds.HasErrors() {
			return nil, ds
		}
		v, d := rb.forEach.Expr.Value(ctx)
		ds = append(ds, d...)
		if ds.HasErrors() {
			return nil, ds
		}
		if !v.IsWhollyKnown() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: rb.forEach.Expr.Range().Ptr(),
				Detail: `The "for_each" map includes keys derived from resource attributes that cannot be determined until apply, and so cairn cannot determine the full set of keys that will identify the instances of this resource.`}}
		}
		ty := v.Type()
		var out []key
		switch {
		case v.IsNull():
		case ty.IsMapType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next(); {
				k, ev := it.Element()
				out = append(out, key{kind: "each", index: k, value: ev})
			}
		case ty.IsSetType() && ty.ElementType() == cty.String:
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				out = append(out, key{kind: "each", index: ev, value: ev})
			}
		default:
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: rb.forEach.Expr.Range().Ptr(),
				Detail: fmt.Sprintf("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type %s.", ty.FriendlyName())}}
		}
		return out, nil
	}
	return []key{{}}, nil
}

// buildProviders makes the provider configurations: one per provider block, and an empty
// default one for every provider used without a block.
func (m *module) buildProviders(st *template.Stack, used map[string]bool) hcl.Diagnostics {
	var ds hcl.Diagnostics
	have := map[string]bool{}
	for _, b := range m.providers {
		name := b.Labels[0]
		content, remain, d := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "alias"}, {Name: "version"}}})
		ds = append(ds, d...)
		a := "provider." + name
		alias := ""
		if aa, ok := content.Attributes["alias"]; ok {
			if v, d := aa.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String {
				alias = v.AsString()
				a += "." + alias
			}
		}
		if have[a] {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate provider configuration",
				Detail: fmt.Sprintf("A default (non-aliased) provider configuration for %q was already given.", name), Subject: &b.DefRange})
			continue
		}
		have[a] = true
		used[name] = true
		st.Providers = append(st.Providers, &template.ProviderConfig{Addr: a, Name: name, Alias: alias,
			Config: &bodyExpr{m: m, body: remain}, DependsOn: m.references(bodyRefs(remain), map[string]bool{}), Range: rangeOf(b.DefRange)})
	}
	empty := hclparse.NewParser()
	f, _ := empty.ParseHCL(nil, "<implied>")
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	reqs := map[string]bool{}
	for _, r := range m.reqs {
		reqs[r.Name] = true
	}
	for _, n := range names {
		if !reqs[n] {
			src, err := addr.ParseProvider("hashicorp/" + n)
			if err == nil {
				m.reqs = append(m.reqs, &template.ProviderRequirement{Name: n, Source: src.String()})
			}
		}
		if !have["provider."+n] {
			st.Providers = append(st.Providers, &template.ProviderConfig{Addr: "provider." + n, Name: n, Config: &bodyExpr{m: m, body: f.Body}})
		}
	}
	for _, r := range st.Resources {
		if st.Provider(r.Provider) == nil {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Provider configuration not present",
				Detail: fmt.Sprintf("To work with %s its original provider configuration at %s is required, but it has been removed.", r.Name, r.Provider)})
		}
	}
	st.Requirements = m.reqs
	return ds
}
