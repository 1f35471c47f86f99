package tflang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// BenchmarkEvalResources evaluates the bodies of 200 resources that call functions, use a for
// expression and a string template, as the engine does when it checks or applies them.
func BenchmarkEvalResources(b *testing.B) {
	var src strings.Builder
	src.WriteString("locals {\n  names = [\"a\", \"b\", \"c\"]\n}\n")
	for i := range 200 {
		fmt.Fprintf(&src, "resource \"time_static\" \"r%d\" {\n  triggers = {\n    n = \"r-${upper(local.names[0])}-%d\"\n"+
			"    l = join(\",\", [for s in local.names : format(\"%%s-%%d\", s, %d)])\n    m = length(merge({a = 1}, {b = 2}))\n  }\n}\n", i, i, i)
	}
	st, ds := Parse(b.Context(), files("main.tf", src.String()), Options{})
	if ds.HasErrors() {
		b.Fatal(ds.Err())
	}
	sc := scope{}
	b.ResetTimer()
	for b.Loop() {
		for _, r := range st.Resources {
			v, ds := r.Properties.Eval(sc)
			if ds.HasErrors() || v.Type() == cty.DynamicPseudoType {
				b.Fatal(ds.Err())
			}
		}
	}
}
