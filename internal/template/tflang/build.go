package tflang

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/addr"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// build binds variables, expands count and for_each (of resources and module calls), and
// produces the stack: the resources of every module instance, with terraform's addresses.
func (m *module) build(opts Options) (*template.Stack, hcl.Diagnostics) {
	st := &template.Stack{Dialect: template.Terraform, Policy: Policy()}
	ds := m.bindVariables(opts, st)
	if ds.HasErrors() {
		return nil, ds
	}
	mods := m.expandAll()
	st.Functions = m.ld.providerFunctions() // every module is loaded by now
	ds = append(ds, m.ld.diags...)
	m.ld.diags = nil
	checked := map[*config]bool{}
	for _, mod := range mods {
		if !checked[mod.config] {
			checked[mod.config] = true
			ds = append(ds, mod.checkModuleRefs()...)
			ds = append(ds, mod.checkStatic()...)
		}
	}
	ds = dedupe(ds)
	if ds.HasErrors() {
		return nil, ds
	}
	ds = append(ds, checkEphemeralArguments(mods)...)
	for _, mod := range mods[1:] {
		for _, name := range mod.varOrder {
			ds = append(ds, mod.validate(name)...)
		}
		for _, name := range mod.outOrder {
			_, d := outputAttrs(mod.outputs[name])
			ds = append(ds, d...)
		}
	}
	for _, mod := range mods {
		mod.addResources(st)
		mod.addChecks(st)
	}
	for _, mod := range mods {
		ds = append(ds, mod.addRefactors(st)...)
	}
	ds = append(ds, m.addImports(st, mods, opts.Validate)...) // imports.go
	reqs, d := mergeRequirements(mods)
	ds = append(ds, d...)
	ds = append(ds, m.buildProviders(st, mods, reqs)...)
	ds = append(ds, m.providerCycles(st, mods)...)
	for _, name := range m.outOrder {
		b := m.outputs[name]
		attrs, d := outputAttrs(b)
		ds = append(ds, d...)
		a, ok := attrs["value"]
		if !ok {
			continue
		}
		_, pre, _ := outputContent(b)
		ds = append(ds, m.rootOutputEphemeral(b, attrs)...)
		o := &template.Output{Name: name, Value: &exprValue{m: m, expr: a.Expr}, Range: rangeOf(b.DefRange), Preconditions: m.conditions(pre, key{})}
		if da, ok := attrs["description"]; ok {
			if v, d := m.static(da.Expr); !d.HasErrors() && v.Type() == cty.String {
				o.Description = v.AsString()
			}
		}
		if m.outputSensitive(attrs) {
			o.Value = &exprValue{m: m, expr: a.Expr, sensitive: true}
			o.Sensitive = true
		}
		st.Outputs = append(st.Outputs, o)
	}
	ds = append(ds, m.ld.diags...) // expansions made while building (none expected)
	if ds.HasErrors() {
		return nil, ds
	}
	return st, ds
}

// outputAttrs reads an output block; value is required.
func outputAttrs(b *hcl.Block) (hcl.Attributes, hcl.Diagnostics) {
	attrs, _, ds := outputContent(b)
	if _, ok := attrs["value"]; !ok && !ds.HasErrors() {
		ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required argument",
			Detail: `The argument "value" is required, but no definition was found.`, Subject: &b.DefRange})
	}
	return attrs, ds
}

func (m *config) outputSensitive(attrs hcl.Attributes) bool {
	sa, ok := attrs["sensitive"]
	if !ok {
		return false
	}
	v, d := m.static(sa.Expr)
	return !d.HasErrors() && v.Type() == cty.Bool && !v.IsNull() && v.True()
}

// expandAll expands every resource and module call below m: the module instances, m first,
// then its calls' instances depth first.
func (m *module) expandAll() []*module {
	out := []*module{m}
	for _, k := range m.resOrder {
		m.resourceInstances(k)
	}
	for _, n := range m.callOrder {
		for _, c := range m.callInstances(n) {
			if m.ld.over {
				return out
			}
			out = append(out, c.expandAll()...)
		}
	}
	return out
}

// charge counts n more resource or module instances of the stack at rng, and stops the
// expansion (false, with a diagnostic) once they are too many or the request's time is up.
func (ld *loader) charge(n int, rng hcl.Range) bool {
	if ld.over {
		return false
	}
	err := ld.b.Err()
	if err == nil {
		err = ld.stack.Resources(int64(n))
	}
	var ex *budget.Exceeded
	if errors.As(err, &ex) && ex.Limit == "resources" {
		c := *ex
		c.What = "the stack's resource and module instances"
		err = &c
	}
	if err != nil {
		ld.over = true
		ld.diags = append(ld.diags, stopDiag(err, rng))
		return false
	}
	return true
}

// resourceInstances is the instance addresses of resource block k, expanded once.
func (m *module) resourceInstances(k string) []string {
	if insts, ok := m.instances[k]; ok {
		return insts
	}
	insts := []string{}
	if m.expanding[k] {
		rb := m.resources[k]
		m.ld.diags = append(m.ld.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle in resource expansion",
			Detail: fmt.Sprintf("The count or for_each of %s depends on the resource itself.", k), Subject: rb.block.DefRange.Ptr()})
		return insts
	}
	m.expanding[k] = true
	rb := m.resources[k]
	ks, d := m.expandMeta(rb.count, rb.forEach)
	delete(m.expanding, k)
	m.ld.diags = append(m.ld.diags, d...)
	if !m.ld.charge(len(ks), rb.block.DefRange) {
		ks = nil
	}
	for _, ik := range ks {
		insts = append(insts, instanceAddr(m.prefix+k, ik))
	}
	m.keys[k], m.instances[k] = ks, insts
	return insts
}

// addResources adds the resource instances of m to st.
func (m *module) addResources(st *template.Stack) {
	for _, k := range m.resOrder {
		rb := m.resources[k]
		refs := bodyRefs(rb.body)
		for _, a := range []*hcl.Attribute{rb.count, rb.forEach} {
			if a != nil {
				refs = append(refs, a.Expr.Variables()...)
			}
		}
		refs = append(refs, rb.lifecycle.replaceBy...)
		refs = append(refs, rb.provisionerRefs()...)
		for _, r := range append(rb.lifecycle.pre, rb.lifecycle.post...) {
			refs = append(refs, r.refs()...)
		}
		deps := union(m.references(refs, map[string]bool{}), m.dependsOn(rb.deps), m.deps)
		prov := m.providerFor(strings.TrimPrefix(rb.provider, "provider."))
		ranges := map[string]diag.Range{}
		propertyRanges(rb.body, "", ranges)
		for i, ik := range m.keys[k] {
			r := &template.Resource{Name: m.instances[k][i], Type: rb.typ, Mode: rb.mode, Properties: &bodyExpr{m: m, body: rb.body, key: ik, stored: rb.mode != template.Ephemeral},
				DependsOn: deps, Provider: prov, Range: rangeOf(rb.block.DefRange), TypeRange: rangeOf(rb.block.LabelRanges[0]),
				CreateBeforeDestroy: rb.lifecycle.cbd, PreventDestroy: rb.lifecycle.prevent,
				IgnoreChanges: rb.lifecycle.ignore, IgnoreAllChanges: rb.lifecycle.ignoreAll,
				ReplaceTriggeredBy: m.references(rb.lifecycle.replaceBy, map[string]bool{}),
				PropertyRanges:     ranges, Check: rb.check,
				Preconditions: m.conditions(rb.lifecycle.pre, ik), Postconditions: m.conditions(rb.lifecycle.post, ik)}
			if rb.check != "" {
				r.Check = m.prefix + rb.check
			}
			if m.addEphemeral(st, rb, r) {
				continue
			}
			r.Provisioners = m.provisioners(rb, ik)
			st.Resources = append(st.Resources, r)
		}
	}
}

// propertyRanges records where each attribute and nested block of a body is, by dotted path:
// "name", "rule.1" (the second rule block), "rule.1.port".
func propertyRanges(b hcl.Body, prefix string, out map[string]diag.Range) {
	sb, ok := b.(*hclsyntax.Body)
	if !ok { // JSON: nested blocks are attributes holding objects
		if attrs, d := b.JustAttributes(); !d.HasErrors() {
			for name, a := range attrs {
				out[prefix+name] = rangeOf(a.Range)
			}
		}
		return
	}
	for name, a := range sb.Attributes {
		if prefix == "" && metaArgument(name) {
			continue
		}
		out[prefix+name] = rangeOf(a.SrcRange)
	}
	index := map[string]int{}
	for _, blk := range sb.Blocks {
		if prefix == "" && metaBlock(blk.Type) {
			continue
		}
		if blk.Type == "dynamic" && len(blk.Labels) == 1 {
			// its blocks are made when it is evaluated: only the type has a place
			if _, seen := out[prefix+blk.Labels[0]]; !seen {
				out[prefix+blk.Labels[0]] = rangeOf(blk.DefRange())
			}
			continue
		}
		p := prefix + blk.Type + "." + strconv.Itoa(index[blk.Type])
		index[blk.Type]++
		out[p] = rangeOf(blk.DefRange())
		if _, seen := out[prefix+blk.Type]; !seen {
			out[prefix+blk.Type] = rangeOf(blk.DefRange())
		}
		propertyRanges(blk.Body, p+".", out)
	}
}

func metaArgument(name string) bool {
	for _, a := range metaSchema.Attributes {
		if a.Name == name {
			return true
		}
	}
	return false
}

// union merges sorted address lists, sorted and without duplicates.
func union(lists ...[]string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, l := range lists {
		for _, a := range l {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

// instanceAddr is the address of one instance of resource block k.
func instanceAddr(k string, ik key) string {
	return k + keySuffix(ik)
}

// expandMeta evaluates the count or for_each of a resource or module call: the number of
// instances, or their keys, must be known before anything is applied (for_each values need
// not be).
func (m *module) expandMeta(count, forEach *hcl.Attribute) ([]key, hcl.Diagnostics) {
	e := m.evaluator(nil, key{})
	defer e.done()
	switch {
	case count != nil:
		ctx, ds := e.context(count.Expr.Variables())
		if ds.HasErrors() {
			return nil, ds
		}
		v, d := count.Expr.Value(ctx)
		ds = append(ds, d...)
		if ds.HasErrors() {
			return nil, ds
		}
		v, _ = v.Unmark()
		if !v.IsKnown() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: count.Expr.Range().Ptr(),
				Detail: `The "count" value depends on resource attributes that cannot be determined until apply, so cairn cannot predict how many instances will be created.`}}
		}
		if n, err := convert.Convert(v, cty.Number); err == nil {
			v = n // as terraform: "3" (a -var value of an untyped variable) counts 3
		}
		if v.IsNull() || v.Type() != cty.Number {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: count.Expr.Range().Ptr(),
				Detail: "The given \"count\" argument value is unsuitable: a whole number is required."}}
		}
		bf := v.AsBigFloat()
		if bf.Sign() < 0 || !bf.IsInt() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid count argument", Subject: count.Expr.Range().Ptr(),
				Detail: "The given \"count\" argument value is unsuitable: must be a whole number greater than or equal to zero."}}
		}
		n, acc := bf.Int64()
		if acc != big.Exact {
			n = math.MaxInt64
		}
		if err := m.ld.b.Instances(n, "count"); err != nil {
			return nil, hcl.Diagnostics{exceededDiag(err, count.Expr.Range())}
		}
		out := make([]key, n)
		for i := range out {
			out[i] = key{kind: "count", index: cty.NumberIntVal(int64(i))}
		}
		return out, nil
	case forEach != nil:
		ctx, ds := e.context(forEach.Expr.Variables())
		if ds.HasErrors() {
			return nil, ds
		}
		v, d := forEach.Expr.Value(ctx)
		ds = append(ds, d...)
		if ds.HasErrors() {
			return nil, ds
		}
		// Like terraform, only the keys must be known now: a map or object whose values are
		// not (another for_each resource's instances, say) is fine, and each.value is
		// evaluated again, from the applied resources, when the instance's body is.
		ty := v.Type()
		if !v.IsKnown() || ty.IsSetType() && !v.IsWhollyKnown() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: forEach.Expr.Range().Ptr(),
				Detail: `The "for_each" map includes keys derived from resource attributes that cannot be determined until apply, and so cairn cannot determine the full set of keys that will identify the instances of this resource.`}}
		}
		if v.IsMarked() {
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: forEach.Expr.Range().Ptr(),
				Detail: "Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key."}}
		}
		var out []key
		if !v.IsNull() && v.CanIterateElements() {
			if err := m.ld.b.Instances(int64(v.LengthInt()), "for_each"); err != nil {
				return nil, hcl.Diagnostics{exceededDiag(err, forEach.Expr.Range())}
			}
		}
		switch {
		case v.IsNull():
		case ty.IsMapType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next(); {
				k, ev := it.Element()
				out = append(out, key{kind: "each", index: k, value: ev, forEach: forEach.Expr})
			}
		case ty.IsSetType() && ty.ElementType() == cty.String:
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				out = append(out, key{kind: "each", index: ev, value: ev})
			}
		default:
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid for_each argument", Subject: forEach.Expr.Range().Ptr(),
				Detail: fmt.Sprintf("The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type %s.", ty.FriendlyName())}}
		}
		return out, nil
	}
	return []key{{}}, nil
}

// buildProviders makes the provider configurations: one per provider block of every module
// instance, and an empty default one in the root for every provider used without a block.
func (m *module) buildProviders(st *template.Stack, mods []*module, reqs []*template.ProviderRequirement) hcl.Diagnostics {
	var ds hcl.Diagnostics
	used := map[string]bool{}
	for _, mod := range mods {
		have := map[string]bool{}
		for _, b := range mod.providers {
			name := b.Labels[0]
			content, remain, d := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "alias"}, {Name: "version"}}})
			ds = append(ds, d...)
			local := mod.providerLocal(b)
			_, alias, _ := strings.Cut(local, ".")
			if _, ok := content.Attributes["alias"]; ok && alias == "" {
				continue // reported by PartialContent or unusable
			}
			if have[local] {
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate provider configuration",
					Detail: fmt.Sprintf("A provider configuration for %q was already given.", local), Subject: &b.DefRange})
				continue
			}
			have[local] = true
			used[name] = true
			st.Providers = append(st.Providers, &template.ProviderConfig{Addr: mod.prefix + "provider." + local, Name: name, Alias: alias,
				Config: &bodyExpr{m: mod, body: remain}, DependsOn: mod.references(bodyRefs(remain), map[string]bool{}), Range: rangeOf(b.DefRange)})
		}
	}
	for _, r := range append(st.Resources[:len(st.Resources):len(st.Resources)], st.Ephemerals...) {
		if n, ok := strings.CutPrefix(r.Provider, "provider."); ok && !strings.Contains(n, ".") {
			used[n] = true
		}
	}
	empty := hclparse.NewParser()
	f, _ := empty.ParseHCL(nil, "<implied>")
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	have := map[string]bool{}
	for _, r := range reqs {
		have[r.Name] = true
	}
	for _, n := range names {
		if !have[n] && n == "terraform" { // terraform_data: the built-in provider, as terraform implies it
			reqs = append(reqs, &template.ProviderRequirement{Name: n, Source: template.BuiltinProvider})
		} else if !have[n] {
			src, err := addr.ParseProvider("hashicorp/" + n)
			if err == nil {
				reqs = append(reqs, &template.ProviderRequirement{Name: n, Source: src.String()})
			}
		}
		if st.Provider("provider."+n) == nil {
			st.Providers = append(st.Providers, &template.ProviderConfig{Addr: "provider." + n, Name: n, Config: &bodyExpr{m: m, body: f.Body}})
		}
	}
	for _, r := range append(st.Resources[:len(st.Resources):len(st.Resources)], st.Ephemerals...) {
		if st.Provider(r.Provider) == nil {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Provider configuration not present",
				Detail: fmt.Sprintf("To work with %s its original provider configuration at %s is required, but it has been removed. "+
					"A module gets an aliased provider configuration only through the providers argument of its call.", r.Name, r.Provider)})
		}
	}
	st.Requirements = reqs
	return ds
}

// mergeRequirements merges the required_providers of every module: a local name must mean
// the same source everywhere; version constraints add up.
func mergeRequirements(mods []*module) ([]*template.ProviderRequirement, hcl.Diagnostics) {
	var ds hcl.Diagnostics
	var out []*template.ProviderRequirement
	byName := map[string]*template.ProviderRequirement{}
	seen := map[*config]bool{}
	for _, mod := range mods {
		if seen[mod.config] {
			continue
		}
		seen[mod.config] = true
		for _, r := range mod.reqs {
			ex, ok := byName[r.Name]
			switch {
			case !ok:
				c := *r
				byName[r.Name] = &c
				out = append(out, &c)
			case ex.Source != r.Source:
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Conflicting provider local names",
					Detail: fmt.Sprintf("%s:%d: %s requires provider %q from %s, but another module uses that name for %s. cairn needs each local name to mean the same provider in every module.",
						r.Range.Filename, r.Range.Line, mod.describe(), r.Name, r.Source, ex.Source)})
			case r.Versions != "" && !strings.Contains(ex.Versions, r.Versions):
				if ex.Versions == "" {
					ex.Versions = r.Versions
				} else {
					ex.Versions += ", " + r.Versions
				}
			}
		}
	}
	return out, ds
}
