package pulumiyaml

import (
	"math/big"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
)

// evaluated are the built-ins this front end computes, by lower-case name.
var evaluated = map[string]bool{"fn::secret": true, "fn::join": true, "fn::split": true, "fn::select": true, "fn::tojson": true}

// pending are Pulumi's other built-ins: refused with "not supported yet", never ignored.
var pending = map[string]bool{
	"fn::invoke": true, "fn::tobase64": true, "fn::frombase64": true, "fn::unsecret": true, "fn::readfile": true,
	"fn::filebase64": true, "fn::filebase64sha256": true, "fn::sha1": true, "fn::length": true,
	"fn::singleornone": true, "fn::pulumiresourcename": true, "fn::pulumiresourcetype": true,
	"fn::stackreference": true, "fn::stringasset": true, "fn::fileasset": true, "fn::remoteasset": true,
	"fn::filearchive": true, "fn::remotearchive": true, "fn::assetarchive": true, "fn::method": true,
}

// call is a built-in: an object whose only key is `fn::name` (any case).
type call struct {
	name string // lower case
	arg  expr
	where
}

func (c call) accesses(f func(*access)) { c.arg.accesses(f) }

// checkCall says whether name is a built-in this front end evaluates, and why not if not.
func checkCall(name string, at where) diag.Diagnostics {
	lower := strings.ToLower(name)
	switch {
	case evaluated[lower]:
		return nil
	case pending[lower]:
		return diag.Diagnostics{diag.Errorf(at.rng, at.path, "%s is not supported yet by cairn's Pulumi YAML front end", name)}
	case strings.Contains(strings.TrimPrefix(lower, "fn::"), ":"):
		return diag.Diagnostics{diag.Errorf(at.rng, at.path, "%s (the short form of fn::invoke) is not supported yet by cairn's Pulumi YAML front end", name)}
	}
	return diag.Diagnostics{diag.Errorf(at.rng, at.path, "unknown built-in function %s", name)}
}

func (c call) eval(ev *evaluator) (cty.Value, diag.Diagnostics) {
	arg, ds := c.arg.eval(ev)
	if ds.HasErrors() {
		return cty.DynamicVal, ds
	}
	if c.name == "fn::secret" {
		return value.Secret(arg), ds
	}
	if d := c.precheck(ev, arg); d != nil { // evalbudget.go
		return cty.DynamicVal, append(ds, *d)
	}
	if c.name == "fn::unsecret" {
		return unsecret(arg), ds
	}
	if out, ok, d := c.evalOneArg(ev, arg); ok {
		if !d.HasErrors() {
			if over := c.charge(ev, out); over != nil {
				return cty.DynamicVal, append(ds, *over)
			}
		}
		return out, append(ds, d...)
	}
	// The others compute on plain values: the marks of the inputs go on the result.
	plain, marks := arg.UnmarkDeep()
	if c.name == "fn::tojson" {
		if !plain.IsWhollyKnown() {
			return cty.UnknownVal(cty.String).WithMarks(marks), ds
		}
		b, err := value.ToJSON(plain)
		if err != nil {
			return cty.DynamicVal, append(ds, c.fail("%v", err))
		}
		return cty.StringVal(string(b)).WithMarks(marks), ds
	}
	pair, ok := twoArgs(plain)
	if !ok {
		return cty.DynamicVal, append(ds, c.fail("%s takes a list of two arguments", c.name))
	}
	if !pair[0].IsKnown() || !pair[1].IsKnown() {
		return cty.DynamicVal.WithMarks(marks), ds
	}
	var out cty.Value
	var d *diag.Diagnostic
	switch c.name {
	case "fn::join":
		out, d = c.join(pair[0], pair[1])
	case "fn::split":
		out, d = c.split(pair[0], pair[1])
	default:
		out, d = c.selectElem(pair[0], pair[1])
	}
	if d != nil {
		return cty.DynamicVal, append(ds, *d)
	}
	return out.WithMarks(marks), ds
}

func (c call) fail(format string, args ...any) diag.Diagnostic {
	return diag.Errorf(c.rng, c.path, c.name+": "+format, args...)
}

func (c call) failp(format string, args ...any) *diag.Diagnostic {
	d := c.fail(format, args...)
	return &d
}

func twoArgs(v cty.Value) ([2]cty.Value, bool) {
	if !v.IsKnown() || v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType()) || v.LengthInt() != 2 {
		return [2]cty.Value{}, false
	}
	return [2]cty.Value{v.Index(cty.NumberIntVal(0)), v.Index(cty.NumberIntVal(1))}, true
}

func isList(v cty.Value) bool {
	return !v.IsNull() && (v.Type().IsTupleType() || v.Type().IsListType())
}

func (c call) join(delim, list cty.Value) (cty.Value, *diag.Diagnostic) {
	if delim.IsNull() || delim.Type() != cty.String {
		return cty.NilVal, c.failp("the delimiter must be a string")
	}
	if !isList(list) {
		return cty.NilVal, c.failp("the second argument must be a list of strings")
	}
	if !list.IsWhollyKnown() {
		return cty.UnknownVal(cty.String), nil
	}
	var parts []string
	for it := list.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return cty.NilVal, c.failp("the second argument must be a list of strings")
		}
		parts = append(parts, e.AsString())
	}
	return cty.StringVal(strings.Join(parts, delim.AsString())), nil
}

func (c call) split(delim, s cty.Value) (cty.Value, *diag.Diagnostic) {
	if delim.IsNull() || delim.Type() != cty.String || s.IsNull() || s.Type() != cty.String {
		return cty.NilVal, c.failp("takes a delimiter and a string")
	}
	parts := strings.Split(s.AsString(), delim.AsString())
	vals := make([]cty.Value, len(parts))
	for i, p := range parts {
		vals[i] = cty.StringVal(p)
	}
	return cty.ListVal(vals), nil
}

func (c call) selectElem(idx, list cty.Value) (cty.Value, *diag.Diagnostic) {
	if idx.IsNull() || idx.Type() != cty.Number || !idx.AsBigFloat().IsInt() {
		return cty.NilVal, c.failp("the index must be an integer")
	}
	if !isList(list) {
		return cty.NilVal, c.failp("the second argument must be a list")
	}
	i, _ := idx.AsBigFloat().Int64()
	if idx.AsBigFloat().Cmp(big.NewFloat(0)) < 0 || i >= int64(list.LengthInt()) {
		return cty.NilVal, c.failp("index %d is out of range for a list of %d", i, list.LengthInt())
	}
	return list.Index(cty.NumberIntVal(i)), nil
}
