package budget

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Charge charges a built value to m: one element per collection element and the bytes of
// every string, at any depth. Unknown and null parts cost nothing.
func Charge(m *Meter, v cty.Value, what string) error {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	v, _ = v.Unmark()
	ty := v.Type()
	switch {
	case ty == cty.String:
		return m.Bytes(int64(len(v.AsString())), what)
	case ty.IsListType() || ty.IsSetType() || ty.IsMapType() || ty.IsTupleType() || ty.IsObjectType():
		if ty.IsObjectType() && len(ty.AttributeTypes()) == 0 {
			return nil
		}
		if err := m.Elements(int64(v.LengthInt()), what); err != nil {
			return err
		}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if ty.IsMapType() {
				if err := m.Bytes(int64(len(k.AsString())), what); err != nil {
					return err
				}
			}
			if err := Charge(m, e, what); err != nil {
				return err
			}
		}
	}
	return nil
}

// Wrap returns f with its work bounded by the meter that meter returns at each call: before
// the call, the arguments of functions whose result can be far larger than their arguments
// (setproduct, range, format widths, indent, join's separator, replace, bcrypt's cost,
// jsondecode/yamldecode nesting and aliases) and of functions that copy what their arguments
// share (see aliasing) are checked against the limits; after it, the result is charged. name
// is the function's name in the language.
func Wrap(name string, f function.Function, meter func() *Meter) function.Function {
	// The wrapper takes marked arguments as they are: cty would otherwise walk every argument
	// through its aliases for marks before the precheck runs (f unmarks what it must).
	// It takes unknown arguments too, and hands a call with one to f as it is: f then refines
	// its unknown result as it would unwrapped (upper(x) != null is true for an unknown x).
	params := f.Params()
	for i := range params {
		params[i].AllowMarked, params[i].AllowUnknown = true, true
	}
	varParam := f.VarParam()
	if varParam != nil {
		varParam.AllowMarked, varParam.AllowUnknown = true, true
	}
	spec := &function.Spec{
		Description: f.Description(),
		Params:      params,
		VarParam:    varParam,
		// Some functions build their result to know its type (flatten and concat of tuples,
		// merge of objects): the precheck runs before that too.
		Type: func(args []cty.Value) (cty.Type, error) {
			if m := meter(); m != nil {
				if err := precheck(m, name, args); err != nil {
					return cty.NilType, err
				}
			}
			return f.ReturnTypeForValues(args)
		},
		// cty runs Type right before Impl: the precheck is done by then.
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			m := meter()
			if err := walked(m, name, args); err != nil {
				return cty.NilVal, err
			}
			if err := m.b.Err(); err != nil {
				return cty.NilVal, err
			}
			v, err := f.Call(args)
			if err != nil {
				return v, err
			}
			if err := Charge(m, v, name); err != nil {
				return cty.NilVal, err
			}
			return v, nil
		},
	}
	return function.New(spec)
}

// WrapAll wraps every function of fns (see Wrap) into a new map.
func WrapAll(fns map[string]function.Function, meter func() *Meter) map[string]function.Function {
	out := make(map[string]function.Function, len(fns))
	for name, f := range fns {
		out[name] = Wrap(name, f, meter)
	}
	return out
}

// IterationCost is what one element of a `for` expression costs, in elements: each builds a
// scope and evaluates the body (a few microseconds in HCL), not just a value, so nested fors
// are stopped within a second or so rather than after millions of iterations.
const IterationCost = 8

// maxBcryptCost bounds bcrypt's cost: each step doubles the time, 14 is about a second here.
const maxBcryptCost = 14

func precheck(m *Meter, name string, args []cty.Value) error {
	if err := aliasing(m, name, args); err != nil {
		return err
	}
	known := func(i int) (cty.Value, bool) {
		if i >= len(args) {
			return cty.NilVal, false
		}
		v, _ := args[i].Unmark()
		return v, v.IsWhollyKnown() && !v.IsNull()
	}
	switch name {
	case "setproduct":
		// Only a product of known collections is built: with an unknown one the result is
		// unknown (a preview), with an empty one it is empty. A list whose elements are not
		// all known has its length all the same.
		total := int64(1)
		for i := range args {
			v, _ := args[i].Unmark()
			if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() || v.Type().IsSetType() && !v.IsWhollyKnown() {
				return nil
			}
			n := int64(v.LengthInt())
			if n == 0 {
				return nil
			}
			if total > (1<<62)/(n*int64(len(args)+1)) {
				total = 1 << 62 / int64(len(args)+1)
			} else {
				total *= n
			}
		}
		return m.Would(total*int64(len(args)+1), 0, name)
	case "range":
		start, limit, step := big.NewFloat(0), (*big.Float)(nil), big.NewFloat(1)
		nums := make([]*big.Float, 0, 3)
		for i := range args {
			v, ok := known(i)
			if !ok || v.Type() != cty.Number {
				return nil
			}
			nums = append(nums, v.AsBigFloat())
		}
		switch len(nums) {
		case 1:
			limit = nums[0]
		case 2:
			start, limit = nums[0], nums[1]
		case 3:
			start, limit, step = nums[0], nums[1], nums[2]
		default:
			return nil
		}
		if step.Sign() == 0 {
			return nil // range refuses it itself
		}
		span := new(big.Float).Sub(limit, start)
		n, _ := new(big.Float).Quo(span, step).Float64()
		if n > 0 {
			if err := m.Would(int64(min(n, 1<<62)), 0, name); err != nil {
				return err
			}
		}
	case "format", "formatlist":
		if v, ok := known(0); ok && v.Type() == cty.String {
			if w := maxWidth(v.AsString()); w > 0 {
				return m.Would(0, w, name)
			}
		}
	case "indent":
		n, ok1 := known(0)
		s, ok2 := known(1)
		if ok1 && ok2 && n.Type() == cty.Number && s.Type() == cty.String {
			spaces, _ := n.AsBigFloat().Float64()
			lines := float64(strings.Count(s.AsString(), "\n") + 1)
			return m.Would(0, int64(min(spaces*lines, 1<<62)), name)
		}
	case "join":
		sep, ok := known(0)
		if !ok || sep.Type() != cty.String {
			return nil
		}
		n := 0
		for i := 1; i < len(args); i++ {
			if v, ok := known(i); ok && v.CanIterateElements() {
				n += v.LengthInt()
			}
		}
		return m.Would(0, int64(len(sep.AsString()))*int64(n), name)
	case "replace":
		s, ok1 := known(0)
		sub, ok2 := known(1)
		rep, ok3 := known(2)
		if ok1 && ok2 && ok3 && s.Type() == cty.String && sub.Type() == cty.String && rep.Type() == cty.String {
			str, old, repl := s.AsString(), sub.AsString(), rep.AsString()
			if len(repl) > len(old) {
				count := int64(len(str) + 1) // an empty or regex pattern may match anywhere
				if old != "" && !(len(old) > 1 && strings.HasPrefix(old, "/") && strings.HasSuffix(old, "/")) {
					count = int64(strings.Count(str, old))
				}
				return m.Would(0, int64(len(str))+count*int64(len(repl)), name)
			}
		}
	case "bcrypt":
		if v, ok := known(1); ok && v.Type() == cty.Number {
			if c, _ := v.AsBigFloat().Float64(); c > maxBcryptCost {
				return fmt.Errorf("bcrypt cost %v is over this server's maximum of %d", c, maxBcryptCost)
			}
		}
	case "jsondecode", "yamldecode", "csvdecode":
		if v, ok := known(0); ok && v.Type() == cty.String {
			if err := m.b.Depth(bracketDepth(v.AsString())); err != nil {
				return err
			}
			if name == "yamldecode" {
				return YAMLText(m, v.AsString())
			}
		}
	}
	return nil
}

// maxWidth returns the largest width or precision written in a format string's verbs
// (%10d, %.500f, %-30s): the bytes one verb may produce beyond its argument.
func maxWidth(f string) int64 {
	var max int64
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		var n int64
		for i++; i < len(f); i++ {
			c := f[i]
			switch {
			case c >= '0' && c <= '9':
				if n < 1<<40 {
					n = n*10 + int64(c-'0')
				}
			case c == '.' || c == '-' || c == '+' || c == '#' || c == ' ' || c == '[' || c == ']':
				max, n = maxOf(max, n), 0
			default:
				max, n = maxOf(max, n), 0
				goto next
			}
		}
	next:
	}
	return max
}

func maxOf(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// bracketDepth returns the deepest nesting of [ and { in s outside JSON strings.
func bracketDepth(s string) int {
	max, _, _ := BracketDepth([]byte(s), -1)
	return max
}

// BracketDepth returns the deepest nesting of [ and { in src outside JSON strings, found by one
// scan without decoding anything, and the line and column of the first bracket deeper than
// limit (0, 0 if none is). For JSON it is the document's depth. For YAML it only catches deep
// flow collections early: a quote in a comment or a single-quoted scalar can hide brackets from
// it, so YAMLNodes checks the decoded document's depth as well (yaml.v3 itself stops at 10,000
// levels).
func BracketDepth(src []byte, limit int) (max, line, col int) {
	depth, inStr := 0, false
	l, lineStart := 1, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			l, lineStart = l+1, i+1
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			depth++
			if depth > max {
				max = depth
				if limit >= 0 && depth > limit && line == 0 {
					line, col = l, i-lineStart+1
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return max, line, col
}
