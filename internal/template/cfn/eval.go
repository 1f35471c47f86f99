package cfn

import (
	"strings"

	"github.com/zclconf/go-cty/cty"

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
}

func newBinding(d template.Dialect, o Options, mappings *node) *binding {
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
		props: map[string]*node{}, dependsOn: map[string][]*node{}}
}

// isNoValue reports whether name is the pseudo parameter that removes a value.
func isNoValue(name string) bool { return name == "AWS::NoValue" || name == "ALIYUN::NoValue" }

// evaluator evaluates one expression. scope is nil while deciding conditions, which may not
// refer to resources.
type evaluator struct {
	b     *binding
	scope template.Scope
	diags diag.Diagnostics
}

func (ev *evaluator) errf(n *node, format string, args ...any) cty.Value {
	ev.diags = ev.diags.Append(diag.Errorf(n.rng, n.path, format, args...))
	return cty.DynamicVal
}

// expr is a template.Expr over a template value.
type expr struct {
	n *node
	b *binding
}

var _ template.Expr = expr{}

// Eval evaluates the expression in s; a value that is AWS::NoValue as a whole is null.
func (e expr) Eval(s template.Scope) (cty.Value, diag.Diagnostics) {
	ev := &evaluator{b: e.b, scope: s}
	v := ev.eval(e.n)
	if v.HasMark(noValue{}) {
		v = cty.NullVal(cty.DynamicPseudoType)
	}
	if ev.diags.HasErrors() {
		return cty.DynamicVal, ev.diags
	}
	return v, ev.diags
}

func (ev *evaluator) eval(n *node) cty.Value {
	switch n.kind {
	case kScalar:
		return n.lit
	case kList:
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
	return f.eval(ev, n)
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

// concat joins string values; the result is unknown if any part is, and carries every
// part's marks.
func concat(parts []cty.Value) cty.Value {
	var b strings.Builder
	var marks []cty.ValueMarks
	unknown := false
	for _, p := range parts {
		raw, m := p.Unmark()
		marks = append(marks, m)
		switch {
		case !raw.IsKnown():
			unknown = true
		case raw.IsNull():
		default:
			b.WriteString(value.Stringify(raw).AsString())
		}
	}
	if unknown {
		return cty.UnknownVal(cty.String).WithMarks(marks...)
	}
	return cty.StringVal(b.String()).WithMarks(marks...)
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
