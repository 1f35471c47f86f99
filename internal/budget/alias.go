package budget

import (
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// Values are immutable and share their parts: [for i in range(1000) : local.big] holds one
// big a thousand times at the cost of a thousand references. A function that copies what its
// arguments refer to (concat, flatten, join, format, jsonencode ...) would build the product
// before Wrap could charge its result, so aliasing checks what such a call will build, from
// its arguments, first. It also bounds what the decoders make of a string.
func aliasing(m *Meter, name string, args []cty.Value) error {
	left := func() (int64, int64) { return m.Left() }
	switch name {
	case "concat", "merge", "setunion", "zipmap":
		var n int64
		for _, a := range args {
			n += shallow(a)
		}
		return m.Would(n, 0, name)
	case "flatten":
		le, _ := left()
		var e int64
		for _, a := range args {
			e += leaves(a, le+1-e)
		}
		return m.Would(e, 0, name)
	case "join":
		le, lb := left()
		var e, b int64
		for _, a := range args {
			ae, ab := measure(a, le+1-e, lb+1-b)
			e, b = e+ae, b+ab
		}
		return m.Would(e, b, name)
	case "format", "jsonencode":
		le, lb := left()
		var e, b int64
		for _, a := range args {
			ae, ab := measure(a, le+1-e, lb+1-b)
			e, b = e+ae, b+ab
		}
		return m.Would(e, b+2*e, name) // a JSON value or %v of a collection writes at least "[]" or `""` per element
	case "formatlist":
		// scalar arguments are repeated for every element of the list arguments
		_, lb := left()
		var n, per, lists int64
		for _, a := range args {
			v, _ := a.Unmark()
			if !v.IsKnown() || v.IsNull() {
				continue
			}
			if v.Type().IsListType() || v.Type().IsTupleType() {
				n = max(n, int64(v.LengthInt()))
				_, ab := measure(v, 1<<62, lb+1-lists)
				lists += ab
				continue
			}
			_, ab := measure(v, 1<<62, lb+1)
			per += ab
		}
		return m.Would(n, satMul(n, per)+lists, name)
	case "split", "regexall", "csvdecode", "jsondecode":
		s, ok := knownString(args, 0)
		if name == "split" {
			s, ok = knownString(args, 1)
		}
		if !ok {
			return nil
		}
		var n int64
		switch name {
		case "split":
			sep, _ := knownString(args, 0)
			if sep == "" {
				n = int64(len(s)) + 1
			} else {
				n = int64(strings.Count(s, sep)) + 1
			}
		case "regexall":
			n = int64(len(s)) + 1 // matches, at most one per position
		case "csvdecode":
			n = int64(strings.Count(s, ",")+strings.Count(s, "\n")) + 1
		case "jsondecode":
			n = int64(strings.Count(s, ",")+strings.Count(s, ":")+strings.Count(s, "[")+strings.Count(s, "{")) + 1
		}
		return m.Would(n, 0, name)
	}
	return nil
}

// WalkRatio is how many elements cty may walk per element charged: it walks every argument of
// every call through its aliases (for marks) before the function runs, and Wrap charges that
// walk, so a loop calling a function on a large value is stopped after a few calls.
const WalkRatio = 8

// walked charges the walk of args, after cty made it: the next call is refused instead.
func walked(m *Meter, name string, args []cty.Value) error {
	le, _ := m.Left()
	limit := satMul(le+1, WalkRatio)
	var n int64
	for _, a := range args {
		e, _ := measure(a, limit-n, 1<<62)
		n += e
	}
	return m.Elements(n/WalkRatio, name)
}

func knownString(args []cty.Value, i int) (string, bool) {
	if i >= len(args) {
		return "", false
	}
	v, _ := args[i].Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// Left is what the meter may still charge: elements and bytes (1<<62 for no limit).
func (m *Meter) Left() (elements, bytes int64) {
	e, b := m.b.lim.Elements-m.elements, m.b.lim.Bytes-m.bytes
	if m.b.lim.Elements < 0 {
		e = 1 << 62
	}
	if m.b.lim.Bytes < 0 {
		b = 1 << 62
	}
	return max(e, 0), max(b, 0)
}

// shallow is the number of elements of a known collection, or 0.
func shallow(v cty.Value) int64 {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return 0
	}
	return int64(v.LengthInt())
}

// leaves counts what flatten makes of v: the elements below nested lists, tuples and sets,
// stopping once past max.
func leaves(v cty.Value, max int64) int64 {
	v, _ = v.Unmark()
	ty := v.Type()
	if !v.IsKnown() || v.IsNull() || !(ty.IsListType() || ty.IsTupleType() || ty.IsSetType()) {
		return 1
	}
	var n int64
	for it := v.ElementIterator(); it.Next() && n <= max; {
		_, e := it.Element()
		n += leaves(e, max-n)
	}
	return n
}

// measure counts the elements and string bytes v refers to, through every alias, stopping
// once past maxE elements or maxB bytes.
func measure(v cty.Value, maxE, maxB int64) (e, b int64) {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return 0, 0
	}
	if v.Type() == cty.String {
		return 0, int64(len(v.AsString()))
	}
	if !v.CanIterateElements() {
		return 0, 8 // a number or a bool, written
	}
	for it := v.ElementIterator(); it.Next() && e <= maxE && b <= maxB; {
		k, el := it.Element()
		if v.Type().IsMapType() || v.Type().IsObjectType() {
			kv, _ := k.Unmark()
			b += int64(len(kv.AsString()))
		}
		ee, eb := measure(el, maxE-e, maxB-b)
		e, b = e+ee+1, b+eb
	}
	return e, b
}

func satMul(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}
