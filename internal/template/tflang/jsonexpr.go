package tflang

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/cairn-dev/cairn/internal/budget"
)

// jsonBody is a .tf.json body whose expressions evaluate as hcljson's do, except that a string
// without "${" or "%{" is not parsed as a template (hcljson parses every string at every
// evaluation, in time quadratic in its "$" and "%"), and a template's for expressions and
// strings are charged to the evaluation's budget (see rewrite).
type jsonBody struct {
	hcl.Body
	b *budget.Budget
	t *templates // shared by every body and expression of one file
}

// templates caches a file's strings parsed as templates, by start byte: an expression is
// evaluated once per resource instance and per reference, the string parsed once.
type templates struct {
	mu sync.Mutex
	m  map[int]parsedTemplate
}

type parsedTemplate struct {
	expr  hclsyntax.Expression // nil: not a template
	diags hcl.Diagnostics
}

func (j jsonBody) Content(s *hcl.BodySchema) (*hcl.BodyContent, hcl.Diagnostics) {
	c, ds := j.Body.Content(s)
	return j.content(c), ds
}

func (j jsonBody) PartialContent(s *hcl.BodySchema) (*hcl.BodyContent, hcl.Body, hcl.Diagnostics) {
	c, rest, ds := j.Body.PartialContent(s)
	if rest != nil {
		rest = jsonBody{rest, j.b, j.t}
	}
	return j.content(c), rest, ds
}

func (j jsonBody) JustAttributes() (hcl.Attributes, hcl.Diagnostics) {
	attrs, ds := j.Body.JustAttributes()
	return j.attrs(attrs), ds
}

func (j jsonBody) content(c *hcl.BodyContent) *hcl.BodyContent {
	if c == nil {
		return nil
	}
	out := *c
	out.Attributes = j.attrs(c.Attributes)
	out.Blocks = make(hcl.Blocks, len(c.Blocks))
	for i, b := range c.Blocks {
		nb := *b
		nb.Body = jsonBody{b.Body, j.b, j.t}
		out.Blocks[i] = &nb
	}
	return &out
}

func (j jsonBody) attrs(in hcl.Attributes) hcl.Attributes {
	if in == nil {
		return nil
	}
	out := make(hcl.Attributes, len(in))
	for n, a := range in {
		na := *a
		na.Expr = jsonExpr{a.Expr, j.b, j.t}
		out[n] = &na
	}
	return out
}

// jsonExpr is an expression of a jsonBody.
type jsonExpr struct {
	hcl.Expression
	b *budget.Budget
	t *templates
}

func (x jsonExpr) wrap(e hcl.Expression) hcl.Expression { return jsonExpr{e, x.b, x.t} }

func (x jsonExpr) UnwrapExpression() hcl.Expression { return x.Expression }

// template is the string x holds as a parsed, rewritten template; nil when x is not a string
// or holds no template sequence. It is parsed once per file (see templates).
func (x jsonExpr) template() (hclsyntax.Expression, hcl.Diagnostics) {
	if x.t == nil {
		return x.parseTemplate()
	}
	at := x.Range().Start.Byte
	x.t.mu.Lock()
	defer x.t.mu.Unlock()
	if p, ok := x.t.m[at]; ok {
		return p.expr, p.diags
	}
	expr, ds := x.parseTemplate()
	if x.t.m == nil {
		x.t.m = map[int]parsedTemplate{}
	}
	x.t.m[at] = parsedTemplate{expr, ds}
	return expr, ds
}

func (x jsonExpr) parseTemplate() (hclsyntax.Expression, hcl.Diagnostics) {
	if x.list() != nil || x.pairs() != nil {
		return nil, nil
	}
	v, ds := x.Expression.Value(nil) // a string as written
	if ds.HasErrors() || v.IsNull() || v.Type() != cty.String {
		return nil, nil
	}
	s := v.AsString()
	if !strings.Contains(s, "${") && !strings.Contains(s, "%{") {
		return nil, nil
	}
	rng := x.Range()
	start := hcl.Pos{Line: rng.Start.Line, Column: rng.Start.Column + 1, Byte: rng.Start.Byte + 1}
	expr, ds := hclsyntax.ParseTemplate([]byte(s), rng.Filename, start) // checked when loading (jsonDepth)
	if ds.HasErrors() {
		return nil, ds
	}
	rewrite(expr, nil)
	return expr, nil
}

func (x jsonExpr) list() []hcl.Expression {
	l, _ := x.Expression.(interface{ ExprList() []hcl.Expression })
	if l == nil {
		return nil
	}
	return l.ExprList()
}

func (x jsonExpr) pairs() []hcl.KeyValuePair {
	m, _ := x.Expression.(interface{ ExprMap() []hcl.KeyValuePair })
	if m == nil {
		return nil
	}
	return m.ExprMap()
}

// Value is hcljson's, strings aside (see jsonBody).
func (x jsonExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	if ctx == nil {
		return x.Expression.Value(nil)
	}
	if l := x.list(); l != nil {
		var ds hcl.Diagnostics
		vals := make([]cty.Value, len(l))
		for i, e := range l {
			v, d := x.wrap(e).Value(ctx)
			ds = append(ds, d...)
			vals[i] = v
		}
		return cty.TupleVal(vals), ds
	}
	if ps := x.pairs(); ps != nil {
		return x.object(ps, ctx)
	}
	expr, ds := x.template()
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	if expr == nil {
		return x.Expression.Value(nil)
	}
	return expr.Value(ctx)
}

// object evaluates an object as hcljson does: keys are templates too.
func (x jsonExpr) object(ps []hcl.KeyValuePair, ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	var ds hcl.Diagnostics
	attrs := map[string]cty.Value{}
	ranges := map[string]hcl.Range{}
	known := true
	for _, p := range ps {
		name, d := x.wrap(p.Key).Value(ctx)
		ds = append(ds, d...)
		val, d := x.wrap(p.Value).Value(ctx)
		ds = append(ds, d...)
		rng := p.Key.Range()
		name, err := convert.Convert(name, cty.String)
		switch {
		case err != nil:
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid object key expression",
				Detail: fmt.Sprintf("Cannot use this expression as an object key: %s.", err), Subject: &rng})
			continue
		case name.IsNull():
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid object key expression",
				Detail: "Cannot use null value as an object key.", Subject: &rng})
			continue
		case !name.IsKnown():
			known = false
			continue
		}
		name, _ = name.Unmark()
		k := name.AsString()
		if prev, dup := ranges[k]; dup {
			ds = append(ds, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate object attribute",
				Detail: fmt.Sprintf("An attribute named %q was already defined at %s.", k, prev), Subject: &rng})
			continue
		}
		attrs[k], ranges[k] = val, rng
	}
	if !known {
		return cty.DynamicVal, ds
	}
	return cty.ObjectVal(attrs), ds
}

// Variables is hcljson's, strings aside.
func (x jsonExpr) Variables() []hcl.Traversal {
	var out []hcl.Traversal
	if l := x.list(); l != nil {
		for _, e := range l {
			out = append(out, x.wrap(e).Variables()...)
		}
		return out
	}
	if ps := x.pairs(); ps != nil {
		for _, p := range ps {
			out = append(out, x.wrap(p.Key).Variables()...)
			out = append(out, x.wrap(p.Value).Variables()...)
		}
		return out
	}
	if expr, ds := x.template(); expr != nil && !ds.HasErrors() {
		return expr.Variables()
	}
	return nil
}

// ExprList, ExprMap, AsTraversal and ExprCall serve hcl's static analysis (hcl.ExprList,
// typeexpr, ...) with the elements wrapped in turn.
func (x jsonExpr) ExprList() []hcl.Expression {
	l := x.list()
	for i, e := range l {
		l[i] = x.wrap(e)
	}
	return l
}

func (x jsonExpr) ExprMap() []hcl.KeyValuePair {
	ps := x.pairs()
	for i, p := range ps {
		ps[i] = hcl.KeyValuePair{Key: x.wrap(p.Key), Value: x.wrap(p.Value)}
	}
	return ps
}

func (x jsonExpr) AsTraversal() hcl.Traversal {
	t, _ := x.Expression.(interface{ AsTraversal() hcl.Traversal })
	if t == nil {
		return nil
	}
	return t.AsTraversal()
}

// ExprCall parses a string such as "list(string)" as an expression: checked first.
func (x jsonExpr) ExprCall() *hcl.StaticCall {
	c, _ := x.Expression.(interface{ ExprCall() *hcl.StaticCall })
	if c == nil {
		return nil
	}
	if v, ds := x.Expression.Value(nil); !ds.HasErrors() && !v.IsNull() && v.Type() == cty.String {
		rng := x.Range()
		if _, ds := checkSource([]byte(v.AsString()), rng.Filename, rng.Start, lexExpression, x.b.Meter(), 0); ds.HasErrors() {
			return nil
		}
	}
	return c.ExprCall()
}
