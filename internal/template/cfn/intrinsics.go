package cfn

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// function is an intrinsic function; dialect is set for functions of one dialect only.
type function struct {
	eval    func(*evaluator, *node) cty.Value
	dialect template.Dialect
}

var functions map[string]function

func init() { // a map literal referring to methods that evaluate nested calls needs init
	functions = map[string]function{
		"Ref": {eval: (*evaluator).ref}, "Condition": {eval: (*evaluator).condition},
		"Fn::GetAtt": {eval: (*evaluator).getAtt}, "Fn::Sub": {eval: (*evaluator).sub},
		"Fn::Join": {eval: (*evaluator).join}, "Fn::Select": {eval: (*evaluator).selectFn},
		"Fn::Split": {eval: (*evaluator).split}, "Fn::If": {eval: (*evaluator).ifFn},
		"Fn::Equals": {eval: (*evaluator).equals}, "Fn::And": {eval: (*evaluator).and},
		"Fn::Or": {eval: (*evaluator).or}, "Fn::Not": {eval: (*evaluator).not},
		"Fn::FindInMap": {eval: (*evaluator).findInMap}, "Fn::Base64": {eval: (*evaluator).base64},
		"Fn::GetAZs": {eval: (*evaluator).getAZs},
		// ROS only.
		"Fn::Base64Encode": {eval: (*evaluator).base64, dialect: template.ROS},
		"Fn::Base64Decode": {eval: (*evaluator).base64Decode, dialect: template.ROS},
		"Fn::Str":          {eval: (*evaluator).str, dialect: template.ROS},
		"Fn::Replace":      {eval: (*evaluator).replace, dialect: template.ROS},
		"Fn::Length":       {eval: (*evaluator).length, dialect: template.ROS},
	}
}

func (ev *evaluator) ref(n *node) cty.Value {
	name, ok := ev.name(n.arg, "the argument of Ref")
	if !ok {
		return cty.DynamicVal
	}
	if v, ok := ev.b.params[name]; ok {
		return v
	}
	if isNoValue(name) {
		return none
	}
	if v, ok := ev.b.pseudo[name]; ok {
		return v
	}
	rv, ok := ev.resource(n.arg, name)
	if !ok {
		return cty.DynamicVal
	}
	return rv.ID
}

// resource looks a resource up for Ref, GetAtt or Sub.
func (ev *evaluator) resource(at *node, name string) (template.ResourceValue, bool) {
	switch cond, excluded := ev.b.excluded[name]; {
	case !ev.b.declared[name]:
		ev.errf(at, "%s is not a parameter, pseudo parameter or resource of this template", name)
		return template.ResourceValue{}, false
	case ev.scope == nil:
		ev.errf(at, "a condition cannot refer to resource %s", name)
		return template.ResourceValue{}, false
	case excluded:
		ev.errf(at, "resource %s is not created (its condition %s is false), so it cannot be referenced here", name, cond)
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
	if n.arg.kind == kScalar {
		s, _ := n.arg.str()
		var found bool
		if res, attr, found = strings.Cut(s, "."); !found || !n.arg.isString() {
			return ev.errf(n.arg, "Fn::GetAtt takes \"Resource.Attribute\" or [Resource, Attribute]")
		}
	} else {
		a := ev.args(n, 2, 2, "\"Resource.Attribute\" or [Resource, Attribute]")
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
	return ev.attribute(n.arg, res, attr)
}

// attribute reads attribute attr of resource res: a key of its outputs or, as ROS writes
// nested attributes, a dotted path through them.
func (ev *evaluator) attribute(at *node, res, attr string) cty.Value {
	rv, ok := ev.resource(at, res)
	if !ok {
		return cty.DynamicVal
	}
	outs := rv.Outputs
	if !outs.IsKnown() {
		return cty.DynamicVal.WithMarks(outs.Marks())
	}
	if v, ok := value.Get(outs, attr); ok {
		return v
	}
	cur := outs
	for _, part := range strings.Split(attr, ".") {
		if raw, _ := cur.Unmark(); !raw.IsKnown() {
			return cty.DynamicVal.WithMarks(cur.Marks())
		}
		next, ok := value.Get(cur, part)
		if !ok {
			has := strings.Join(value.Keys(outs), ", ")
			if has == "" {
				has = "none"
			}
			return ev.errf(at, "resource %s has no attribute %q; its attributes are: %s", res, attr, has)
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
	s, ok := ev.name(format, "the text of Fn::Sub")
	if !ok {
		return cty.DynamicVal
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
	return ev.concat(n, parts)
}

// subVar is the text of ${name} in Fn::Sub.
func (ev *evaluator) subVar(at *node, name string, vars map[string]*node) cty.Value {
	if vn, ok := vars[name]; ok {
		v, _ := ev.text(vn)
		return v
	}
	if v, ok := ev.b.params[name]; ok {
		if raw, _ := v.Unmark(); raw.IsKnown() && !raw.IsNull() && raw.Type().IsTupleType() {
			return ev.errf(at, "${%s} is a list; join it with Fn::Join to use it in Fn::Sub", name)
		}
		v, _ = ev.asText(at, v)
		return v
	}
	if v, ok := ev.b.pseudo[name]; ok {
		v, _ = ev.asText(at, v)
		return v
	}
	if res, attr, ok := strings.Cut(name, "."); ok {
		v, _ := ev.asText(at, ev.attribute(at, res, attr))
		return v
	}
	if name == "" || isNoValue(name) {
		return ev.errf(at, "${%s} cannot be used in Fn::Sub", name)
	}
	rv, ok := ev.resource(at, name)
	if !ok {
		return cty.DynamicVal
	}
	v, _ := ev.asText(at, rv.ID)
	return v
}

func (ev *evaluator) join(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Delimiter, [Values]]")
	if a == nil {
		return cty.DynamicVal
	}
	delim, ok := ev.name(a[0], "the delimiter of Fn::Join")
	elems, marks, known, ok2 := ev.list(a[1])
	if !ok || !ok2 {
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
		at := a[1]
		if a[1].kind == kList && i < len(a[1].vals) {
			at = a[1].vals[i]
		}
		t, ok := ev.asText(at, e)
		if !ok {
			return cty.DynamicVal
		}
		parts = append(parts, t)
	}
	return ev.concat(n, parts).WithMarks(marks)
}

func (ev *evaluator) selectFn(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Index, [Values]]")
	if a == nil {
		return cty.DynamicVal
	}
	iv, ok := ev.text(a[0])
	elems, marks, known, ok2 := ev.list(a[1])
	if !ok || !ok2 {
		return cty.DynamicVal
	}
	iraw, imarks := iv.Unmark()
	if !known || !iraw.IsKnown() {
		return cty.DynamicVal.WithMarks(marks, imarks)
	}
	idx, err := strconv.Atoi(iraw.AsString())
	if err != nil || idx < 0 {
		return ev.errf(a[0], "the index of Fn::Select must be a whole number from 0")
	}
	if idx >= len(elems) {
		return ev.errf(a[0], "index %d is out of range: the list has %d elements", idx, len(elems))
	}
	return elems[idx].WithMarks(marks, imarks)
}

func (ev *evaluator) split(n *node) cty.Value {
	a := ev.args(n, 2, 2, "[Delimiter, String]")
	if a == nil {
		return cty.DynamicVal
	}
	delim, ok := ev.name(a[0], "the delimiter of Fn::Split")
	s, ok2 := ev.text(a[1])
	raw, marks := s.Unmark()
	if !ok || !ok2 {
		return cty.DynamicVal
	}
	if !raw.IsKnown() {
		return cty.DynamicVal.WithMarks(marks)
	}
	if delim == "" {
		return ev.errf(a[0], "the delimiter of Fn::Split must not be empty")
	}
	if !ev.charge(n, int64(strings.Count(raw.AsString(), delim))+1, 0) {
		return cty.DynamicVal
	}
	var elems []cty.Value
	for _, p := range strings.Split(raw.AsString(), delim) {
		elems = append(elems, cty.StringVal(p))
	}
	return cty.TupleVal(elems).WithMarks(marks)
}

func (ev *evaluator) findInMap(n *node) cty.Value {
	a := ev.args(n, 3, 3, "[MapName, TopLevelKey, SecondLevelKey]")
	if a == nil {
		return cty.DynamicVal
	}
	var keys [3]string
	known := true
	for i, k := range a { // evaluate all three keys, so each is checked
		v, ok := ev.text(k)
		raw, _ := v.Unmark()
		switch {
		case !ok:
			return cty.DynamicVal
		case !raw.IsKnown():
			known = false
		default:
			keys[i] = raw.AsString()
		}
	}
	if !known {
		return cty.DynamicVal
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
	if !ok {
		return cty.DynamicVal
	}
	if !raw.IsKnown() {
		return cty.UnknownVal(cty.String).WithMarks(marks)
	}
	if !ev.charge(n, 0, int64(len(raw.AsString()))*4/3+4) { // base64 grows text by a third
		return cty.DynamicVal
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
		ev.text(a[1])
		return ev.errf(a[0], "the replacements of Fn::Replace must be a map")
	}
	var pairs []string
	var marks []cty.ValueMarks
	known, ok := true, true
	// The shortest old text and the longest new one bound what the replacement may build.
	shortest, longest := -1, 0
	for i, k := range a[0].keys { // evaluate everything, so each part is checked
		v, vok := ev.text(a[0].vals[i])
		raw, m := v.Unmark()
		ok, known = ok && vok, known && raw.IsKnown()
		marks = append(marks, m)
		if vok && raw.IsKnown() {
			pairs = append(pairs, k, raw.AsString())
			if shortest < 0 || len(k) < shortest {
				shortest = len(k)
			}
			longest = max(longest, len(raw.AsString()))
		}
	}
	v, vok := ev.text(a[1])
	raw, m := v.Unmark()
	marks = append(marks, m)
	switch {
	case !ok || !vok:
		return cty.DynamicVal
	case !known || !raw.IsKnown():
		return cty.UnknownVal(cty.String).WithMarks(marks...)
	}
	// At most one replacement per shortest old text (per byte, and once more, for an empty one).
	size := int64(len(raw.AsString()))
	if shortest >= 0 && longest > shortest {
		size += (size/int64(max(shortest, 1)) + 1) * int64(longest)
	}
	if !ev.charge(n, 0, size) {
		return cty.DynamicVal
	}
	return cty.StringVal(strings.NewReplacer(pairs...).Replace(raw.AsString())).WithMarks(marks...)
}

// getAZs returns three zones of the region, "<region>a" to "<region>c": cairn knows no
// cloud's zones.
func (ev *evaluator) getAZs(n *node) cty.Value {
	region, ok := ev.text(n.arg)
	raw, marks := region.Unmark()
	if !ok {
		return cty.DynamicVal
	}
	if !raw.IsKnown() {
		return cty.DynamicVal.WithMarks(marks)
	}
	r := raw.AsString()
	if r == "" {
		r = ev.b.pseudo["AWS::Region"].AsString()
	}
	return cty.TupleVal([]cty.Value{cty.StringVal(r + "a"), cty.StringVal(r + "b"), cty.StringVal(r + "c")}).WithMarks(marks)
}

func (ev *evaluator) length(n *node) cty.Value {
	elems, marks, known, ok := ev.list(n.arg)
	if !ok {
		return cty.DynamicVal
	}
	if !known {
		return cty.UnknownVal(cty.Number).WithMarks(marks)
	}
	return cty.NumberIntVal(int64(len(elems))).WithMarks(marks)
}
