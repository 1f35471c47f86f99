package tflang

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
)

// HCL has no hook in a for expression or a string template, so each parsed file is rewritten:
// the collection of every `for` is wrapped to charge its length before the body runs once per
// element, its key and value to charge what each element is, through every alias ([for i in
// range(1000) : local.big] holds big a thousand times), and every interpolated part of a
// template to charge its string before the template appends it ("${s}${s}${s}…" of a long s
// stops at the bytes limit instead of building it).
//
// The wrappers are metered nodes, not function calls: cty walks every argument of a call
// through its aliases (for marks) before the function runs, and hcl goes on iterating a for
// after an element failed, so a call could not stop what it meters. Once a meter is over, the
// nodes evaluate nothing: a for over an unknown collection does not iterate.
const (
	reservedPrefix = "__cairn_"
	countFunc      = "__cairn_count"
	elemFunc       = "__cairn_elem"
	bytesFunc      = "__cairn_bytes"
	meterFunc      = "__cairn_meter"  // returns the evaluation's meter (a capsule) to metered nodes
	staticFunc     = "__cairn_static" // marks the context of values that may not call functions
)

// limitSummary is the summary of every diagnostic of a budget.
const limitSummary = "Template exceeds a limit of this server"

// IsLimit reports whether d says an evaluation passed a limit of its budget.
func IsLimit(d diag.Diagnostic) bool { return d.Summary == limitSummary }

// exceededDiag is the diagnostic of a budget err at rng.
func exceededDiag(err error, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: limitSummary, Detail: err.Error() + ".", Subject: rng.Ptr(),
		Extra: limitExtra{err}}
}

// limitExtra keeps a limit's error with its diagnostic, for a template rendered by a
// function (templatefile) to fail with the error itself.
type limitExtra struct{ err error }

// limitErr is the budget error among ds, nil if none.
func limitErr(ds hcl.Diagnostics) error {
	for _, d := range ds {
		if x, ok := hcl.DiagnosticExtra[limitExtra](d); ok {
			return x.err
		}
		if fe, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d); ok {
			if err := fe.FunctionCallError(); budget.IsExceeded(err) {
				return err
			}
		}
	}
	return nil
}

// rewrite restores the literal templates of s in the AST of node and meters its for
// expressions and templates as said above.
func rewrite(node hclsyntax.Node, s *source) {
	var parens []*hclsyntax.ParenthesesExpr
	var fors []*hclsyntax.ForExpr
	var tmpls []*hclsyntax.TemplateExpr
	var tuples []*hclsyntax.TupleConsExpr
	var objects []*hclsyntax.ObjectConsExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.TupleConsExpr:
			tuples = append(tuples, n)
		case *hclsyntax.ObjectConsExpr:
			objects = append(objects, n)
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
		f.CollExpr = metered(countFunc, f.CollExpr)
		f.ValExpr = metered(elemFunc, f.ValExpr)
		if f.KeyExpr != nil {
			f.KeyExpr = metered(elemFunc, f.KeyExpr)
		}
	}
	for _, t := range tmpls {
		for i, p := range t.Parts {
			if _, lit := p.(*hclsyntax.LiteralValueExpr); !lit {
				t.Parts[i] = metered(bytesFunc, p)
			}
		}
	}
	// [local.a, local.a, …] repeats what it refers to as a for does
	for _, t := range tuples {
		for i, x := range t.Exprs {
			if refers(x) {
				t.Exprs[i] = metered(elemFunc, x)
			}
		}
	}
	for _, o := range objects {
		for i, it := range o.Items {
			if refers(it.ValueExpr) {
				o.Items[i].ValueExpr = metered(elemFunc, it.ValueExpr)
			}
		}
	}
}

// refers reports whether x may evaluate to more than its source: anything but a literal
// (whose elements are metered themselves).
func refers(x hclsyntax.Expression) bool {
	switch x := x.(type) {
	case *hclsyntax.LiteralValueExpr, *hclsyntax.TupleConsExpr, *hclsyntax.ObjectConsExpr, meteredExpr:
		return false
	case *hclsyntax.TemplateExpr:
		return !x.IsStringLiteral()
	}
	return true
}

// meteredExpr evaluates Args[0] and charges it to the evaluation's meter as Name says. It is
// a FunctionCallExpr for the rest of hclsyntax (walks, Variables) and nothing calls it.
type meteredExpr struct{ *hclsyntax.FunctionCallExpr }

func metered(name string, x hclsyntax.Expression) meteredExpr {
	rng := x.Range()
	return meteredExpr{&hclsyntax.FunctionCallExpr{Name: name, Args: []hclsyntax.Expression{x},
		NameRange: rng, OpenParenRange: rng, CloseParenRange: rng}}
}

// UnwrapExpression and ExprCall let hcl's static analysis (hcl.ExprList, AbsTraversalForExpr,
// typeexpr ...) see the expression metered, not the wrapper.
func (x meteredExpr) UnwrapExpression() hcl.Expression { return x.Args[0] }

func (x meteredExpr) ExprCall() *hcl.StaticCall {
	c, ds := hcl.ExprCall(x.Args[0])
	if ds.HasErrors() {
		return nil
	}
	return c
}

func (x meteredExpr) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	m := meterOf(ctx)
	if m == nil {
		return x.Args[0].Value(ctx)
	}
	if m.Would(0, 0, "") != nil {
		return cty.DynamicVal, nil // over already, and said so
	}
	v, ds := x.Args[0].Value(ctx)
	if ds.HasErrors() {
		return v, ds
	}
	uv, _ := v.Unmark()
	var err error
	switch {
	case !uv.IsKnown() || uv.IsNull():
	case x.Name == countFunc && uv.CanIterateElements():
		err = m.Elements(int64(uv.LengthInt())*budget.IterationCost, "for expression")
	case x.Name == elemFunc:
		err = budget.Charge(m, v, "for expression")
	case x.Name == bytesFunc && uv.Type() == cty.String:
		err = m.Bytes(int64(len(uv.AsString())), "string template")
	}
	if err != nil {
		return cty.DynamicVal, append(ds, stopDiag(err, x.Args[0].Range()))
	}
	return v, ds
}

var meterType = cty.Capsule("meter", reflect.TypeOf(budget.Meter{}))

// meterOf is the meter of the evaluation ctx belongs to, nil if none.
func meterOf(ctx *hcl.EvalContext) *budget.Meter {
	for ; ctx != nil; ctx = ctx.Parent() {
		if f, ok := ctx.Functions[meterFunc]; ok {
			v, err := f.Call(nil)
			if err != nil || v.IsNull() {
				return nil
			}
			return v.EncapsulatedValue().(*budget.Meter)
		}
	}
	return nil
}

// meterFunction returns the meter meter returns, for meterOf.
func meterFunction(meter func() *budget.Meter) function.Function {
	return function.New(&function.Spec{
		Type: function.StaticReturnType(meterType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			m := meter()
			if m == nil {
				return cty.NullVal(meterType), nil
			}
			return cty.CapsuleVal(meterType, m), nil
		},
	})
}

// funcTable is the language's functions bound to the meter of the one evaluation using it
// and to whether it is a preview: evaluations run concurrently, so each takes a table from
// its loader's pool for its duration instead of building its closures again.
type funcTable struct {
	meter    *budget.Meter
	planning bool // impure functions (timestamp, uuid ...) are unknown
	fns      map[string]function.Function
}

type tablePool struct {
	pool     sync.Pool
	files    sentFiles
	planTime time.Time // plantimestamp()
}

func (p *tablePool) get(m *budget.Meter, planning bool) *funcTable {
	t, _ := p.pool.Get().(*funcTable)
	if t == nil {
		t = &funcTable{}
		meter := func() *budget.Meter { return t.meter }
		t.fns = wrapFunctions(buildFunctions(tableEnv{files: p.files,
			self:     func() map[string]function.Function { return t.fns },
			planning: func() bool { return t.planning }, planTime: p.planTime, meter: meter}), meter)
		t.fns[meterFunc] = meterFunction(meter)
	}
	t.meter, t.planning = m, planning
	return t
}

func (p *tablePool) put(t *funcTable) {
	if t != nil {
		t.meter = nil
		p.pool.Put(t)
	}
}

// staticContext is the context of values that may reference nothing and call no function
// (variable defaults, lifecycle flags, variables files), metered by m. A user's call there
// reads "Function calls not allowed", as with no context.
func staticContext(m *budget.Meter) *hcl.EvalContext {
	return &hcl.EvalContext{Functions: map[string]function.Function{
		meterFunc: meterFunction(func() *budget.Meter { return m }), staticFunc: function.New(&function.Spec{}),
	}}
}

// userDiag makes an HCL diagnostic fit for users: a budget's error as its own diagnostic, no
// word of the rewritten calls.
func userDiag(d *hcl.Diagnostic) *hcl.Diagnostic {
	if pd := providerFuncDiag(d); pd != nil {
		return pd
	}
	if fe, ok := hcl.DiagnosticExtra[hclsyntax.FunctionCallDiagExtra](d); ok {
		var ex *budget.Exceeded
		if err := fe.FunctionCallError(); errors.As(err, &ex) {
			rng := d.Subject
			if rng == nil {
				rng = &hcl.Range{}
			}
			return exceededDiag(ex, *rng)
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
	if d.Summary == "Call to unknown function" && strings.Contains(d.Detail, reservedPrefix) {
		c := *d // no suggestion of a reserved name
		c.Detail, _, _ = strings.Cut(c.Detail, " Did you mean")
		return &c
	}
	return d
}

// unquoteJSON decodes one JSON string literal.
func unquoteJSON(lit []byte) (string, error) {
	var s string
	err := json.Unmarshal(lit, &s)
	return s, err
}
