package pulumiyaml

import (
	"crypto/sha1" //nolint:gosec // fn::sha1 is Pulumi's built-in: a digest, not a security boundary
	"encoding/base64"
	"encoding/hex"
	"unicode/utf8"

	"github.com/apparentlymart/go-textseg/v15/textseg"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/value"
)

// oneArg is a built-in of one argument, computed on a known, unmarked value (pulumi-yaml's
// "lifted" functions): eval puts the argument's marks on the result and gives an unknown of
// the built-in's result type while the argument is not known.
type oneArg struct {
	result cty.Type // of the unknown while the argument is not known
	fn     func(c call, ev *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic)
}

// oneArgs are the one-argument built-ins by lower-case name; the file and asset ones are in
// builtins_files.go.
var oneArgs = map[string]oneArg{
	"fn::tobase64":     {cty.String, toBase64},
	"fn::frombase64":   {cty.String, fromBase64},
	"fn::sha1":         {cty.String, sha1Hex},
	"fn::length":       {cty.Number, length},
	"fn::singleornone": {cty.DynamicPseudoType, singleOrNone},
}

func init() {
	for name := range oneArgs {
		evaluated[name] = true
		delete(pending, name)
	}
	evaluated["fn::unsecret"] = true
	delete(pending, "fn::unsecret")
}

// evalOneArg evaluates c with f, or reports false when c is not a one-argument built-in.
func (c call) evalOneArg(ev *evaluator, arg cty.Value) (cty.Value, bool, diag.Diagnostics) {
	f, ok := oneArgs[c.name]
	if !ok {
		return cty.NilVal, false, nil
	}
	plain, marks := arg.UnmarkDeep()
	if !plain.IsWhollyKnown() {
		return cty.UnknownVal(f.result).WithMarks(marks), true, nil
	}
	out, d := f.fn(c, ev, plain)
	if d != nil {
		return cty.DynamicVal, true, diag.Diagnostics{*d}
	}
	return out.WithMarks(marks), true, nil
}

// unsecret drops the secret marks of v, deep, and keeps any other.
func unsecret(v cty.Value) cty.Value {
	plain, pvm := v.UnmarkDeepWithPaths()
	var keep []cty.PathValueMarks
	for _, pm := range pvm {
		marks := cty.NewValueMarks()
		for m := range pm.Marks {
			if m != value.Sensitive {
				marks[m] = struct{}{}
			}
		}
		if len(marks) > 0 {
			keep = append(keep, cty.PathValueMarks{Path: pm.Path, Marks: marks})
		}
	}
	return plain.MarkWithPaths(keep)
}

func stringArg(c call, v cty.Value) (string, *diag.Diagnostic) {
	if v.IsNull() || v.Type() != cty.String {
		return "", c.failp("expects a string, got %s", typeName(v))
	}
	return v.AsString(), nil
}

func toBase64(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(s))), nil
}

// fromBase64 decodes standard base64; like pulumi-yaml, the bytes must be UTF-8 text.
func fromBase64(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return cty.NilVal, c.failp("the argument is not base64: %v", err) // never the value: it may be a secret
	}
	if !utf8.Valid(b) {
		return cty.NilVal, c.failp("the decoded bytes are not UTF-8 text")
	}
	return cty.StringVal(string(b)), nil
}

func sha1Hex(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	s, d := stringArg(c, v)
	if d != nil {
		return cty.NilVal, d
	}
	h := sha1.Sum([]byte(s)) //nolint:gosec // see the import
	return cty.StringVal(hex.EncodeToString(h[:])), nil
}

// length counts a list's elements, an object's keys, or a string's user-perceived
// characters (grapheme clusters, as pulumi-yaml: "👨‍👩‍👧‍👦" is 1).
func length(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	if v.IsNull() {
		return cty.NilVal, c.failp("expects a list, an object or a string, got null")
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		n, err := textseg.TokenCount([]byte(v.AsString()), textseg.ScanGraphemeClusters)
		if err != nil {
			return cty.NilVal, c.failp("%v", err)
		}
		return cty.NumberIntVal(int64(n)), nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType() || ty.IsSetType():
		return cty.NumberIntVal(int64(v.LengthInt())), nil
	}
	return cty.NilVal, c.failp("expects a list, an object or a string, got %s", typeName(v))
}

// singleOrNone is the only element of a list, or null for an empty one.
func singleOrNone(c call, _ *evaluator, v cty.Value) (cty.Value, *diag.Diagnostic) {
	if !isList(v) {
		return cty.NilVal, c.failp("expects a list, got %s", typeName(v))
	}
	switch n := v.LengthInt(); n {
	case 0:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case 1:
		return v.Index(cty.NumberIntVal(0)), nil
	default:
		return cty.NilVal, c.failp("expects a list of 0 or 1 elements, got %d", n)
	}
}

// typeName names the type of a value for a message: never the value itself.
func typeName(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return "a string"
	case ty == cty.Number:
		return "a number"
	case ty == cty.Bool:
		return "a boolean"
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		return "a list"
	case ty.IsObjectType() || ty.IsMapType():
		if isAssetOrArchive(v) {
			return "an asset or archive"
		}
		return "an object"
	}
	return ty.FriendlyName()
}
