package tflang

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/budget"
)

// HCL has no hook in a for expression or a string template, so each parsed file is rewritten:
// the collection of every `for` becomes __cairn_count(collection, bytes), which charges its
// length (and the literal bytes each element's body copies) before the body runs once per
// element, and every interpolated part of a template becomes __cairn_bytes(part), which
// charges the string before the template appends it: "${s}${s}${s}…" of a long s stops at the
// bytes limit instead of building it. Users cannot call these names (checkSource refuses them)
// and diagnostics never show them.
const (
	reservedPrefix = "__cairn_"
	countFunc      = "__cairn_count"
	bytesFunc      = "__cairn_bytes"
	staticFunc     = "__cairn_static" // marks the context of values that may not call functions
)

// limitSummary is the summary of every diagnostic of a budget.
const limitSummary = "Template exceeds a limit of this server"

// exceededDiag is the diagnostic of a budget err at rng.
func exceededDiag(err error, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: limitSummary, Detail: err.Error() + ".", Subject: rng.Ptr()}
}

// rewrite restores the literal templates of s in the AST of node and wraps its for
// expressions and templates as said above.
func rewrite(node hclsyntax.Node, s *source) {
	var parens []*hclsyntax.ParenthesesExpr
	var fors []*hclsyntax.ForExpr
	var tmpls []*hclsyntax.TemplateExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.ParenthesesExpr:
			parens = append(parens, n)
		case *hclsyntax.ForExpr:
			fors = append(fors, n)
		case *hclsyntax.TemplateExpr:
			if !n.IsStringLiteral() && len(n.Parts) > 0 {
				tmpls = append(tmpls, n)
			}
		}
		return nil
	})
	if s != nil {
		s.restore(parens)
	}
	for _, f := range fors {
		var n int64
		for _, x := range []hclsyntax.Expression{f.KeyExpr, f.ValExpr, f.CondExpr} {
			if x != nil {
				n += literalBytes(x)
			}
		}
		weight := &hclsyntax.LiteralValueExpr{Val: cty.NumberIntVal(n), SrcRange: f.CollExpr.Range()}
		f.CollExpr = call(countFunc, f.CollExpr, weight)
	}
	for _, t := range tmpls {
		for i, p := range t.Parts {
			if _, lit := p.(*hclsyntax.LiteralValueExpr); !lit {
				t.Parts[i] = call(bytesFunc, p)
			}
		}
	}
}

// literalBytes is the size of the string literals in node: what evaluating it copies at least.
func literalBytes(node hclsyntax.Node) int64 {
	var n int64
	hclsyntax.VisitAll(node, func(n2 hclsyntax.Node) hcl.Diagnostics {
		if l, ok := n2.(*hclsyntax.LiteralValueExpr); ok && l.Val.Type() == cty.String && l.Val.IsKnown() && !l.Val.IsNull() {
			n += int64(len(l.Val.AsString()))
		}
		return nil
	})
	return n
}

// call is name(args...), placed where args[0] is.
func call(name string, args ...hclsyntax.Expression) *hclsyntax.FunctionCallExpr {
	rng := args[0].Range()
	return &hclsyntax.FunctionCallExpr{Name: name, Args: args, NameRange: rng, OpenParenRange: rng, CloseParenRange: rng}
}

// countFunction returns a for expression's collection unchanged after charging its length
// times budget.IterationCost elements, and its length times the literal bytes of the body.
func countFunction(meter func() *budget.Meter) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "collection", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true}, {Name: "bytes", Type: cty.Number}},
		Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, _ := args[0].Unmark()
			if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
				return args[0], nil
			}
			n := int64(v.LengthInt())
			per, _ := args[1].AsBigFloat().Int64()
			if err := meter().Elements(n*budget.IterationCost, "for expression"); err != nil {
				return cty.NilVal, err
			}
			if per > 0 {
				if err := meter().Bytes(n*per, "for expression"); err != nil {
					return cty.NilVal, err
				}
			}
			return args[0], nil
		},
	})
}

// bytesFunction returns its string argument, charging its length to the meter.
func bytesFunction(meter func() *budget.Meter) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "s", Type: cty.DynamicPseudoType,
			AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true}},
		Type: func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, _ := args[0].Unmark()
			if v.IsKnown() && !v.IsNull() && v.Type() == cty.String {
				if err := meter().Bytes(int64(len(v.AsString())), "string template"); err != nil {
					return cty.NilVal, err
				}
			}
			return args[0], nil
		},
	})
}

// funcTable is the language's functions bound to the meter of the one evaluation using it:
// evaluations run concurrently, so each takes a table from its loader's pool for its
// duration instead of building its closures again.
type funcTable struct {
	meter *budget.Meter
	fns   map[string]function.Function
}

type tablePool struct {
	pool  sync.Pool
	files map[string][]byte
	root  string
}

func (p *tablePool) get(m *budget.Meter) *funcTable {
	t, _ := p.pool.Get().(*funcTable)
	if t == nil {
		t = &funcTable{}
		meter := func() *budget.Meter { return t.meter }
		t.fns = budget.WrapAll(functions(p.files, p.root), meter)
		t.fns[countFunc] = countFunction(meter)
		t.fns[bytesFunc] = bytesFunction(meter)
	}
	t.meter = m
	return t
}

func (p *tablePool) put(t *funcTable) {
	if t != nil {
		t.meter = nil
		p.pool.Put(t)
	}
}

// staticContext is the context of values that may reference nothing and call no function
// (variable defaults, lifecycle flags, variables files): only the rewritten calls, charged to
// m. A user's call there reads "Function calls not allowed", as with no context.
func staticContext(m *budget.Meter) *hcl.EvalContext {
	meter := func() *budget.Meter { return m }
	return &hcl.EvalContext{Functions: map[string]function.Function{
		countFunc: countFunction(meter), bytesFunc: bytesFunction(meter), staticFunc: function.New(&function.Spec{}),
	}}
}

// userDiag makes an HCL diagnostic fit for users: a budget's error as its own diagnostic, no
// word of the rewritten calls.
func userDiag(d *hcl.Diagnostic) *hcl.Diagnostic {
	if fe, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d); ok {
		var ex *budget.Exceeded
		if err := fe.FunctionCallError(); errors.As(err, &ex) {
			rng := d.Subject
			if rng == nil {
				rng = &hcl.Range{}
			}
			return exceededDiag(ex, *rng)
		}
		if err := fe.FunctionCallError(); err != nil && strings.HasPrefix(fe.CalledFunctionName(), reservedPrefix) {
			c := *d
			c.Summary, c.Detail = "Invalid expression", err.Error()+"."
			return &c
		}
	}
	if d.Summary == "Call to unknown function" && d.EvalContext != nil {
		root := d.EvalContext
		for root.Parent() != nil {
			root = root.Parent()
		}
		if _, ok := root.Functions[staticFunc]; ok {
			c := *d
			c.Summary, c.Detail = "Function calls not allowed", "Functions may not be called here."
			return &c
		}
	}
	return d
}

// unquoteJSON decodes one JSON string literal.
func unquoteJSON(lit []byte) (string, error) {
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}
