package cfn

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
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
// values, pseudo parameters, mappings and conditions.
type binding struct {
	params    map[string]cty.Value
	pseudo    map[string]cty.Value
	mappings  *node
	condNodes map[string]*node
	conds     map[string]cty.Value // decided conditions: bool, or unknown in validation
	deciding  map[string]bool      // conditions being decided, to catch cycles
	resources map[string]bool      // resources in the stack
	excluded  map[string]string    // resources left out -> the false condition
}

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

// expr is a template.Expr over an AST node.
type expr struct {
	n *node
	b *binding
}

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
	fn, ok := functions[n.fn]
	if !ok {
		return ev.errf(n, "unknown function %s", n.fn)
	}
	return fn(ev, n)
}

var functions map[string]func(*evaluator, *node) cty.Value

func init() {
	functions = map[string]func(*evaluator, *node) cty.Value{
		"Ref": (*evaluator).ref, "Condition": (*evaluator).condition,
		"Fn::GetAtt": (*evaluator).getAtt, "Fn::Sub": (*evaluator).sub, "Fn::Join": (*evaluator).join,
		"Fn::Select": (*evaluator).selectFn, "Fn::Split": (*evaluator).split, "Fn::If": (*evaluator).ifFn,
		"Fn::Equals": (*evaluator).equals, "Fn::And": (*evaluator).and, "Fn::Or": (*evaluator).or,
		"Fn::Not": (*evaluator).not, "Fn::FindInMap": (*evaluator).findInMap, "Fn::Base64": (*evaluator).base64,
		"Fn::Base64Encode": (*evaluator).base64, "Fn::Base64Decode": (*evaluator).base64Decode,
		"Fn::Str": (*evaluator).str, "Fn::Replace": (*evaluator).replace, "Fn::GetAZs": (*evaluator).getAZs,
		"Fn::Length": (*evaluator).length,
	}
}

// Supported lists the intrinsic functions this package evaluates.
func Supported() []string {
	var out []string
	for k := range functions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// args returns the elements of a list argument of n, which must have count elements (or
// between min and max when count is negative: -min, max given as bounds).
func (ev *evaluator) args(n *node, min, max int, form string) []*node {
	a := n.arg
	if a.kind != kList || len(a.vals) < min || len(a.vals) > max {
		ev.errf(a, "%s takes %s", n.fn, form)
		return nil
	}
	return a.vals
}

// name returns a string literal argument (a name, not an expression).
func (ev *evaluator) name(n *node, what string) (string, bool) {
	s, ok := n.str()
	if !ok || n.lit.Type() != cty.String {
		ev.errf(n, "%s must be a literal string", what)
		return "", false
	}
	return s, true
}

// text evaluates n to a string (numbers and booleans are converted); unknown stays unknown.
func (ev *evaluator) text(n *node) (cty.Value, bool) {
	v := ev.eval(n)
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
	ev.errf(n, "value must be a string, not %s", raw.Type().FriendlyName())
	return cty.DynamicVal, false
}

func (ev *evaluator) ref(n *node) cty.Value {
	name, ok := ev.name(n.arg, "Ref")
	if !ok {
		return cty.DynamicVal
	}
	if v, ok := ev.b.params[name]; ok {
		return v
	}
	if name == "AWS::NoValue" || name == "ALIYUN::NoValue" {
		return none
	}
	if v, ok := ev.b.pseudo[name]; ok {
		return v
	}
	rv, ok := ev.resource(n, name)
	if !ok {
		return cty.DynamicVal
	}
	return rv.ID
}

// resource looks a resource up for Ref, GetAtt or Sub.
func (ev *evaluator) resource(n *node, name string) (template.ResourceValue, bool) {
	if cond, ok := ev.b.excluded[name]; ok {
		ev.errf(n, "resource %s is not created (its condition %s is false), so it cannot be referenced here", name, cond)
		return template.ResourceValue{}, false
	}
	if !ev.b.resources[name] {
		ev.errf(n, "%s is not a parameter, pseudo parameter or resource of this template", name)
		return template.ResourceValue{}, false
	}
	if ev.scope == nil {
		ev.errf(n, "conditions cannot refer to resources (%s)", name)
		return template.ResourceValue{}, false
	}
	rv, ok := ev.scope.Resource(name)
	if !ok {
		return template.UnknownResource, true
	}
	return rv, true
}

func (ev *evaluator) getAtt(n *node) cty.Value {
	var res, attr string
	if s, ok := n.arg.str(); ok && n.arg.kind == kScalar {
		var found bool
		if res, attr, found = strings.Cut(s, "."); !found {
			return ev.errf(n.arg, "Fn::GetAtt takes \"Resource.Attribute\" or [Resource, Attribute]")
		}
	} else {
		a := ev.args(n, 2, 2, "[Resource, Attribute]")
		if a == nil {
			return cty.DynamicVal
		}
		var ok1, ok2 bool
		res, ok1 = ev.name(a[0], "the resource of Fn::GetAtt")
		attr, ok2 = ev.name(a[1], "the attribute of Fn::GetAtt")
		if !ok1 || !ok2 {
			return cty.DynamicVal
		}
	}
	return ev.attribute(n, res, attr)
}

func (ev *evaluator) attribute(n *node, res, attr string) cty.Value {
	rv, ok := ev.resource(n, res)
	if !ok {
		return cty.DynamicVal
	}
	outs := rv.Outputs
	if !outs.IsWhollyKnown() && !outs.IsKnown() {
		return cty.DynamicVal
	}
	if v, ok := value.Get(outs, attr); ok {
		return v
	}
	// ROS reads nested attributes as "Outputs.Key".
	cur, parts := outs, strings.Split(attr, ".")
	for _, p := range parts {
		next, ok := value.Get(cur, p)
		if !ok {
			return ev.errf(n, "resource %s has no attribute %q; it has: %s", res, attr, strings.Join(value.Keys(outs), ", "))
		}
		cur = next
	}
	return cur
}

func (ev *evaluator) sub(n *node) cty.Value {
	format, vars := n.arg, map[string]*node{}
	if n.arg.kind == kList {
		a := ev.args(n, 2, 2, "a string, or [String, {Var: Value}]")
		if a == nil {
			return cty.DynamicVal
		}
		format = a[0]
		if a[1].kind != kMap {
			return ev.errf(a[1], "the variables of Fn::Sub must be a map")
		}
		for i, k := range a[1].keys {
			vars[k] = a[1].vals[i]
		}
	}
	s, ok := format.str()
	if !ok || format.kind != kScalar {
		return ev.errf(format, "Fn::Sub needs a literal string")
	}
	var parts []cty.Value
	for s != "" {
		i := strings.Index(s, "${")
		if i < 0 {
			parts = append(parts, cty.StringVal(s))
			break
		}
		parts = append(parts, cty.StringVal(s[:i]))
		j := strings.Index(s[i:], "}")
		if j < 0 {
			return ev.errf(format, "unterminated ${ in Fn::Sub")
		}
		name := s[i+2 : i+j]
		s = s[i+j+1:]
		if strings.HasPrefix(name, "!") {
			parts = append(parts, cty.StringVal("${"+name[1:]+"}"))
			continue
		}
		parts = append(parts, ev.subVar(format, strings.TrimSpace(name), vars))
	}
	return concat(parts)
}

func (ev *evaluator) subVar(n *node, name string, vars map[string]*node) cty.Value {
	if vn, ok := vars[name]; ok {
		v, _ := ev.text(vn)
		return v
	}
	if v, ok := ev.b.params[name]; ok {
		if raw, _ := v.Unmark(); raw.IsKnown() && !raw.IsNull() && (raw.Type().IsTupleType() || raw.Type().IsListType()) {
			return ev.errf(n, "${%s} is a list; use Fn::Join to put it in a string", name)
		}
		return value.Stringify(v)
	}
	if v, ok := ev.b.pseudo[name]; ok {
		return v
	}
	if res, attr, ok := strings.Cut(name, "."); ok {
		v := ev.attribute(n, res, attr)
		if raw, _ := v.Unmark(); !raw.IsKnown() {
			return cty.UnknownVal(cty.String)
		}
		return value.Stringify(v)
	}
	rv, ok := ev.resource(n, name)
	if !ok {
		return cty.DynamicVal
	}
	return rv.ID
}

// concat joins string values, unknown if any is, keeping marks.
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
		case !raw.IsNull() && raw.Type() == cty.String:
			b.WriteString(raw.AsString())
		case !raw.IsNull():
			b.WriteString(fmt.Sprint(value.Masked(value.Stringify(raw), "")))
		}
	}
	if unknown {
		return cty.UnknownVal(cty.String).WithMarks(marks...)
	}
	return cty.StringVal(b.String()).WithMarks(marks...)
}

// list evaluates n to a list of values; ok is false when it is not a list, unknown when not
// known yet.
func (ev *evaluator) list(n *node) (elems []cty.Value, marks cty.ValueMarks, known, ok bool) {
	v := ev.eval(n)
	raw, marks := v.Unmark()
	if !raw.IsKnown() {
		return nil, marks, false, true
	}
	if raw.IsNull() || !(raw.Type().IsTupleType() || raw.Type().IsListType()) {
		ev.errf(n, "value must be a list")
		return nil, marks, false, false
	}
	for it := raw.ElementIterator(); it.Next(); {
		_, e := it.Element()
		elems = append(elems, e)
	}
	return elems, marks, true, true
}

func (ev *evaluator) join(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Delimiter, [Values]]")
	if a == nil {
		return cty.DynamicVal
	}
	delim, ok := ev.name(a[0], "the delimiter of Fn::Join")
	if !ok {
		return cty.DynamicVal
	}
	elems, marks, known, ok := ev.list(a[1])
	if !ok {
		return cty.DynamicVal
	}
	if !known {
		return cty.UnknownVal(cty.String).WithMarks(marks)
	}
	var parts []cty.Value
	for i, e := range elems {
		if i > 0 {
			parts = append(parts, cty.StringVal(delim))
		}
		parts = append(parts, e)
	}
	return concat(parts).WithMarks(marks)
}

func (ev *evaluator) selectFn(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Index, [Values]]")
	if a == nil {
		return cty.DynamicVal
	}
	iv, _ := ev.text(a[0])
	elems, marks, known, ok := ev.list(a[1])
	if !ok || !known || !iv.IsKnown() {
		return cty.DynamicVal.WithMarks(marks)
	}
	idx, err := strconv.Atoi(iv.AsString())
	if err != nil || idx < 0 || idx >= len(elems) {
		return ev.errf(a[0], "index %s is out of range: the list has %d elements", iv.AsString(), len(elems))
	}
	return elems[idx].WithMarks(marks)
}

func (ev *evaluator) split(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Delimiter, String]")
	if a == nil {
		return cty.DynamicVal
	}
	delim, ok := ev.name(a[0], "the delimiter of Fn::Split")
	if !ok {
		return cty.DynamicVal
	}
	s, ok := ev.text(a[1])
	raw, marks := s.Unmark()
	if !ok || !raw.IsKnown() {
		return cty.DynamicVal.WithMarks(marks)
	}
	var elems []cty.Value
	for _, p := range strings.Split(raw.AsString(), delim) {
		elems = append(elems, cty.StringVal(p))
	}
	return cty.TupleVal(elems).WithMarks(marks)
}

// cond evaluates a condition argument to a boolean (or unknown).
func (ev *evaluator) cond(n *node) cty.Value {
	v := ev.eval(n)
	raw, _ := v.Unmark()
	if !raw.IsKnown() {
		return cty.UnknownVal(cty.Bool)
	}
	if raw.IsNull() || raw.Type() != cty.Bool {
		if s, ok := n.str(); ok && n.kind == kScalar && (s == "true" || s == "false") {
			return cty.BoolVal(s == "true")
		}
		return ev.errf(n, "value must be a condition (true or false)")
	}
	return raw
}

func (ev *evaluator) condition(n *node) cty.Value {
	name, ok := ev.name(n.arg, "Condition")
	if !ok {
		return cty.DynamicVal
	}
	return ev.b.decide(ev, n, name)
}

// decide evaluates the named condition once.
func (b *binding) decide(ev *evaluator, at *node, name string) cty.Value {
	if v, ok := b.conds[name]; ok {
		return v
	}
	cn, ok := b.condNodes[name]
	if !ok {
		return ev.errf(at, "condition %s is not declared in Conditions", name)
	}
	if b.deciding[name] {
		return ev.errf(at, "condition %s refers to itself", name)
	}
	b.deciding[name] = true
	sub := &evaluator{b: b}
	v := sub.cond(cn)
	ev.diags = ev.diags.Append(sub.diags)
	delete(b.deciding, name)
	if !sub.diags.HasErrors() {
		b.conds[name] = v
	}
	return v
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

func (ev *evaluator) equals(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Value1, Value2]")
	if a == nil {
		return cty.DynamicVal
	}
	x, y := ev.eval(a[0]), ev.eval(a[1])
	x, _ = value.Stringify(x).Unmark()
	y, _ = value.Stringify(y).Unmark()
	if !x.IsWhollyKnown() || !y.IsWhollyKnown() {
		return cty.UnknownVal(cty.Bool)
	}
	xj, _ := value.ToJSON(x)
	yj, _ := value.ToJSON(y)
	return cty.BoolVal(string(xj) == string(yj))
}

func (ev *evaluator) logic(n *node, and bool) cty.Value {
	a := ev.args(n, 2, 10, "a list of 2 to 10 conditions")
	if a == nil {
		return cty.DynamicVal
	}
	unknown := false
	for _, c := range a {
		v := ev.cond(c)
		switch {
		case !v.IsKnown() || v.Type() != cty.Bool:
			unknown = true
		case v.True() != and:
			return cty.BoolVal(!and)
		}
	}
	if unknown {
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
	if !v.IsKnown() || v.Type() != cty.Bool {
		return cty.UnknownVal(cty.Bool)
	}
	return v.Not()
}

func (ev *evaluator) findInMap(n *node) cty.Value {
	a := ev.args(n, 3, 3, "[MapName, TopLevelKey, SecondLevelKey]")
	if a == nil {
		return cty.DynamicVal
	}
	var keys [3]string
	for i, k := range a {
		v, ok := ev.text(k)
		if !ok {
			return cty.DynamicVal
		}
		if !v.IsKnown() {
			return cty.DynamicVal
		}
		raw, _ := v.Unmark()
		keys[i] = raw.AsString()
	}
	m := ev.b.mappings.get(keys[0])
	if m == nil {
		return ev.errf(a[0], "mapping %s is not declared in Mappings", keys[0])
	}
	top := m.get(keys[1])
	if top == nil {
		return ev.errf(a[1], "mapping %s has no key %s", keys[0], keys[1])
	}
	v := top.get(keys[2])
	if v == nil {
		return ev.errf(a[2], "mapping %s.%s has no key %s", keys[0], keys[1], keys[2])
	}
	return ev.eval(v)
}

func (ev *evaluator) base64(n *node) cty.Value {
	return ev.mapText(n, func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil })
}

func (ev *evaluator) base64Decode(n *node) cty.Value {
	return ev.mapText(n, func(s string) (string, error) {
		b, err := base64.StdEncoding.DecodeString(s)
		return string(b), err
	})
}

func (ev *evaluator) str(n *node) cty.Value {
	return ev.mapText(n, func(s string) (string, error) { return s, nil })
}

// mapText applies f to the string value of n's argument.
func (ev *evaluator) mapText(n *node, f func(string) (string, error)) cty.Value {
	v, ok := ev.text(n.arg)
	raw, marks := v.Unmark()
	if !ok || !raw.IsKnown() {
		return cty.UnknownVal(cty.String).WithMarks(marks)
	}
	out, err := f(raw.AsString())
	if err != nil {
		return ev.errf(n.arg, "%s: %s", n.fn, err)
	}
	return cty.StringVal(out).WithMarks(marks)
}

func (ev *evaluator) replace(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[{Old: New}, String]")
	if a == nil {
		return cty.DynamicVal
	}
	if a[0].kind != kMap {
		return ev.errf(a[0], "the replacements of Fn::Replace must be a map")
	}
	var pairs []string
	var marks []cty.ValueMarks
	for i, k := range a[0].keys {
		v, ok := ev.text(a[0].vals[i])
		raw, m := v.Unmark()
		if !ok || !raw.IsKnown() {
			return cty.UnknownVal(cty.String)
		}
		marks = append(marks, m)
		pairs = append(pairs, k, raw.AsString())
	}
	v, ok := ev.text(a[1])
	raw, m := v.Unmark()
	if !ok || !raw.IsKnown() {
		return cty.UnknownVal(cty.String).WithMarks(m)
	}
	return cty.StringVal(strings.NewReplacer(pairs...).Replace(raw.AsString())).WithMarks(append(marks, m)...)
}

func (ev *evaluator) getAZs(n *node) cty.Value {
	region := ev.b.pseudo["AWS::Region"]
	if s, ok := n.arg.str(); ok && s != "" {
		region = cty.StringVal(s)
	}
	r := region.AsString()
	return cty.TupleVal([]cty.Value{cty.StringVal(r + "a"), cty.StringVal(r + "b"), cty.StringVal(r + "c")})
}

func (ev *evaluator) length(n *node) cty.Value {
	elems, marks, known, ok := ev.list(n.arg)
	if !ok || !known {
		return cty.UnknownVal(cty.Number).WithMarks(marks)
	}
	return cty.NumberIntVal(int64(len(elems))).WithMarks(marks)
}

// jsonValue decodes a ROS Json parameter.
func jsonValue(s string) (cty.Value, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return cty.NilVal, err
	}
	return value.FromGo(v)
}
