package pulumiyaml

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/template"
)

// NaN and infinities are YAML numbers no value can hold: refused or kept as text, never a
// panic (cty's NumberFloatVal panics on NaN).
func TestNaNAndInfinities(t *testing.T) {
	for name, c := range map[string]struct{ program, stack string }{
		"literal":      {"outputs:\n  o: .nan\n  i: -.inf\n", ""},
		"select index": {"outputs:\n  o: {fn::select: [.nan, [1]]}\n", ""},
		"stack value":  {"outputs:\n  o: ${x}\n", "config:\n  p:x: .nan\n"},
		"undeclared":   {"outputs:\n  o: ${x}\n", "config:\n  p:x: NaN\n"},
		"declared":     {"config:\n  x: {type: number}\noutputs:\n  o: ${x}\n", "config:\n  p:x: nan\n"},
	} {
		t.Run(name, func(t *testing.T) {
			fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + c.program}
			if c.stack != "" {
				fs["Pulumi.dev.yaml"] = c.stack
			}
			st, ds := Parse(context.Background(), fs, "dev", nil)
			if ds.HasErrors() || st == nil {
				return
			}
			for _, o := range st.Outputs {
				o.Value.Eval(scope{})
			}
		})
	}
}

// A secret config value that does not fit its declared type is refused without quoting it.
func TestSecretConfigErrorsDoNotQuoteTheValue(t *testing.T) {
	fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\nconfig:\n  n: {type: integer, secret: true}\noutputs:\n  o: ${n}\n"}
	_, ds := Parse(context.Background(), fs, "dev", map[string]string{"n": "hunter2-TOPSECRET"})
	if !ds.HasErrors() {
		t.Fatal("a non-integer was accepted")
	}
	for _, d := range ds {
		if strings.Contains(d.Error(), "hunter2") {
			t.Errorf("the secret is in %q", d.Error())
		}
	}
}

// Nesting is bounded in block style too (the budget's depth, 200 by default), in the program
// and in a stack file, and refused quickly.
func TestBlockNestingIsBounded(t *testing.T) {
	deep := "\n    " + strings.Repeat("- ", 6000) + "x\n"
	for name, fs := range map[string]map[string]string{
		"program": {"Pulumi.yaml": "name: p\nruntime: yaml\noutputs:\n  o: " + deep},
		"stack":   {"Pulumi.yaml": "name: p\nruntime: yaml\n", "Pulumi.dev.yaml": "config:\n  p:x: " + deep},
	} {
		_, ds := Parse(context.Background(), fs, "dev", nil)
		if !ds.HasErrors() || !strings.Contains(ds.Error(), "nesting") {
			t.Errorf("%s: %v", name, ds)
		}
	}
}

// Each variable's dependencies are found once: a chain of variables each using the next twice
// parses in time linear in the chain, not exponential.
func TestVariableChainsParseQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: p\nruntime: yaml\nvariables:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "  v%d: ['${v%d}', '${v%d}']\n", i, i+1, i+1)
	}
	b.WriteString("  v40: x\noutputs:\n  o: ${v0[0]}\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		Parse(context.Background(), map[string]string{"Pulumi.yaml": b.String()}, "dev", nil)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // 2^40 walks never end; the memo takes milliseconds
		t.Fatal("a chain of 40 variables did not parse within a minute")
	}
}

// An invoke's dependencies are worked out once for the propertyDependencies: 200 invokes in a
// chain, each used by 600 properties, parse in well under a second (walked again for each
// property, they took 22 s, growing as the fourth power of the chain).
func TestInvokeChainsParseQuickly(t *testing.T) {
	const n = 200
	var b strings.Builder
	b.WriteString("name: p\nruntime: yaml\nvariables:\n  v0:\n    fn::invoke:\n      function: simple:index:get\n      arguments: {a: 1}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  v%d:\n    fn::invoke:\n      function: simple:index:get\n      arguments: {a: '${v%d}'}\n", i, i-1)
	}
	b.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  r%d:\n    type: simple:index:Resource\n    properties: {a: '${v%d}', b: '${v%d}', c: '${v%d}'}\n", i, n-1, n-1, n-1)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Parse(context.Background(), map[string]string{"Pulumi.yaml": b.String()}, "dev", nil)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // generous for a loaded machine; the fix takes milliseconds
		t.Fatal("a chain of 200 invokes did not parse within 20 s")
	}
}

// With main: naming a subdirectory, the program's files and pulumi.cwd are that directory's.
func TestMainDirectoryIsTheProgramsDirectory(t *testing.T) {
	fs := map[string]string{
		"Pulumi.yaml":   "name: p\nruntime: yaml\nmain: app/\n",
		"app/Main.yaml": "outputs:\n  file: {fn::readFile: ./x.txt}\n  cwd: ${pulumi.cwd}\n",
		"app/x.txt":     "in app", "x.txt": "at root",
	}
	st, ds := Parse(WithRootDirectory(context.Background(), "/p"), fs, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	got := map[string]string{}
	for _, o := range st.Outputs {
		v, ds := o.Value.Eval(scope{})
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		got[o.Name] = v.AsString()
	}
	if got["file"] != "in app" || got["cwd"] != "/p/app" {
		t.Errorf("outputs = %v, want app/x.txt's content and /p/app", got)
	}
}

// budgetScope is a scope without resources whose context carries a budget.
type budgetScope struct{ ctx context.Context }

func (budgetScope) Resource(string) (template.ResourceValue, bool) {
	return template.ResourceValue{}, false
}
func (s budgetScope) Context() context.Context { return s.ctx }

// doubling declares variables v0..vN, each a list of two of the one before: vN spelled out
// holds 2^N elements, though each link is small.
func doubling(n int) string {
	var b strings.Builder
	b.WriteString("variables:\n  v0: [abcdefgh]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  v%d: ['${v%d}', '${v%d}']\n", i, i-1, i-1)
	}
	return b.String()
}

// A program that builds a huge value from small parts is stopped by the evaluation budget
// (elements and bytes), with its file:line:col and path, wherever the value would be spelled
// out: fn::toJSON, fn::join, fn::split, interpolation, a file read, or the value handed to the
// engine. Without the budget each of these builds gigabytes.
func TestEvaluationIsBounded(t *testing.T) {
	small := budget.Limits{Elements: 10_000, Bytes: 1 << 20}
	commas := strings.Repeat(",", 200_000)
	for name, c := range map[string]struct {
		program string
		files   map[string]string
		lim     budget.Limits
		want    string // in the message
		path    string
		line    int
	}{
		"toJSON":        {doubling(40) + "outputs:\n  o:\n    fn::toJSON: ${v40}\n", nil, budget.Limits{}, "fn::tojson: exceeds the elements limit", "outputs.o.fn::toJSON", 47},
		"join":          {doubling(40) + "outputs:\n  o:\n    fn::join: ['-', '${v40}']\n", nil, budget.Limits{}, "fn::join: exceeds the", "outputs.o.fn::join", 47},
		"interpolation": {doubling(40) + "outputs:\n  o: x-${v40}\n", nil, budget.Limits{}, "the interpolation: exceeds the elements limit", "outputs.o", 46},
		"value":         {doubling(40) + "outputs:\n  o: ${v40}\n", nil, budget.Limits{}, "the value: exceeds the elements limit", "outputs.o", 46},
		"split":         {"outputs:\n  o:\n    fn::split: [',', {fn::readFile: ./big.txt}]\n", map[string]string{"big.txt": commas}, small, "fn::split: exceeds the elements limit", "outputs.o.fn::split", 5},
		"readFile":      {"outputs:\n  o:\n    fn::readFile: ./big.txt\n", map[string]string{"big.txt": strings.Repeat("x", 2<<20)}, small, "fn::readfile: exceeds the bytes limit", "outputs.o.fn::readFile", 5},
		"resource": {doubling(40) + "resources:\n  r:\n    type: x:y:Z\n    properties:\n      tags: ${v40}\n", nil, budget.Limits{},
			"the value: exceeds the elements limit", "resources.r.properties", 48},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := budget.With(context.Background(), c.lim)
			defer cancel()
			fs := map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + c.program}
			maps.Copy(fs, c.files)
			st, ds := Parse(ctx, fs, "dev", nil)
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			var x template.Expr
			if len(st.Outputs) > 0 {
				x = st.Outputs[0].Value
			} else {
				x = st.Resources[0].Properties
			}
			_, ds = x.Eval(budgetScope{ctx})
			if !ds.HasErrors() || !strings.Contains(ds.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, ds)
			}
			d := ds[0]
			if d.Path != c.path || d.Range.Filename != "Pulumi.yaml" || d.Range.Line != c.line || d.Range.Column == 0 {
				t.Errorf("at %s %s, want %s line %d", d.Range, d.Path, c.path, c.line)
			}
			if !strings.Contains(d.Error(), "--max-") {
				t.Errorf("the message does not name the server flag: %s", d.Error())
			}
		})
	}
}

// An evaluation whose request's time is up stops with the time limit, at the expression.
func TestEvaluationStopsWhenTimeIsUp(t *testing.T) {
	ctx, cancel := budget.With(context.Background(), budget.Limits{Time: time.Nanosecond})
	defer cancel()
	<-ctx.Done()
	st, ds := Parse(context.Background(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\noutputs:\n  o: [1, 2]\n"}, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	_, ds = st.Outputs[0].Value.Eval(budgetScope{ctx})
	if !ds.HasErrors() || !strings.Contains(ds.Error(), "exceeds the time limit") || ds[0].Path != "outputs.o" {
		t.Errorf("want the time limit at outputs.o, got %v", ds)
	}
}

// Values of a real size pass: the budget does not refuse what programs build.
func TestEvaluationBudgetAllowsRealPrograms(t *testing.T) {
	ctx, cancel := budget.With(context.Background(), budget.Limits{})
	defer cancel()
	st, ds := Parse(ctx, map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + doubling(12) +
		"  parts: {fn::split: [',', {fn::readFile: ./list.txt}]}\n" +
		"outputs:\n  a: {fn::toJSON: '${v12}'}\n  b: {fn::join: ['-', '${parts}']}\n  c: x-${v12}\n  d: ${parts}\n",
		"list.txt": strings.Repeat("item,", 50_000)}, "dev", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	for _, o := range st.Outputs {
		if _, ds := o.Value.Eval(budgetScope{ctx}); ds.HasErrors() {
			t.Errorf("%s: %v", o.Name, ds)
		}
	}
}

// Names cairn gives its own rows cannot be declared: an old copy awaiting deletion
// ("db~deposed-<id>") and an invoke's data resource ("fn::invoke@...") would otherwise take the
// place of a declared resource's row.
func TestReservedNamesAreRefused(t *testing.T) {
	for name, prog := range map[string]string{
		"name: deposed":    "resources:\n  db:\n    type: simple:Resource\n    name: db~deposed-123\n",
		"key: deposed":     "resources:\n  db~deposed-123:\n    type: simple:Resource\n",
		"name: invoke":     "resources:\n  db:\n    type: simple:Resource\n    name: fn::invoke@variables.v.fn::invoke\n",
		"variable: invoke": "variables:\n  fn::invoke@x: 1\n",
	} {
		_, ds := Parse(context.Background(), map[string]string{"Pulumi.yaml": "name: p\nruntime: yaml\n" + prog}, "dev", nil)
		if !ds.HasErrors() || !strings.Contains(ds.Error(), "reserved") {
			t.Errorf("%s: %v", name, ds)
		}
	}
}
