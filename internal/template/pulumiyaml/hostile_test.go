package pulumiyaml

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
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
