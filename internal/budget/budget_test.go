package budget

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

func rangeOf(n int) cty.Value {
	vals := make([]cty.Value, n)
	for i := range vals {
		vals[i] = cty.NumberIntVal(int64(i))
	}
	return cty.ListVal(vals)
}

// TestSetproductPrecheck: setproduct is refused before it runs only when every argument is
// known (the product is then built); an unknown argument makes the result unknown and an
// empty one makes it empty, whatever the others' sizes.
func TestSetproductPrecheck(t *testing.T) {
	big := rangeOf(1000)
	cases := map[string]struct {
		reason string
		args   []cty.Value
		refuse bool
	}{
		"Known": {reason: "1000³ tuples are built.", args: []cty.Value{big, big, big}, refuse: true},
		"Unknown": {reason: "A preview: the third size is known only after apply.",
			args: []cty.Value{big, big, cty.UnknownVal(cty.List(cty.Number))}},
		"UnknownElements": {reason: "A list of unknown elements has its length: 1000² × 3 tuples would be built.",
			args: []cty.Value{big, big, cty.ListVal([]cty.Value{cty.UnknownVal(cty.Number), cty.UnknownVal(cty.Number), cty.UnknownVal(cty.Number)})}, refuse: true},
		"Empty": {reason: "An empty argument: an empty product.", args: []cty.Value{big, big, cty.ListValEmpty(cty.Number)}},
		"Small": {reason: "Well within the limit.", args: []cty.Value{rangeOf(10), rangeOf(10)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := From(context.Background()).Meter()
			f := Wrap("setproduct", stdlib.SetProductFunc, func() *Meter { return m })
			_, err := f.Call(tc.args)
			if got := IsExceeded(err); got != tc.refuse {
				t.Errorf("%s\nsetproduct: %v; refused %v, want %v", tc.reason, err, got, tc.refuse)
			}
		})
	}
}

// TestAliasing: functions that copy what their arguments share are refused before they
// build it, and a function called on a large value pays for cty's walk of it.
func TestAliasing(t *testing.T) {
	big := rangeOf(1000)
	refs := func(v cty.Value, n int) cty.Value {
		vals := make([]cty.Value, n)
		for i := range vals {
			vals[i] = v
		}
		return cty.TupleVal(vals)
	}
	long := cty.StringVal(strings.Repeat("x", 1<<20))
	cases := map[string]struct {
		name  string
		f     function.Function
		args  []cty.Value
		limit string
	}{
		"Flatten":    {name: "flatten", f: stdlib.FlattenFunc, args: []cty.Value{refs(big, 1000)}, limit: "elements"},
		"Concat":     {name: "concat", f: stdlib.ConcatFunc, args: []cty.Value{big, big, big, big, big, big, big, big, big, big, big}, limit: "elements"},
		"Join":       {name: "join", f: stdlib.JoinFunc, args: []cty.Value{cty.StringVal(""), cty.ListVal(refs(long, 100).AsValueSlice())}, limit: "bytes"},
		"JSON":       {name: "jsonencode", f: stdlib.JSONEncodeFunc, args: []cty.Value{refs(long, 100)}, limit: "bytes"},
		"Formatlist": {name: "formatlist", f: stdlib.FormatListFunc, args: []cty.Value{cty.StringVal("%s%s"), long, refs(cty.StringVal("a"), 100)}, limit: "bytes"},
		"Split":      {name: "split", f: stdlib.SplitFunc, args: []cty.Value{cty.StringVal(""), cty.StringVal(strings.Repeat("x", 20_000))}, limit: "elements"},
		"Walk":       {name: "length", f: stdlib.LengthFunc, args: []cty.Value{refs(big, 100)}, limit: "elements"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, stop := With(context.Background(), Limits{Elements: 10_000, Bytes: 10 << 20})
			defer stop()
			m := From(ctx).Meter()
			f := Wrap(tc.name, tc.f, func() *Meter { return m })
			_, err := f.Call(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.name+": exceeds the "+tc.limit+" limit") {
				t.Errorf("%s: %v, want the %s limit", tc.name, err, tc.limit)
			}
		})
	}
}

// TestWrapKeepsRefinements: a wrapped function's unknown result is refined as the function
// refines it unwrapped (upper of an unknown string is a non-null unknown string).
func TestWrapKeepsRefinements(t *testing.T) {
	m := From(context.Background()).Meter()
	up := Wrap("upper", stdlib.UpperFunc, func() *Meter { return m })
	for _, f := range []struct {
		name string
		fn   func([]cty.Value) (cty.Value, error)
	}{{"unwrapped", stdlib.UpperFunc.Call}, {"wrapped", up.Call}} {
		v, err := f.fn([]cty.Value{cty.UnknownVal(cty.String)})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Range().DefinitelyNotNull() {
			t.Errorf("%s: upper(unknown) is not known to be non-null: %#v", f.name, v)
		}
	}
}
