package pulumiyaml

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// Evaluation is bounded by the request's budget (internal/budget), as the other dialects'
// is: a program cannot loop, but variables that name each other share values, so a chain of
// them doubles a value at each link, and fn::toJSON, fn::join, interpolation or the engine
// storing a property would spell it out in full. Each expression evaluation has one meter:
// what a built-in is about to build (a JSON text, a joined or interpolated string, the parts
// of a split, a file's text) is charged before it is built, and the value an expression
// hands the engine is charged once more on a meter of its own. Exceeding a limit, or the
// request's time, is an error at the expression's file:line:col and path.

// newEvaluator is an evaluator of prog against s, metered by bud, or when bud is nil by the
// budget of s's context.
func newEvaluator(prog *program, s template.Scope, bud *budget.Budget) *evaluator {
	if bud == nil && s != nil {
		bud = budget.From(s.Context())
	}
	if bud == nil {
		bud = budget.From(nil)
	}
	return &evaluator{prog: prog, scope: s, vars: map[string]cty.Value{}, m: bud.Meter()}
}

// over turns a budget error into a diagnostic at at, naming what reached the limit.
func over(err error, at where, what string) diag.Diagnostic {
	return diag.Errorf(at.rng, at.path, "%s", budget.Named(err, what))
}

// precheck charges a built-in's argument, spelled out, before anything walks it (unmarking,
// JSON, joining), and what c is about to build from it beyond that: join's delimiters, the
// parts of a split.
func (c call) precheck(ev *evaluator, arg cty.Value) *diag.Diagnostic {
	err := budget.Charge(ev.m, arg, c.name)
	if err == nil {
		switch c.name {
		case "fn::join":
			if pair, ok := knownPair(arg); ok && pair[0].Type() == cty.String && isList(pair[1]) && pair[1].LengthInt() > 1 {
				err = ev.m.Bytes(int64(len(pair[0].AsString()))*int64(pair[1].LengthInt()-1), c.name)
			}
		case "fn::split":
			if pair, ok := knownPair(arg); ok && pair[0].Type() == cty.String && pair[1].Type() == cty.String {
				err = ev.m.Elements(int64(strings.Count(pair[1].AsString(), pair[0].AsString())+1), c.name)
			}
		}
	}
	if err != nil {
		d := over(err, c.where, c.name)
		return &d
	}
	return nil
}

// knownPair is a two-element list argument with both elements known and not null, unmarked
// one level deep (nothing walks them whole).
func knownPair(arg cty.Value) ([2]cty.Value, bool) {
	arg, _ = arg.Unmark()
	pair, ok := twoArgs(arg)
	if !ok {
		return pair, false
	}
	for i := range pair {
		pair[i], _ = pair[i].Unmark()
		if !pair[i].IsKnown() || pair[i].IsNull() {
			return pair, false
		}
	}
	return pair, true
}

// charge charges the value a built-in built (its bytes and elements, at any depth).
func (c call) charge(ev *evaluator, v cty.Value) *diag.Diagnostic {
	switch c.name {
	case "fn::secret", "fn::unsecret", "fn::select", "fn::tojson", "fn::join", "fn::split":
		return nil // nothing new, or charged before it was built (precheck)
	}
	if err := budget.Charge(ev.m, v, c.name); err != nil {
		d := over(err, c.where, c.name)
		return &d
	}
	return nil
}

// fileFits refuses a project file whose text would pass the bytes limit before a built-in
// copies it.
func fileFits(ev *evaluator, c call, text string) *diag.Diagnostic {
	if err := ev.m.Would(0, int64(len(text)), c.name); err != nil {
		d := over(err, c.where, c.name)
		return &d
	}
	return nil
}

// chargeResult charges the value an expression hands the engine, on a meter of its own: the
// engine stores and sends it whole, shared parts spelled out.
func chargeResult(s template.Scope, v cty.Value, at where) diag.Diagnostics {
	m := newEvaluator(nil, s, nil).m
	if err := m.Budget().Err(); err != nil {
		return diag.Diagnostics{over(err, at, "the evaluation")}
	}
	if err := budget.Charge(m, v, "the value"); err != nil {
		return diag.Diagnostics{over(err, at, "the value")}
	}
	return nil
}

// chargePart charges a part of an interpolated string before it is spelled out: a string's
// bytes, or what a list or object written as JSON holds.
func chargePart(m *budget.Meter, v cty.Value) error {
	u, _ := v.Unmark()
	if !u.IsKnown() || u.IsNull() {
		return nil
	}
	if u.Type() == cty.String {
		return m.Bytes(int64(len(u.AsString())), "the interpolation")
	}
	return budget.Charge(m, v, "the interpolation")
}
