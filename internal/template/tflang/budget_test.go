package tflang

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// nested is n interpolations nested in one another, as a local.
func nested(n int) string {
	return "locals {\n  x = " + strings.Repeat(`"${`, n) + `"x"` + strings.Repeat(`}"`, n) + "\n}\n"
}

// heredoc is a local holding a heredoc of n lines, flush (<<-) or not.
func heredoc(n int, flush bool) string {
	var b strings.Builder
	op := "<<"
	if flush {
		op = "<<-"
	}
	b.WriteString("locals {\n  big = " + op + "EOT\n")
	for i := range n {
		fmt.Fprintf(&b, "    line %d of a long heredoc, with $ and %% and $${escapes} in it\n", i)
	}
	b.WriteString("    EOT\n}\noutput \"o\" { value = local.big }\n")
	return b.String()
}

// hostile are the inputs that took cairn down, each with the limit that now stops it and
// where. A "!" prefix on where means the diagnostic comes from evaluating the output.
var hostile = map[string]struct {
	src, limit, at string
}{
	"Count2e31":       {src: "resource \"time_static\" \"t\" {\n  count = 2147483648\n}\n", limit: "instances", at: "main.tf:2:11"},
	"Count1e8":        {src: "resource \"time_static\" \"t\" {\n  count = 100000000\n}\n", limit: "instances", at: "main.tf:2:11"},
	"Count2e63":       {src: "resource \"time_static\" \"t\" {\n  count = 9223372036854775808\n}\n", limit: "instances", at: "main.tf:2:11"},
	"CountHuge":       {src: "resource \"time_static\" \"t\" {\n  count = 1e400\n}\n", limit: "instances", at: "main.tf:2:11"},
	"ForEachProduct":  {src: "resource \"time_static\" \"t\" {\n  for_each = setproduct(range(400), range(400))\n}\n", limit: "instances", at: "main.tf:2:14"},
	"ModulesMultiply": {src: "module \"m\" {\n  source = \"./m\"\n  count = 1000\n}\n", limit: "resources", at: "m/main.tf:1:1"},
	"SetproductLocal": {src: "locals {\n  p = setproduct(range(1000), range(1000), range(1000))\n}\nresource \"time_static\" \"t\" {\n  count = length(local.p)\n}\n", limit: "elements", at: "main.tf:2:7"},
	"NestedFor": {src: "locals {\n  f = flatten([for a in range(1000): [for b in range(1000): [for c in range(1000): c]]])\n}\n" +
		"resource \"time_static\" \"t\" {\n  count = length(local.f)\n}\n", limit: "elements", at: "main.tf:2:"},
	"NestedForLiteral": {src: "locals {\n  l = range(100)\n  f = length([for a in local.l: [for b in local.l: [for c in local.l: [for d in local.l: d]]]])\n}\n" +
		"resource \"time_static\" \"t\" {\n  count = local.f\n}\n", limit: "elements", at: "main.tf:3:"},
	"Interpolations": {src: nested(50000), limit: "depth", at: "main.tf:2:"},
	"Operators":      {src: "locals {\n  x = " + strings.Repeat("!", 100000) + "true\n}\n", limit: "depth", at: "main.tf:2:"},
	"Additions":      {src: "locals {\n  x = 1" + strings.Repeat(" + 1", 100000) + "\n}\n", limit: "depth", at: "main.tf:2:"},
	"Splats":         {src: "locals {\n  x = [1]" + strings.Repeat("[*]", 100000) + "\n}\n", limit: "depth", at: "main.tf:2:"},
	"Brackets":       {src: "locals {\n  x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n", limit: "depth", at: "main.tf:2:"},
	"Directives":     {src: "locals {\n  x = \"" + strings.Repeat("%{if true}", 50000) + strings.Repeat("%{endif}", 50000) + "\"\n}\n", limit: "depth", at: "main.tf:2:"},
	"JSONNested":     {src: "", limit: "depth", at: "main.tf.json:1:"},
	"Dollars":        {src: "locals {\n  x = \"%{if true}x%{endif}" + strings.Repeat("$a", 200000) + "\"\n}\n", limit: "bytes", at: "main.tf:2:7"},
	"Doubling": {src: "locals {\n  a0 = \"xxxxxxxxxxxxxxxx\"\n" + doubling(30) + "}\nresource \"time_static\" \"t\" {\n  count = length(local.a30) > 0 ? 1 : 0\n}\n",
		limit: "bytes", at: "main.tf:"},
	"DynamicBlocks": {src: "locals {\n  l = range(1000)\n}\nresource \"time_static\" \"t\" {\n" + strings.Repeat("  dynamic \"b\" {\n    for_each = local.l\n    content {\n", 3) +
		strings.Repeat("    }\n  }\n", 3) + "}\n", limit: "!elements", at: "main.tf:"},
	"AliasJoin": {src: "locals {\n  s = join(\"\", [for i in range(1000) : \"0123456789abcdef\"])\n  t = join(\"\", [for i in range(1000) : local.s])\n" +
		"  u = join(\"\", [local.t, local.t, local.t, local.t, local.t])\n}\nresource \"time_static\" \"t\" {\n  count = length(local.u)\n}\n", limit: "bytes", at: "main.tf:4:"},
	"AliasTemplate": {src: "locals {\n  s = join(\"\", [for i in range(1000) : \"0123456789abcdef\"])\n  t = join(\"\", [for i in range(1000) : local.s])\n" +
		"  u = \"${local.t}${local.t}${local.t}${local.t}${local.t}\"\n}\nresource \"time_static\" \"t\" {\n  count = length(local.u)\n}\n", limit: "bytes", at: "main.tf:4:"},
	"AliasFlatten": {src: "locals {\n  l = [for i in range(1000) : i]\n  b = flatten([for i in range(100) : local.l])\n  c = flatten([local.b, local.b, local.b, local.b, local.b, local.b, local.b, local.b, local.b, local.b])\n}\n" +
		"resource \"time_static\" \"t\" {\n  count = length(local.c)\n}\n", limit: "elements", at: "main.tf:4:"},
	"AliasJSON": {src: "locals {\n  l = [for i in range(1000) : i]\n  b = flatten([for i in range(100) : local.l])\n  c = jsonencode([local.b, local.b, local.b, local.b, local.b, local.b])\n}\n" +
		"resource \"time_static\" \"t\" {\n  count = length(local.c)\n}\n", limit: "elements", at: "main.tf:4:"},
	"AliasValue": {src: "locals {\n  l = [for i in range(1000) : i]\n  b = flatten([for i in range(100) : local.l])\n}\n" +
		"resource \"time_static\" \"t\" {\n  triggers = { v = [for i in range(100) : local.b] }\n}\n", limit: "!elements", at: "main.tf:"},
	"Tokens":     {src: "locals {\n  x = [" + strings.Repeat("1,", 1<<20) + "]\n}\n", limit: "elements", at: "main.tf:2:"},
	"JSONTokens": {src: "", limit: "elements", at: "main.tf.json:1:"},
	"LocalChain": {src: "locals {\n  a0 = 1\n" + chain(5000) + "}\nresource \"time_static\" \"t\" {\n  count = local.a5000\n}\n", limit: "depth", at: "main.tf:"},
}

func doubling(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  a%d = \"${local.a%d}${local.a%d}\"\n", i, i-1, i-1)
	}
	return b.String()
}

func chain(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  a%d = local.a%d\n", i, i-1)
	}
	return b.String()
}

// TestHostileInputs: each input that took the process down (out of memory, stack overflow,
// minutes of CPU, a panic) is now a diagnostic naming the limit, at the offending place,
// answered at once and without building what it asks for.
func TestHostileInputs(t *testing.T) {
	for name, tc := range hostile {
		t.Run(name, func(t *testing.T) {
			fs := files("main.tf", tc.src, "m/main.tf", "resource \"time_static\" \"t\" {\n  count = 1000\n}\n")
			switch name {
			case "JSONNested":
				fs = files("main.tf.json", `{"locals": {"x": `+strings.Repeat("[", 200000)+strings.Repeat("]", 200000)+`}}`)
			case "JSONTokens":
				fs = files("main.tf.json", `{"locals": {"x": [`+strings.Repeat("1,", 1<<20)+`1]}}`)
			}
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			st, ds := Parse(context.Background(), fs, Options{})
			limit := tc.limit
			if strings.HasPrefix(limit, "!") {
				if ds.HasErrors() {
					t.Fatalf("Parse: %v", ds.Err())
				}
				limit = limit[1:]
				_, ds = st.Resources[0].Properties.Eval(scope{})
			}
			took := time.Since(start)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("%s: %v, %d MB allocated", name, took, (after.TotalAlloc-before.TotalAlloc)>>20)
			d := limitDiag(ds)
			if d == nil {
				t.Fatalf("diagnostics %v, want one naming the %s limit", ds, limit)
			}
			if !strings.Contains(d.Detail, "the "+limit+" limit") || !strings.Contains(d.Detail, budget.Flag[limit]) {
				t.Errorf("diagnostic %q, want it to name the %s limit and %s", d.Detail, limit, budget.Flag[limit])
			}
			if !strings.HasPrefix(d.Range.String(), tc.at) {
				t.Errorf("diagnostic at %s, want %s...", d.Range, tc.at)
			}
			if strings.Contains(d.Error(), reservedPrefix) {
				t.Errorf("diagnostic %q names cairn's own functions", d.Error())
			}
		})
	}
}

func limitDiag(ds diag.Diagnostics) *diag.Diagnostic {
	for i, d := range ds {
		if d.Summary == limitSummary {
			return &ds[i]
		}
	}
	return nil
}

// TestUnknownAtPreview: setproduct whose size depends on a resource passes the parse (the
// size is unknown), then is refused when evaluated with the resource known.
func TestUnknownAtPreview(t *testing.T) {
	st := mustParse(t, files("main.tf", `
resource "time_static" "a" {}
resource "time_static" "b" {
  triggers = { n = length(setproduct(range(1000), range(1000), range(length(time_static.a.id) > 0 ? 1000 : 0))) }
}
`), Options{})
	b := st.Resource("time_static.b")
	if _, ds := b.Properties.Eval(scope{}); ds.HasErrors() {
		t.Fatalf("with time_static.a unknown: %v", ds.Err())
	}
	_, ds := b.Properties.Eval(scope{"time_static.a": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("x")})})
	d := limitDiag(ds)
	if d == nil || !strings.Contains(d.Detail, "setproduct: exceeds the elements limit") || d.Range.String() != "main.tf:4:27" {
		t.Fatalf("with time_static.a known: %v, want setproduct refused at main.tf:4:27", ds)
	}
}

// TestReservedNames: users cannot call the functions the rewrite adds, in any syntax.
func TestReservedNames(t *testing.T) {
	for name, fs := range map[string]map[string][]byte{
		"HCL":  files("main.tf", "output \"o\" {\n  value = __cairn_count([1])\n}\n"),
		"JSON": files("main.tf.json", `{"output": {"o": {"value": "${__cairn_bytes(\"x\")}"}}}`),
		"Var":  files("main.tf", "variable \"v\" {\n  type = list(number)\n}\n"),
	} {
		t.Run(name, func(t *testing.T) {
			_, ds := Parse(context.Background(), fs, Options{Vars: map[string]string{"v": "__cairn_count([1])"}})
			if !ds.HasErrors() || ds[0].Summary != "Call to unknown function" {
				t.Fatalf("diagnostics %v, want a call to an unknown function", ds)
			}
		})
	}
}

// TestNoReservedSuggestion: a call to an unknown function close to a reserved name is not
// told the reserved name.
func TestNoReservedSuggestion(t *testing.T) {
	_, ds := Parse(context.Background(), files("main.tf", "output \"o\" {\n  value = _cairn_meter()\n}\n"), Options{})
	if !ds.HasErrors() || strings.Contains(ds.Error(), reservedPrefix) {
		t.Errorf("diagnostics %v, want an unknown function without suggestion", ds)
	}
}

// TestTimeAndCancel: an evaluation stops between steps once its request is cancelled.
func TestTimeAndCancel(t *testing.T) {
	st := mustParse(t, files("main.tf", "locals {\n  a = 1\n}\noutput \"o\" {\n  value = local.a\n}\n"), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ds := st.Outputs[0].Value.Eval(ctxScope{ctx})
	if !ds.HasErrors() || ds[0].Summary != "Evaluation stopped" || ds[0].Range.String() != "main.tf:5:11" {
		t.Fatalf("cancelled: %v, want the evaluation stopped at main.tf:5:11", ds)
	}
	ctx, stop := budget.With(context.Background(), budget.Limits{Time: time.Nanosecond})
	defer stop()
	time.Sleep(time.Millisecond)
	_, ds = Parse(ctx, files("main.tf", "resource \"time_static\" \"t\" {\n  count = 2\n}\n"), Options{})
	if d := limitDiag(ds); d == nil || !strings.Contains(d.Detail, "the time limit") {
		t.Fatalf("time up: %v, want the time limit", ds)
	}
}

type ctxScope struct{ ctx context.Context }

func (ctxScope) Resource(string) (template.ResourceValue, bool) {
	return template.UnknownResource, true
}
func (s ctxScope) Context() context.Context { return s.ctx }

// TestHeredoc: a long literal template is decoded by cairn, exactly as hclsyntax does (its
// escapes, a <<- heredoc's indentation), in linear time: hclsyntax joins its lines pairwise
// (1.2 to 3.5 s for 16,000 lines here, before).
func TestHeredoc(t *testing.T) {
	for _, flush := range []bool{false, true} {
		for _, n := range []int{40, 2000} {
			got := eval(t, mustParse(t, files("main.tf", heredoc(n, flush)), Options{}).Outputs[0].Value, scope{})
			if want := refParse(t, heredoc(n, flush)); !got.RawEquals(want) {
				t.Fatalf("flush=%v, %d lines: cairn's value differs from hclsyntax's:\n%q\n%q", flush, n, got.AsString()[:200], want.AsString()[:200])
			}
		}
		start := time.Now()
		st := mustParse(t, files("main.tf", heredoc(16000, flush)), Options{})
		v := eval(t, st.Outputs[0].Value, scope{})
		t.Logf("flush=%v: 16000 lines parsed and evaluated in %v", flush, time.Since(start))
		if strings.Count(v.AsString(), "\n") != 16000 {
			t.Errorf("flush=%v: 16000-line heredoc has %d lines", flush, strings.Count(v.AsString(), "\n"))
		}
		if o := st.Outputs[0]; o.Range.String() != "main.tf:16005:1" {
			t.Errorf("flush=%v: output after the heredoc at %s, want main.tf:16005:1", flush, o.Range)
		}
		// Linear: eight times the lines costs about eight times the memory (hcl's own merging
		// of the literals, quadratic, made it 64 times).
		small := allocsOf(func() {
			eval(t, mustParse(t, files("main.tf", heredoc(2000, flush)), Options{}).Outputs[0].Value, scope{})
		})
		large := allocsOf(func() {
			eval(t, mustParse(t, files("main.tf", heredoc(16000, flush)), Options{}).Outputs[0].Value, scope{})
		})
		ratio := float64(large) / float64(small)
		t.Logf("flush=%v: allocations grew %.1f times for 8 times the lines", flush, ratio)
		if ratio > 16 {
			t.Errorf("flush=%v: 16,000 lines allocated %.0f times what 2,000 did (%d / %d bytes): not linear", flush, ratio, large, small)
		}
	}
}

// allocsOf returns the bytes f allocates.
func allocsOf(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSourceLine: diagnostics quote their line from an index of the file made once (cairn
// split the whole file again for every diagnostic: 20,000 of them in an 800 kB file took 8 s).
func TestSourceLine(t *testing.T) {
	src := []byte("one\r\ntwo\n" + strings.Repeat("é", 400) + "\nlast")
	starts := lineStarts(src)
	for n, want := range map[int]string{1: "one", 2: "two", 3: strings.Repeat("é", 150) + " …", 4: "last", 5: "", 0: ""} {
		if got := sourceLine(src, starts, n); got != want {
			t.Errorf("line %d = %q, want %q", n, got, want)
		}
	}
}

// TestTemplates: templates of many literal parts, with interpolations, strip markers and
// indentation, are decoded by cairn as hclsyntax decodes them.
func TestTemplates(t *testing.T) {
	lines := strings.Repeat("    a $ and % line\n  \n", 20)
	for name, src := range map[string]string{
		"Quoted":      `"${"x"}` + strings.Repeat("$a%b", 40) + `${1 + 2}` + strings.Repeat("\\n$", 20) + `"`,
		"Strip":       `"` + strings.Repeat("a $ ", 20) + ` ${~ "x" ~}  ` + strings.Repeat(" b %", 20) + `"`,
		"Heredoc":     "<<EOT\n${upper(\"x\")}\n" + lines + "  ${~ 1 ~}  \n" + lines + "EOT",
		"FlushInterp": "<<-EOT\n" + lines + "    ${2}\n" + lines + "    EOT",
		"FlushStart":  "<<-EOT\n${2}\n" + lines + "    EOT",
		"Nested":      `"${"` + strings.Repeat("$c", 40) + `"}` + strings.Repeat("$d", 40) + `"`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg := "locals {\n  big = " + src + "\n}\noutput \"o\" { value = local.big }\n"
			got := eval(t, mustParse(t, files("main.tf", cfg), Options{}).Outputs[0].Value, scope{})
			f, ds := hclsyntax.ParseConfig([]byte(cfg), "main.tf", hcl.InitialPos)
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			want, ds := f.Body.(*hclsyntax.Body).Blocks[0].Body.Attributes["big"].Expr.Value(&hcl.EvalContext{Functions: (&tablePool{files: sentFiles{root: "."}}).get(budget.From(context.Background()).Meter(), false).fns})
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			if !got.RawEquals(want) {
				t.Errorf("cairn's value differs from hclsyntax's:\n%q\n%q", got.AsString(), want.AsString())
			}
		})
	}
	// the interpolations of a long template are where they are written
	_, ds := Parse(context.Background(), files("main.tf", "locals {\n  big = <<EOT\n"+lines+"${nosuch(1)}\nEOT\n}\noutput \"o\" { value = local.big }\n"), Options{})
	if len(ds) == 0 || ds[0].Range.String() != "main.tf:43:3" {
		t.Errorf("diagnostics %v, want the unknown function at main.tf:43:3", ds)
	}
}

// refParse is local.big of src as hclsyntax alone makes it.
func refParse(t *testing.T, src string) cty.Value {
	t.Helper()
	f, ds := hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	v, ds := f.Body.(*hclsyntax.Body).Blocks[0].Body.Attributes["big"].Expr.Value(nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return v
}

// TestJSONBudget: .tf.json templates are evaluated as hcljson does (keys too, strings
// without a template sequence as they are) and charged as .tf ones are.
func TestJSONBudget(t *testing.T) {
	st := mustParse(t, files("main.tf.json", `{
  "locals": {"l": "${[for i in range(3) : i * 2]}", "s": "costs $5 and 100%", "k": "a"},
  "output": {"o": {"value": {"${local.k}": "${local.l}", "plain": "${local.s}", "list": ["x", "${local.k}"]}}}
}`), Options{})
	got := eval(t, st.Outputs[0].Value, scope{})
	want := cty.ObjectVal(map[string]cty.Value{
		"a":     cty.TupleVal([]cty.Value{cty.NumberIntVal(0), cty.NumberIntVal(2), cty.NumberIntVal(4)}),
		"plain": cty.StringVal("costs $5 and 100%"), "list": cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.StringVal("a")})})
	if !got.RawEquals(want) {
		t.Errorf("output = %#v, want %#v", got, want)
	}
	_, ds := Parse(context.Background(), files("main.tf.json", `{"locals": {"l": "${range(100)}",
 "f": "${length([for a in local.l: [for b in local.l: [for c in local.l: [for d in local.l: d]]]])}"},
 "resource": {"time_static": {"t": {"count": "${local.f}"}}}}`), Options{})
	if d := limitDiag(ds); d == nil || !strings.Contains(d.Detail, "for expression: exceeds the elements limit") || !strings.HasPrefix(d.Range.String(), "main.tf.json:2:") {
		t.Errorf("nested fors in JSON: %v, want the elements limit at main.tf.json:2", ds)
	}
}

// TestStaticValues: the values that may reference nothing keep their meaning: a for
// expression works in a variable default, a function call is not allowed there.
func TestStaticValues(t *testing.T) {
	st := mustParse(t, files("main.tf", "variable \"v\" {\n  default = [for s in [\"a\", \"b\"] : \"${s}!\"]\n}\n"), Options{})
	if got, want := st.Parameters[0].Value, cty.TupleVal([]cty.Value{cty.StringVal("a!"), cty.StringVal("b!")}); !got.RawEquals(want) {
		t.Errorf("default = %#v, want %#v", got, want)
	}
	_, ds := Parse(context.Background(), files("main.tf", "variable \"v\" {\n  default = upper(\"a\")\n}\n"), Options{})
	if !ds.HasErrors() || ds[0].Summary != "Function calls not allowed" {
		t.Errorf("a call in a default: %v, want function calls not allowed", ds)
	}
}
