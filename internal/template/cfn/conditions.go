package cfn

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

// conditions records the declared conditions and decides each once. A condition may use
// parameters, pseudo parameters, mappings and other conditions, never resources.
func (p *parser) conditions(sec *node) {
	if sec == nil {
		return
	}
	if sec.kind != kMap {
		p.errf(sec, "Conditions must be a map")
		return
	}
	for i, k := range sec.keys {
		p.b.condNodes[k] = sec.vals[i]
	}
	ev := p.b.evaluator(p.bud, nil)
	for i, k := range sec.keys {
		p.b.decide(ev, sec.vals[i], k)
	}
	p.diags = p.diags.Append(ev.diags)
}

// decide returns the value of the named condition, evaluating it the first time. A condition
// that failed is unknown afterwards, so its problems are reported once.
func (b *binding) decide(ev *evaluator, at *node, name string) cty.Value {
	if v, ok := b.conds[name]; ok {
		return v
	}
	cn, ok := b.condNodes[name]
	if !ok {
		return ev.errf(at, "condition %s is not declared in Conditions", name)
	}
	if b.deciding[name] {
		return ev.errf(at, "condition %s depends on itself", name)
	}
	b.deciding[name] = true
	// A condition is decided with the budget of the evaluation that first needs it, one level
	// deeper: a chain of conditions naming each other is nesting too.
	sub := &evaluator{b: b, m: ev.m, depth: ev.depth + 1}
	v := sub.cond(cn)
	ev.diags = ev.diags.Append(sub.diags)
	ev.over = ev.over || sub.over
	delete(b.deciding, name)
	if sub.diags.HasErrors() {
		v = cty.UnknownVal(cty.Bool)
	}
	b.conds[name] = v
	return v
}

// cond evaluates n where a condition is expected: to true, false or unknown.
func (ev *evaluator) cond(n *node) cty.Value {
	if n.kind == kMap && len(n.keys) == 1 && n.keys[0] == "Condition" { // {"Condition": name}
		return ev.condition(&node{kind: kFunc, fn: "Condition", arg: n.vals[0], rng: n.rng, place: n.place})
	}
	v := ev.eval(n)
	raw, _ := v.Unmark()
	switch {
	case !raw.IsKnown():
		return cty.UnknownVal(cty.Bool)
	case !raw.IsNull() && raw.Type() == cty.Bool:
		return raw
	case !raw.IsNull() && raw.Type() == cty.String && (raw.AsString() == "true" || raw.AsString() == "false"):
		return cty.BoolVal(raw.AsString() == "true")
	}
	ev.errf(n, "value must be a condition (true or false)")
	return cty.UnknownVal(cty.Bool)
}

func (ev *evaluator) condition(n *node) cty.Value {
	name, ok := ev.name(n.arg, "the argument of Condition")
	if !ok {
		return cty.DynamicVal
	}
	return ev.b.decide(ev, n.arg, name)
}

func (ev *evaluator) ifFn(n *node) cty.Value {
	a := ev.args(n, 3, 3, "[Condition, ValueIfTrue, ValueIfFalse]")
	if a == nil {
		return cty.DynamicVal
	}
	name, ok := ev.name(a[0], "the condition of Fn::If")
	if !ok {
		return cty.DynamicVal
	}
	c := ev.b.decide(ev, a[0], name)
	switch {
	case !c.IsKnown(): // validation without parameter values: check both branches
		ev.eval(a[1])
		ev.eval(a[2])
		return cty.DynamicVal
	case c.True():
		return ev.eval(a[1])
	default:
		return ev.eval(a[2])
	}
}

// equals compares two values as CloudFormation does: scalars as text, so 1 equals "1".
func (ev *evaluator) equals(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Value1, Value2]")
	if a == nil {
		return cty.DynamicVal
	}
	x, _ := value.Stringify(ev.eval(a[0])).UnmarkDeep()
	y, _ := value.Stringify(ev.eval(a[1])).UnmarkDeep()
	if !x.IsWhollyKnown() || !y.IsWhollyKnown() {
		return cty.UnknownVal(cty.Bool)
	}
	xj, err1 := value.ToJSON(x)
	yj, err2 := value.ToJSON(y)
	return cty.BoolVal(err1 == nil && err2 == nil && string(xj) == string(yj))
}

// logic is Fn::And (and) or Fn::Or (!and) over 2 to 10 conditions; every operand is
// evaluated, so each is checked.
func (ev *evaluator) logic(n *node, and bool) cty.Value {
	a := ev.args(n, 2, 10, "a list of 2 to 10 conditions")
	if a == nil {
		return cty.DynamicVal
	}
	unknown, decided := false, false
	for _, c := range a {
		v := ev.cond(c)
		switch {
		case !v.IsKnown():
			unknown = true
		case v.True() != and:
			decided = true
		}
	}
	switch {
	case decided:
		return cty.BoolVal(!and)
	case unknown:
		return cty.UnknownVal(cty.Bool)
	}
	return cty.BoolVal(and)
}

func (ev *evaluator) and(n *node) cty.Value { return ev.logic(n, true) }
func (ev *evaluator) or(n *node) cty.Value  { return ev.logic(n, false) }

func (ev *evaluator) not(n *node) cty.Value {
	a := ev.args(n, 1, 1, "[Condition]")
	if a == nil {
		return cty.DynamicVal
	}
	v := ev.cond(a[0])
	if !v.IsKnown() {
		return cty.UnknownVal(cty.Bool)
	}
	return v.Not()
}
