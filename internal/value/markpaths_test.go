package value

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// TestMarkPathsAsCty: MarkPaths marks what cty's MarkWithPaths marks, on objects, lists,
// tuples, maps and sets, and ignores paths the value lacks.
func TestMarkPathsAsCty(t *testing.T) {
	s := cty.NewValueMarks(Sensitive)
	v := cty.ObjectVal(map[string]cty.Value{
		"a":    cty.StringVal("x"),
		"list": cty.ListVal([]cty.Value{cty.StringVal("p"), cty.StringVal("q")}),
		"tup":  cty.TupleVal([]cty.Value{cty.StringVal("p"), cty.NumberIntVal(1)}),
		"map":  cty.MapVal(map[string]cty.Value{"k": cty.StringVal("v"), "l": cty.StringVal("w")}),
		"set":  cty.SetVal([]cty.Value{cty.StringVal("s1"), cty.StringVal("s2")}),
		"obj":  cty.ObjectVal(map[string]cty.Value{"inner": cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"x": cty.True})})}),
		"null": cty.NullVal(cty.String),
	})
	paths := []cty.Path{
		cty.GetAttrPath("a"),
		cty.GetAttrPath("list").IndexInt(1),
		cty.GetAttrPath("tup").IndexInt(0),
		cty.GetAttrPath("map").IndexString("l"),
		cty.GetAttrPath("set").Index(cty.StringVal("s2")),
		cty.GetAttrPath("obj").GetAttr("inner").IndexInt(0).GetAttr("x"),
		cty.GetAttrPath("null"),
		cty.GetAttrPath("missing").IndexInt(3),
		cty.GetAttrPath("list").IndexInt(7),
		cty.GetAttrPath("a").GetAttr("deeper"),
	}
	var pvm []cty.PathValueMarks
	for _, p := range paths {
		pvm = append(pvm, cty.PathValueMarks{Path: p, Marks: s})
	}
	got, want := MarkPaths(v, pvm), v.MarkWithPaths(pvm)
	if !got.RawEquals(want) {
		t.Errorf("MarkPaths = %#v\nMarkWithPaths = %#v", got, want)
	}
	// A stored value's paths (map keys as attributes) mark a provider's map, and the other way.
	stored := cty.ObjectVal(map[string]cty.Value{"m": cty.ObjectVal(map[string]cty.Value{"k": cty.StringVal("v")})})
	typed := cty.ObjectVal(map[string]cty.Value{"m": cty.MapVal(map[string]cty.Value{"k": cty.StringVal("v")})})
	byAttr := []cty.PathValueMarks{{Path: cty.GetAttrPath("m").GetAttr("k"), Marks: s}}
	byIndex := []cty.PathValueMarks{{Path: cty.GetAttrPath("m").IndexString("k"), Marks: s}}
	if !MarkPaths(typed, byAttr).GetAttr("m").Index(cty.StringVal("k")).HasMark(Sensitive) {
		t.Errorf("an attribute step did not reach a map key")
	}
	if !MarkPaths(stored, byIndex).GetAttr("m").GetAttr("k").HasMark(Sensitive) {
		t.Errorf("an index step did not reach an object attribute")
	}
}

// TestManySensitivePathsAreLinear: a stored value with 20,000 sensitive list elements (a
// state's sensitive_attributes can list that many) reads back in well under a second; cty's
// MarkWithPaths took minutes (every node compared with every path).
func TestManySensitivePathsAreLinear(t *testing.T) {
	const n = 20000
	elems := make([]any, n)
	paths := make([][]any, n)
	for i := range elems {
		elems[i] = "x"
		paths[i] = []any{"l", i}
	}
	body, _ := json.Marshal(map[string]any{"l": elems})
	b, _ := json.Marshal(stored{Value: body, Sensitive: paths})
	done := make(chan cty.Value, 1)
	go func() {
		v, err := Unmarshal(b)
		if err != nil {
			panic(err)
		}
		done <- v
	}()
	select {
	case v := <-done:
		l := v.GetAttr("l")
		for _, i := range []int{0, n / 2, n - 1} {
			if !l.Index(cty.NumberIntVal(int64(i))).HasMark(Sensitive) {
				t.Fatalf("element %d lost its mark", i)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("Unmarshal of %d sensitive paths took more than 5s", n)
	}
}

func BenchmarkMarkPaths(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			elems := make([]cty.Value, n)
			pvm := make([]cty.PathValueMarks, n)
			for i := range elems {
				elems[i] = cty.StringVal("x")
				pvm[i] = cty.PathValueMarks{Path: cty.GetAttrPath("l").IndexInt(i), Marks: cty.NewValueMarks(Sensitive)}
			}
			v := cty.ObjectVal(map[string]cty.Value{"l": cty.ListVal(elems)})
			for b.Loop() {
				MarkPaths(v, pvm)
			}
		})
	}
}
