package tflang

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/function"
)

// Static checks: terraform validates every expression of a configuration before it plans,
// so a call to an unknown function, a call with the wrong number of arguments, or a
// reference to a variable, local value or resource that is not declared fails `validate`
// and `preview` at its place, not halfway through a deploy. Module references are checked by
// checkModuleRefs.

// checked is an expression to check, with the names it may use besides the module's
// declarations (a dynamic block's iterator).
type checked struct {
	x     hcl.Expression
	iters map[string]bool
	unit  int // expressions terraform evaluates together: calls are checked once their references are
}

// checkStatic checks the expressions of the module's configuration.
func (m *module) checkStatic() hcl.Diagnostics {
	var xs []checked
	unit := 0
	add := func(x hcl.Expression) {
		if x != nil {
			unit++
			xs = append(xs, checked{x: x, unit: unit})
		}
	}
	addRules := func(rules []*checkRule) {
		for _, r := range rules {
			add(r.condition)
			add(r.message)
		}
	}
	for _, a := range m.locals {
		add(a.Expr)
	}
	for _, name := range m.outOrder {
		attrs, pre, _ := outputContent(m.outputs[name])
		for _, a := range attrs {
			add(a.Expr)
		}
		addRules(pre)
	}
	for _, k := range m.resOrder {
		rb := m.resources[k]
		unit++
		for _, c := range bodyExprs(rb.block.Body, true, nil) {
			c.unit = unit
			xs = append(xs, c)
		}
		for _, a := range []*hcl.Attribute{rb.count, rb.forEach} {
			if a != nil {
				add(a.Expr)
			}
		}
		addRules(rb.lifecycle.pre)
		addRules(rb.lifecycle.post)
	}
	for _, n := range m.callOrder {
		c := m.calls[n]
		for _, a := range c.args {
			add(a.Expr)
		}
		for _, a := range []*hcl.Attribute{c.count, c.forEach} {
			if a != nil {
				add(a.Expr)
			}
		}
	}
	for _, b := range m.providers {
		unit++
		for _, c := range bodyExprs(b.Body, false, nil) {
			c.unit = unit
			xs = append(xs, c)
		}
	}
	for _, name := range m.varOrder {
		for _, b := range m.vars[name].validations {
			attrs, _ := b.Body.JustAttributes()
			for _, a := range attrs {
				add(a.Expr)
			}
		}
	}
	for _, c := range m.checks {
		addRules(c.asserts)
	}
	var ds hcl.Diagnostics
	badRefs := map[int]bool{}
	for _, c := range xs {
		for _, t := range c.x.Variables() {
			if c.iters[t.RootName()] {
				continue
			}
			if d := m.checkRef(t); d.HasErrors() {
				ds = append(ds, d...)
				badRefs[c.unit] = true
			}
		}
	}
	for _, c := range xs {
		if !badRefs[c.unit] {
			ds = append(ds, checkCalls(c.x, true)...)
		}
	}
	return ds
}

// bodyExprs are the expressions of a body and its nested blocks; top says it is a resource's
// own body, whose meta-arguments are checked apart (depends_on and lifecycle hold addresses).
func bodyExprs(b hcl.Body, top bool, iters map[string]bool) []checked {
	sb, ok := b.(*hclsyntax.Body)
	if !ok { // JSON: nested blocks are attributes
		attrs, _ := b.JustAttributes()
		var out []checked
		for name, a := range attrs {
			if !top || !metaArgument(name) && name != "lifecycle" && name != "dynamic" {
				out = append(out, checked{x: a.Expr, iters: iters})
			}
		}
		return out
	}
	var out []checked
	for name, a := range sb.Attributes {
		if top && (name == "count" || name == "for_each" || name == "provider" || name == "depends_on") {
			continue
		}
		out = append(out, checked{x: a.Expr, iters: iters})
	}
	for _, blk := range sb.Blocks {
		inner := iters
		switch {
		case top && blk.Type == "lifecycle":
			continue
		case top && blk.Type == "provisioner": // when and on_failure are keywords (provisioner.go)
			out = append(out, provisionerExprs(blk)...)
			continue
		case blk.Type == "dynamic" && len(blk.Labels) == 1:
			it := blk.Labels[0]
			if a, ok := blk.Body.Attributes["iterator"]; ok {
				if kw := hcl.ExprAsKeyword(a.Expr); kw != "" {
					it = kw
				}
			}
			inner = map[string]bool{it: true}
			for n := range iters {
				inner[n] = true
			}
		}
		out = append(out, bodyExprs(blk.Body, false, inner)...)
	}
	return out
}

// checkRef reports a reference to a variable, local value, resource or data source the
// module does not declare, with terraform's messages.
func (m *module) checkRef(t hcl.Traversal) hcl.Diagnostics {
	rng := t.SourceRange()
	attr := func(i int) string {
		if len(t) > i {
			if a, ok := t[i].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
		return ""
	}
	undeclared := func(summary, detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng}}
	}
	switch root := t.RootName(); root {
	case "var":
		if n := attr(1); n != "" {
			if _, ok := m.vars[n]; !ok {
				return undeclared("Reference to undeclared input variable", fmt.Sprintf(
					"An input variable with the name %q has not been declared. This variable can be declared with a variable %q {} block.", n, n))
			}
		}
	case "local":
		if n := attr(1); n != "" {
			if _, ok := m.locals[n]; !ok {
				return undeclared("Reference to undeclared local value", fmt.Sprintf("A local value with the name %q has not been declared.", n))
			}
		}
	case "data":
		typ, name := attr(1), attr(2)
		if typ != "" && name != "" {
			if _, ok := m.resources["data."+typ+"."+name]; !ok {
				return undeclared("Reference to undeclared resource", fmt.Sprintf(
					"A data resource %q %q has not been declared in %s.", typ, name, m.describe()))
			}
		}
	case "ephemeral":
		typ, name := attr(1), attr(2)
		if typ != "" && name != "" {
			if _, ok := m.resources["ephemeral."+typ+"."+name]; !ok {
				return undeclared("Reference to undeclared resource", fmt.Sprintf(
					"An ephemeral resource %q %q has not been declared in %s.", typ, name, m.describe()))
			}
		}
	case "module", "count", "each", "self", "path", "terraform":
		// module: checkModuleRefs; the others are checked where they are evaluated
	default:
		name := attr(1)
		if name == "" {
			if len(t) == 1 {
				return undeclared("Invalid reference", "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.")
			}
			return nil
		}
		if _, ok := m.resources[root+"."+name]; !ok {
			return undeclared("Reference to undeclared resource", fmt.Sprintf(
				"A managed resource %q %q has not been declared in %s.", root, name, m.describe()))
		}
	}
	return nil
}

// checkCalls reports calls in x to functions terraform does not have and, with arity, calls
// with a number of arguments the function does not take, as hcl would report them when
// evaluating.
func checkCalls(x hcl.Expression, arity bool) hcl.Diagnostics {
	node, ok := x.(hclsyntax.Node)
	if !ok {
		return nil // JSON: its templates are parsed when evaluated
	}
	fns := terraformTable()
	var ds hcl.Diagnostics
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok || strings.HasPrefix(call.Name, reservedPrefix) {
			return nil
		}
		f, known := fns[call.Name]
		if !known {
			plain, isCore := strings.CutPrefix(call.Name, "core::")
			if strings.Contains(plain, "::") {
				return nil // provider and module namespaces: resolved elsewhere
			}
			rng := hcl.RangeBetween(call.NameRange, call.OpenParenRange)
			if isCore { // terraform's words for a core:: name it does not have
				ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown provider function",
					Detail: `The function namespace "core" is not valid. Provider function calls must use the "provider::" namespace prefix.`, Subject: &rng})
				return nil
			}
			detail := fmt.Sprintf("There is no function named %q.", call.Name)
			if s := nameSuggestion(plain); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Call to unknown function", Detail: detail, Subject: &rng})
			return nil
		}
		if arity {
			ds = append(ds, checkArity(call, f)...)
		}
		return nil
	})
	return ds
}

// checkArity reports a call with fewer or more arguments than f takes, with hcl's messages.
func checkArity(call *hclsyntax.FunctionCallExpr, f function.Function) hcl.Diagnostics {
	if call.ExpandFinal {
		return nil // the number of arguments is that of a list's elements
	}
	params := f.Params()
	n := len(call.Args)
	switch {
	case n < len(params):
		missing := params[n]
		qual := ""
		if f.VarParam() != nil {
			qual = " at least"
		}
		rng := call.CloseParenRange
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Not enough function arguments",
			Detail:  fmt.Sprintf("Function %q expects%s %d argument(s). Missing value for %q.", call.Name, qual, len(params), missing.Name),
			Subject: &rng, Context: call.Range().Ptr()}}
	case n > len(params) && f.VarParam() == nil:
		rng := call.Args[len(params)].StartRange()
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Too many function arguments",
			Detail:  fmt.Sprintf("Function %q expects only %d argument(s).", call.Name, len(params)),
			Subject: &rng, Context: call.Range().Ptr()}}
	}
	return nil
}

// functionNames are the names of terraform's functions without a namespace, sorted: the
// suggestions of a misspelt name.
var functionNames = sync.OnceValue(func() []string {
	var out []string
	for name := range terraformTable() {
		if !strings.Contains(name, "::") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
})

// nameSuggestion is the function name close to given, as hcl suggests one; "" if none. The
// distance of two names is at least the difference of their lengths: names whose lengths
// differ by 3 or more are not compared (a long name is compared with none, instead of costing
// its length times every name's).
func nameSuggestion(given string) string {
	n := utf8.RuneCountInString(given)
	for _, s := range functionNames() {
		if d := n - len(s); d >= 3 || d <= -3 {
			continue
		}
		if levenshtein.Distance(given, s, nil) < 3 {
			return s
		}
	}
	return ""
}

// dedupe drops diagnostics repeated at the same place: a reference checked statically may be
// reported again by the evaluation of count or for_each.
func dedupe(ds hcl.Diagnostics) hcl.Diagnostics {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		k := d.Summary
		if d.Subject != nil {
			k += "|" + d.Subject.String()
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}
