package tflang

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// The functions that parse or walk at evaluation time (templatefile, templatestring,
// fileset) and the checks made while parsing (provider function calls, unknown function
// names) under the same guard and budget as the configuration itself.

// within runs f, failing the test when it takes longer than d (f is left running: the
// package's tests end soon after).
func within(t *testing.T, d time.Duration, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
		return d
	}
}

// evalOutput parses fs and evaluates its first output with ctx's budget.
func evalOutput(t *testing.T, ctx context.Context, fs map[string][]byte) diag.Diagnostics {
	t.Helper()
	st := mustParse(t, fs, Options{})
	_, ds := st.Outputs[0].Value.Eval(ctxScope{ctx})
	return ds
}

// TestTemplateFileNestingRefused: a template file of 50,000 nested interpolations is refused
// by the nesting limit; parsed unchecked, it overflowed the Go stack (a fatal error that
// took the server down).
func TestTemplateFileNestingRefused(t *testing.T) {
	n := 50000
	fs := files("main.tf", `output "o" { value = templatefile("deep.tpl", {}) }`,
		"deep.tpl", strings.Repeat(`${"`, n)+"x"+strings.Repeat(`"}`, n))
	var ds diag.Diagnostics
	within(t, 20*time.Second, "templatefile", func() { ds = evalOutput(t, context.Background(), fs) })
	if d := limitDiag(ds); d == nil || !strings.Contains(d.Detail, "depth") || d.Range.Filename != "main.tf" {
		t.Fatalf("templatefile of deep nesting: %v, want the depth limit at the call in main.tf", ds)
	}
}

// TestTemplateStringNestingRefused: the same nesting built as a string and rendered with
// templatestring.
func TestTemplateStringNestingRefused(t *testing.T) {
	fs := files("main.tf", `locals {
  a = join("", [for i in range(1000) : "$${\""])
  b = join("", [for i in range(1000) : "\"}"])
  s = join("", [for i in range(60) : local.a])
  e = join("", [for i in range(60) : local.b])
  t = "${local.s}x${local.e}"
}
output "o" { value = templatestring(local.t, {}) }`)
	var ds diag.Diagnostics
	within(t, 20*time.Second, "templatestring", func() { ds = evalOutput(t, context.Background(), fs) })
	if d := limitDiag(ds); d == nil || !strings.Contains(d.Detail, "depth") {
		t.Fatalf("templatestring of deep nesting: %v, want the depth limit", ds)
	}
}

// TestTemplateStringMetered: the for directives of a templatestring template are metered as
// the configuration's: two nested loops over 1,000 elements pass a limit of 10,000.
func TestTemplateStringMetered(t *testing.T) {
	fs := files("main.tf", `locals {
  t = "%%{ for a in l }%%{ for b in l }x%%{ endfor }%%{ endfor }"
}
output "o" { value = templatestring(local.t, { l = range(1000) }) }`)
	ds := evalOutput(t, budget.WithLimits(context.Background(), budget.Limits{Elements: 10_000}), fs)
	if d := limitDiag(ds); d == nil || !strings.Contains(d.Detail, "elements") {
		t.Fatalf("templatestring iterating 10⁶ times: %v, want the elements limit", ds)
	}
}

// TestTemplateStringTerraformMessages: what templatestring refuses, in terraform's words.
func TestTemplateStringTerraformMessages(t *testing.T) {
	for expr, want := range map[string]string{
		`templatestring("x", {})`:                   "does not support providing a literal template",
		`templatestring("${local.t}", {})`:          "write the reference expression directly",
		`templatestring("a${local.t}", {})`:         "consider using a plain template string expression",
		`templatestring(upper(local.t), {})`:        "must be a direct reference to a single string",
		`templatestring(local.n, {})`:               "invalid template value: a string is required",
		`templatestring(local.bad, {})`:             "invalid template: <templatestring argument>:1,",
		`templatestring(local.t, { "a b" = 1 })`:    `invalid template variable name "a b"`,
		`templatestring(local.t, {})`:               `vars map does not contain key "name"`,
		`templatestring(local.f, { name = "x" })`:   "cannot use filesystem access functions like file in templatestring templates",
		`templatestring(local.nosuch, { x = 1 })`:   `There is no function named "uper". Did you mean "upper"?`,
		`templatestring(local.m["k"], { x = "a" })`: "",
	} {
		fs := files("main.tf", `locals {
  t = "hi $${name}"
  n = 1
  bad = "$${"
  f = "$${file(\"a.txt\")}"
  nosuch = "$${uper(x)}"
  m = { k = "<$${x}>" }
}
output "o" { value = `+expr+` }`, "a.txt", "a")
		_, ds := mustParse(t, fs, Options{}).Outputs[0].Value.Eval(scope{})
		switch {
		case want == "" && ds.HasErrors():
			t.Errorf("%s: %v", expr, ds.Err())
		case want != "" && (!ds.HasErrors() || !strings.Contains(ds.Err().Error(), want)):
			t.Errorf("%s: %v, want an error containing %q", expr, ds.Err(), want)
		}
	}
}

// TestTemplateFileRendersOnce: templatefile renders its template once per call (it rendered
// it three times: for its type, in the budget's wrapper and in the call), so a template whose
// one rendering fits the budget passes.
func TestTemplateFileRendersOnce(t *testing.T) {
	fs := files("main.tf", `output "o" { value = length(templatefile("loop.tpl", {})) }`,
		"loop.tpl", `%{ for i in range(1000) }x%{ endfor }`)
	// one rendering: range's 1,000 elements and the for's 8,000
	ds := evalOutput(t, budget.WithLimits(context.Background(), budget.Limits{Elements: 12_000}), fs)
	if ds.HasErrors() {
		t.Fatalf("one rendering within the budget: %v", ds.Err())
	}
}

// TestTemplateFileNullResult: a template whose result is null is refused, as terraform does.
func TestTemplateFileNullResult(t *testing.T) {
	fs := files("main.tf", `output "o" { value = templatefile("null.tpl", { x = null }) }`, "null.tpl", `${x}`)
	_, ds := mustParse(t, fs, Options{}).Outputs[0].Value.Eval(scope{})
	if !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "Template result is null") {
		t.Fatalf("templatefile of null: %v, want terraform's null result error", ds.Err())
	}
}

// TestFilesetDeepTreeLinear: fileset's pattern is matched in linear time: eight "**" over a
// file 60 directories down took 90 s (doublestar's backtracking), ignoring the time limit.
func TestFilesetDeepTreeLinear(t *testing.T) {
	deep := strings.Repeat("a/", 60) + "x"
	fs := files("main.tf", `output "o" { value = fileset(".", "**/**/**/**/**/**/**/**/b") }`, deep, "1")
	var ds diag.Diagnostics
	took := within(t, 10*time.Second, "fileset", func() { ds = evalOutput(t, context.Background(), fs) })
	if ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	t.Logf("fileset over a 60-deep tree with eight **: %v", took)
}

// TestProviderFunctionScanGuarded: provider function calls are found in the files parsed
// under the guard; a comment naming one made the whole file parse again without it (a
// 480 KB template of "$${" escapes: 0.2 s guarded, 19 s not).
func TestProviderFunctionScanGuarded(t *testing.T) {
	src := "locals {\n  x = \"" + strings.Repeat("a$${b}", 80000) + "\"\n}\n"
	var plain, named time.Duration
	plain = within(t, 60*time.Second, "parse", func() { _, _ = Parse(context.Background(), files("main.tf", src), Options{}) })
	named = within(t, 60*time.Second, "parse with provider::", func() {
		_, _ = Parse(context.Background(), files("main.tf", src+"# provider::x::\n"), Options{})
	})
	t.Logf("parse: %v; with a comment naming provider::x:: %v", plain, named)
	if named > 5*plain+2*time.Second {
		t.Errorf("a comment naming provider:: made the parse %v instead of %v", named, plain)
	}
}

// TestProviderFunctionCallsListed: every provider function call of the loaded modules is
// listed, with its place, and only those: a file of no module is not read.
func TestProviderFunctionCallsListed(t *testing.T) {
	fs := files(
		"main.tf", "module \"m\" {\n  source = \"./m\"\n}\noutput \"o\" { value = provider::time::rfc3339_parse(\"2024-01-01T00:00:00Z\") }\n",
		"m/main.tf", "output \"o\" { value = \"${provider::tls::x(1)}\" }\n",
		"unused/main.tf", "output \"o\" { value = provider::aws::arn_parse(\"x\") }\n",
	)
	st := mustParse(t, fs, Options{Validate: true})
	var calls []string
	for _, c := range st.Functions.Calls {
		calls = append(calls, c.Name+"@"+c.Range.String())
	}
	want := "provider::tls::x@m/main.tf:1:25 provider::time::rfc3339_parse@main.tf:4:22" // by file name
	if got := strings.Join(calls, " "); got != want || strings.Join(st.Functions.Names, ",") != "time,tls" {
		t.Errorf("calls %q, names %v; want %q and time,tls", got, st.Functions.Names, want)
	}
}

// TestUnknownFunctionSuggestionCheap: the "Did you mean" suggestion of an unknown function
// costs nothing for a long name (1,000 calls of 2,000-character names took 4.8 s).
func TestUnknownFunctionSuggestionCheap(t *testing.T) {
	name := strings.Repeat("q", 2000)
	var b strings.Builder
	b.WriteString("locals {\n")
	for i := range 1000 {
		b.WriteString("  x" + strings.Repeat("y", i) + " = " + name + "()\n")
	}
	b.WriteString("}\n")
	var ds diag.Diagnostics
	took := within(t, 30*time.Second, "static check", func() {
		_, ds = Parse(context.Background(), files("main.tf", b.String()), Options{})
	})
	t.Logf("1,000 unknown calls of 2,000-character names: %v", took)
	if took > 2*time.Second || len(ds) != 1000 || !strings.Contains(ds[0].Detail, "There is no function named") {
		t.Errorf("%v and %d diagnostics (%v), want 1,000 in well under 2 s", took, len(ds), ds[0])
	}
	_, ds = Parse(context.Background(), files("main.tf", "locals {\n  x = uper(\"a\")\n}\n"), Options{})
	if !strings.Contains(ds.Err().Error(), `Did you mean "upper"?`) {
		t.Errorf("a misspelt name: %v, want the suggestion of upper", ds.Err())
	}
}

// TestTemplateUnknownFunctionCheap: in a template, unknown functions of long names are
// reported before rendering, not each weighed against every function's name by hcl (500
// calls of 4,000-character names: 500 × 490 names compared).
func TestTemplateUnknownFunctionCheap(t *testing.T) {
	var tpl strings.Builder
	for i := range 500 {
		tpl.WriteString("${" + strings.Repeat("q", 4000) + strings.Repeat("z", i%7) + "()}\n")
	}
	fs := files("main.tf", `output "o" { value = templatefile("t.tpl", {}) }`, "t.tpl", tpl.String())
	var ds diag.Diagnostics
	took := within(t, 60*time.Second, "templatefile", func() { ds = evalOutput(t, context.Background(), fs) })
	if !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "There is no function named") || took > 2*time.Second {
		t.Errorf("%.200v in %v; want the unknown functions reported at once", ds.Err(), took)
	}
}

// TestPathexpandHome: pathexpand does not expand "~" to the server's home directory.
func TestPathexpandHome(t *testing.T) {
	for expr, want := range map[string]string{
		`pathexpand("~/x")`:     `cannot expand "~/x" on a cairn server`,
		`core::pathexpand("~")`: `cannot expand "~" on a cairn server`,
		`pathexpand("~bob/x")`:  "cannot expand user-specific home dir",
		`pathexpand("/etc/x")`:  "",
		`pathexpand("a/~/b")`:   "",
	} {
		st := mustParse(t, files("main.tf", "output \"o\" {\n  value = "+expr+"\n}\n"), Options{})
		v, ds := st.Outputs[0].Value.Eval(scope{})
		switch {
		case want == "" && (ds.HasErrors() || !strings.HasPrefix(expr, "pathexpand(\""+v.AsString())):
			t.Errorf("%s = %#v %v, want the path unchanged", expr, v, ds.Err())
		case want != "" && (!ds.HasErrors() || !strings.Contains(ds.Err().Error(), want)):
			t.Errorf("%s = %#v %v, want an error containing %q", expr, v, ds.Err(), want)
		}
	}
}

var _ template.Scope = ctxScope{}

// TestTemplateFileParsedOnce: a template file called in a loop is parsed, and its tokens
// charged, once: 200 calls of a template of 4,000 tokens stay within the default limits.
func TestTemplateFileParsedOnce(t *testing.T) {
	fs := files("main.tf", `output "o" { value = length(join("", [for i in range(200) : templatefile("t.tpl", { x = i })])) }`,
		"t.tpl", strings.Repeat("${x} ", 1000))
	ds := evalOutput(t, context.Background(), fs)
	if ds.HasErrors() {
		t.Fatalf("200 renderings of one template: %v", ds.Err())
	}
}
