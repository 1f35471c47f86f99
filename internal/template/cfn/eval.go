package cfn

import (
	"context"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// noValue marks the value of Ref AWS::NoValue: the enclosing property or list element is
// dropped.
type noValue struct{}

var none = cty.NullVal(cty.DynamicPseudoType).Mark(noValue{})

// binding is what a template's expressions are evaluated with besides resources: parameter
// values, pseudo parameters, mappings and conditions. Parse fills it; afterwards it is only
// read, so expressions may be evaluated concurrently.
type binding struct {
	dialect   template.Dialect
	params    map[string]cty.Value
	pseudo    map[string]cty.Value
	mappings  *node
	condNodes map[string]*node
	conds     map[string]cty.Value // decided conditions: bool, or unknown in validation or after an error
	deciding  map[string]bool      // conditions being decided, to catch cycles
	declared  map[string]bool      // every resource of the template
	resources map[string]bool      // resources in the stack (condition not false)
	excluded  map[string]string    // resources left out -> the false condition
	props     map[string]*node     // resources in the stack -> their Properties
	dependsOn map[string][]*node   // resources in the stack -> their explicit DependsOn
	outputs   []*node              // output values in the stack
	// bud bounds evaluations after Parse whose scope has no context: the limits of Parse's
	// request, without its deadline or cancellation.
	bud *budget.Budget
}

func newBinding(d template.Dialect, o Options, mappings *node, lim budget.Limits) *binding {
	partition := "aws"
	if strings.HasPrefix(o.Region, "cn-") {
		partition = "aws-cn"
	}
	pseudo := map[string]cty.Value{
		"AWS::StackName": cty.StringVal(o.StackName), "AWS::StackId": cty.StringVal(o.StackID),
		"AWS::Region": cty.StringVal(o.Region), "AWS::AccountId": cty.StringVal(o.AccountID),
		"AWS::Partition": cty.StringVal(partition), "AWS::URLSuffix": cty.StringVal("amazonaws.com"),
		"AWS::NotificationARNs": cty.EmptyTupleVal,
		"ALIYUN::StackName":     cty.StringVal(o.StackName), "ALIYUN::StackId": cty.StringVal(o.StackID),
		"ALIYUN::Region": cty.StringVal(o.Region), "ALIYUN::AccountId": cty.StringVal(o.AccountID),
		"ALIYUN::TenantId": cty.StringVal(o.AccountID),
	}
	if strings.HasPrefix(o.Region, "cn-") {
		pseudo["AWS::URLSuffix"] = cty.StringVal("amazonaws.com.cn")
	}
	return &binding{dialect: d, params: map[string]cty.Value{}, pseudo: pseudo, mappings: mappings,
		condNodes: map[string]*node{}, conds: map[string]cty.Value{}, deciding: map[string]bool{},
		declared: map[string]bool{}, resources: map[string]bool{}, excluded: map[string]string{},
		props: map[string]*node{}, dependsOn: map[string][]*node{},
		bud: budget.From(budget.WithLimits(context.Background(), lim))}
}

// isNoValue reports whether name is the pseudo parameter that removes a value.
func isNoValue(name string) bool { return name == "AWS::NoValue" || name == "ALIYUN::NoValue" }

// evaluator evaluates one expression. scope is nil while deciding conditions, which may not
// refer to resources. m meters what the expression builds and depth is how deep eval has
// recursed: past a limit, the evaluation reports it once and stops.
type evaluator struct {
	b     *binding
	scope template.Scope
	diags diag.Diagnostics
	m     *budget.Meter
	depth int
	over  bool  // a limit was exceeded: the rest of the evaluation is skipped
	call  *node // the innermost function call being evaluated
}

// evaluator returns an evaluator of one expression under bud, with a fresh meter.
func (b *binding) evaluator(bud *budget.Budget, s template.Scope) *evaluator {
	return &evaluator{b: b, scope: s, m: bud.Meter()}
}

func (ev *evaluator) errf(n *node, format string, args ...any) cty.Value {
	ev.diags = ev.diags.Append(diag.Errorf(n.rng, n.path(), format, args...))
	return cty.DynamicVal
}

// exceeded reports, once, that the evaluation at n passed a limit of its budget (err), and
// stops the evaluation.
func (ev *evaluator) exceeded(n *node, err error) cty.Value {
	if !ev.over {
		ev.over = true
		ev.errf(n, "%s", budget.Named(err, "the template's nesting"))
	}
	return cty.DynamicVal
}

// charge charges what n built to the meter: elements of a collection and bytes of a string.
// Past a limit, it blames the innermost function call (the Fn::FindInMap that copies a
// mapping, the Fn::Join that repeats a text), or n outside any.
func (ev *evaluator) charge(n *node, elements, bytes int64) bool {
	at := n
	if ev.call != nil {
		at = ev.call
	}
	err := ev.m.Would(elements, bytes, at.fnName())
	if err == nil && elements > 0 {
		err = ev.m.Elements(elements, at.fnName())
	}
	if err == nil && bytes > 0 {
		err = ev.m.Bytes(bytes, at.fnName())
	}
	if err != nil {
		ev.exceeded(at, err)
		return false
	}
	return true
}

// fnName names what n builds in a budget's message.
func (n *node) fnName() string {
	if n.kind == kFunc {
		return n.fn
	}
	return "the template's value"
}

// expr is a template.Expr over a template value.
type expr struct {
	n *node
	b *binding
}

var _ template.Expr = expr{}

// Eval evaluates the expression in s, under the budget of s's context (the limits Parse
// had when s has none); a value that is AWS::NoValue as a whole is null.
func (e expr) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	bud := e.b.bud
	if s != nil {
		if ctx := s.Context(); ctx != nil {
			bud = budget.From(ctx)
		}
	}
	v, diags, _ := e.evalWith(bud.Meter(), s)
	return v, diags
}

// evalWith evaluates the expression in s, charging what it builds to m; over says it passed
// a limit.
func (e expr) evalWith(m *budget.Meter, s template.Scope) (v cty.Value, diags diag.Diagnostics, over bool) {
	ev := &evaluator{b: e.b, scope: s, m: m}
	v = ev.eval(e.n)
	if v.HasMark(noValue{}) {
		v = cty.NullVal(cty.DynamicPseudoType)
	}
	if ev.diags.HasErrors() {
		return cty.DynamicVal, ev.diags, ev.over
	}
	return v, ev.diags, ev.over
}

// eval evaluates n. It checks the depth before going one level deeper and charges every
// list and map it builds, so neither a deep template nor one that copies a large mapping many
// times can make it exhaust the stack or the memory.
func (ev *evaluator) eval(n *node) cty.Value {
	if ev.over {
		return cty.DynamicVal
	}
	if err := ev.m.Budget().Depth(ev.depth + 1); err != nil {
		return ev.exceeded(n, err)
	}
	ev.depth++
	v := ev.eval1(n)
	ev.depth--
	return v
}

func (ev *evaluator) eval1(n *node) cty.Value {
	switch n.kind {
	case kScalar:
		return n.lit
	case kList:
		if !ev.charge(n, int64(len(n.vals)), 0) {
			return cty.DynamicVal
		}
		var elems []cty.Value
		for _, c := range n.vals {
			if v := ev.eval(c); !v.HasMark(noValue{}) {
				elems = append(elems, v)
			}
		}
		if len(elems) == 0 {
			return cty.EmptyTupleVal
		}
		return cty.TupleVal(elems)
	case kMap:
		if !ev.charge(n, int64(len(n.keys)), 0) {
			return cty.DynamicVal
		}
		attrs := map[string]cty.Value{}
		for i, k := range n.keys {
			if v := ev.eval(n.vals[i]); !v.HasMark(noValue{}) {
				attrs[k] = v
			}
		}
		return cty.ObjectVal(attrs)
	}
	f, ok := functions[n.fn]
	switch {
	case !ok:
		return ev.errf(n, "unknown function %s", n.fn)
	case f.dialect != "" && f.dialect != ev.b.dialect:
		return ev.errf(n, "%s is a ROS function; it is not available in CloudFormation templates", n.fn)
	}
	outer := ev.call
	ev.call = n
	v := f.eval(ev, n)
	ev.call = outer
	return v
}

// args returns the elements of n's argument, which must be a list of min to max elements.
func (ev *evaluator) args(n *node, min, max int, form string) []*node {
	a := n.arg
	if a.kind != kList || len(a.vals) < min || len(a.vals) > max {
		ev.errf(a, "%s takes %s", n.fn, form)
		return nil
	}
	return a.vals
}

// name returns a literal string argument (a name, not an expression).
func (ev *evaluator) name(n *node, what string) (string, bool) {
	if !n.isString() {
		ev.errf(n, "%s must be a literal string", what)
		return "", false
	}
	s, _ := n.str()
	return s, true
}

// text evaluates n to a string (numbers and booleans are converted); unknown stays unknown.
func (ev *evaluator) text(n *node) (cty.Value, bool) {
	return ev.asText(n, ev.eval(n))
}

func (ev *evaluator) asText(n *node, v cty.Value) (cty.Value, bool) {
	raw, marks := v.Unmark()
	switch {
	case !raw.IsKnown():
		return cty.UnknownVal(cty.String).WithMarks(marks), true
	case raw.IsNull():
		ev.errf(n, "value must be a string, not null")
		return cty.DynamicVal, false
	case raw.Type() == cty.String:
		return v, true
	case raw.Type() == cty.Number || raw.Type() == cty.Bool:
		return value.Stringify(v), true
	}
	ev.errf(n, "value must be a string, not %s", typeName(raw))
	return cty.DynamicVal, false
}

// concat joins string values for n; the result is unknown if any part is, and carries every
// part's marks. The joined length is charged before the string is built.
func (ev *evaluator) concat(n *node, parts []cty.Value) cty.Value {
	var marks []cty.ValueMarks
	unknown := false
	texts := make([]string, 0, len(parts))
	var size int64
	for _, p := range parts {
		raw, m := p.Unmark()
		marks = append(marks, m)
		switch {
		case !raw.IsKnown():
			unknown = true
		case raw.IsNull():
		default:
			t := value.Stringify(raw).AsString()
			texts = append(texts, t)
			size += int64(len(t))
		}
	}
	if unknown {
		return cty.UnknownVal(cty.String).WithMarks(marks...)
	}
	if !ev.charge(n, 0, size) {
		return cty.DynamicVal
	}
	return cty.StringVal(strings.Join(texts, "")).WithMarks(marks...)
}

// list evaluates n to its elements; ok is false when it is not a list, known false when it
// is not known yet.
func (ev *evaluator) list(n *node) (elems []cty.Value, marks cty.ValueMarks, known, ok bool) {
	v := ev.eval(n)
	raw, marks := v.Unmark()
	if !raw.IsKnown() {
		return nil, marks, false, true
	}
	if raw.IsNull() || !(raw.Type().IsTupleType() || raw.Type().IsListType()) {
		ev.errf(n, "value must be a list, not %s", typeName(raw))
		return nil, marks, false, false
	}
	for it := raw.ElementIterator(); it.Next(); {
		_, e := it.Element()
		elems = append(elems, e)
	}
	return elems, marks, true, true
}

func typeName(v cty.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case v.Type().IsObjectType() || v.Type().IsMapType():
		return "a map"
	case v.Type().IsTupleType() || v.Type().IsListType():
		return "a list"
	}
	return v.Type().FriendlyName()
}
