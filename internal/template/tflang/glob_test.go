package tflang

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/diag"
)

// globTree is a configuration directory "cfg" with hidden files, names with glob
// characters, a non-ASCII name and a file beside it, for fileset.
var globTree = []string{
	"cfg/main.tf", "cfg/b", "cfg/top.txt", "cfg/.dot", "cfg/ab", "cfg/abb", "cfg/a{b", "cfg/a]b",
	"cfg/a/x.txt", "cfg/a/b/c/b", "cfg/a/b/c/d.txt", "cfg/.hid/z", "cfg/.hid/x/y.txt",
	"cfg/sub/b", "cfg/sub/é.txt", "cfg/sub/x.tf", "outside.txt",
}

// globCases are fileset patterns from a directory (relative to "cfg") and terraform 1.11's
// answer, "ERR" for an error.
var globCases = []struct{ dir, pattern, want string }{
	{".", `**`, `[".dot",".hid/x/y.txt",".hid/z","a/b/c/b","a/b/c/d.txt","a/x.txt","a]b","ab","abb","a{b","b","main.tf","sub/b","sub/x.tf","sub/é.txt","top.txt"]`},
	{".", `**/b`, `["a/b/c/b","b","sub/b"]`},
	{".", `**/**/b`, `["a/b/c/b","sub/b"]`},
	{".", `**/**/**/b`, `["a/b/c/b","sub/b"]`},
	{".", `*/**/b`, `["a/b/c/b","sub/b"]`},
	{".", `**/**`, `[".dot",".hid/x/y.txt",".hid/z","a/b/c/b","a/b/c/d.txt","a/x.txt","a]b","ab","abb","a{b","b","main.tf","sub/b","sub/x.tf","sub/é.txt","top.txt"]`},
	{".", `*`, `[".dot","a]b","ab","abb","a{b","b","main.tf","top.txt"]`},
	{".", `.*`, `[".dot"]`},
	{".", `a/*`, `["a/x.txt"]`},
	{".", `a/**`, `["a/b/c/b","a/b/c/d.txt","a/x.txt"]`},
	{".", `**/*.txt`, `[".hid/x/y.txt","a/b/c/d.txt","a/x.txt","sub/é.txt","top.txt"]`},
	{".", `**/*.{txt,tf}`, `[".hid/x/y.txt","a/b/c/d.txt","a/x.txt","main.tf","sub/x.tf","sub/é.txt","top.txt"]`},
	{".", `{a,sub}/**`, `["a/b/c/b","a/b/c/d.txt","a/x.txt","sub/b","sub/x.tf","sub/é.txt"]`},
	{".", `{*,x}*/b`, `["sub/b"]`},
	{".", `{a/b,sub}/**`, `"ERR"`},
	{".", `a*`, `["a]b","ab","abb","a{b"]`},
	{".", `a?b`, `["a]b","abb","a{b"]`},
	{".", `[a-b]*`, `["a]b","ab","abb","a{b","b"]`},
	{".", `[^a]*`, `[".dot","b","main.tf","top.txt"]`},
	{".", `a[!b]*`, `["ab","abb"]`},
	{".", `a[\]]b`, `["a]b"]`},
	{".", `a{,b}`, `["ab"]`},
	{".", `a*{,b}`, `["a]b","ab","abb","a{b"]`},
	{".", `ab*{,b}`, `["abb"]`},
	{".", `a\{b`, `["a{b"]`},
	{".", `a{b`, `"ERR"`},
	{".", `[`, `"ERR"`},
	{".", `*/b`, `["sub/b"]`},
	{".", `.hid/**`, `[".hid/x/y.txt",".hid/z"]`},
	{".", `**/.*`, `[".dot"]`},
	{".", `[z-a]*`, `[]`},
	{".", `../*.txt`, `["../outside.txt"]`},
	{".", `../cfg/a/*`, `["../cfg/a/x.txt"]`},
	{".", `sub/?.txt`, `["sub/é.txt"]`},
	{".", `**/c/*`, `["a/b/c/b","a/b/c/d.txt"]`},
	{".", `a/**/d.txt`, `["a/b/c/d.txt"]`},
	{".", `{b,top.txt}`, `["b","top.txt"]`},
	{".", ``, `[]`},
	{".", `a/../b`, `["b"]`},
	{".", `*/../top.txt`, `["top.txt"]`},
	{".", `*/*/*/*`, `["a/b/c/b","a/b/c/d.txt"]`},
	{"sub", `*`, `["b","x.tf","é.txt"]`},
	{"sub", `../*.txt`, `["../top.txt"]`},
	{"./sub/", `**`, `["b","x.tf","é.txt"]`},
	{"..", `cfg/a/*`, `["cfg/a/x.txt"]`},
	{"..", `*.txt`, `["outside.txt"]`},
	{"a/b", `**`, `["c/b","c/d.txt"]`},
	{"sub/..", `*.tf`, `["main.tf"]`},
	{"nope", `*`, `[]`},
}

func globExprs() []string {
	exprs := make([]string, len(globCases))
	for i, c := range globCases {
		lit := strconv.Quote(c.pattern)
		lit = strings.ReplaceAll(strings.ReplaceAll(lit, "${", "$${"), "%{", "%%{")
		exprs[i] = `try(fileset(` + strconv.Quote(c.dir) + `, ` + lit + `), "ERR")`
	}
	return exprs
}

// TestFilesetGlobs: fileset's matches are terraform's (doublestar v1's Glob), compared with
// the answers written here and with terraform console on the same tree.
func TestFilesetGlobs(t *testing.T) {
	exprs := globExprs()
	src := ""
	for i, x := range exprs {
		src += "output \"o" + strconv.Itoa(i) + "\" {\n  value = jsonencode(" + x + ")\n}\n"
	}
	fs := map[string][]byte{}
	for _, name := range globTree {
		fs[name] = []byte("x")
	}
	fs["cfg/main.tf"] = []byte(src)
	st := mustParse(t, fs, Options{Dir: "cfg"})
	got := make([]string, len(exprs))
	for _, o := range st.Outputs {
		i, _ := strconv.Atoi(strings.TrimPrefix(o.Name, "o"))
		got[i] = eval(t, o.Value, scope{}).AsString()
	}
	for i, c := range globCases {
		if got[i] != c.want {
			t.Errorf("fileset(%q, %q) = %s, want %s", c.dir, c.pattern, got[i], c.want)
		}
	}
	tf := globConsole(t, exprs)
	for i, c := range globCases {
		if got[i] != tf[i] {
			t.Errorf("fileset(%q, %q) = %s in cairn, %s in terraform", c.dir, c.pattern, got[i], tf[i])
		}
	}
}

// globConsole evaluates exprs with terraform console in cfg of globTree, without the files
// console itself writes (its state and lock), or skips when there is no terraform.
func globConsole(t *testing.T, exprs []string) []string {
	t.Helper()
	bin := terraformBin(t)
	dir := t.TempDir()
	tree := map[string]string{}
	for _, name := range globTree {
		tree[name] = "x"
		if strings.HasSuffix(name, ".tf") {
			tree[name] = "" // a configuration for console
		}
	}
	writeTree(t, dir, tree)
	lines := terraformConsole(t, bin, filepath.Join(dir, "cfg"), exprs)
	for i, l := range lines {
		var names []string
		if json.Unmarshal([]byte(l), &names) != nil {
			continue // "ERR"
		}
		kept := []string{}
		for _, n := range names {
			if !strings.HasPrefix(n, "terraform.tfstate") && !strings.HasPrefix(n, ".terraform.tfstate") {
				kept = append(kept, n)
			}
		}
		b, _ := json.Marshal(kept)
		lines[i] = string(b)
	}
	return lines
}

// TestGlobRegexpBounded: a pattern of many alternatives is refused rather than expanded
// without end.
func TestGlobRegexpBounded(t *testing.T) {
	if _, err := globRegexp(strings.Repeat("{a,b,*}", 40), nil); err == nil {
		t.Error("40 groups of alternatives compiled, want them refused")
	}
	if _, err := globRegexp(strings.Repeat("*a", 5000), nil); err == nil {
		t.Error("5,000 stars compiled, want them refused")
	}
	// the length limit the documentation gives: 16 KiB
	if _, err := globRegexp(strings.Repeat("a", 16<<10), nil); err != nil {
		t.Errorf("a pattern of 16 KiB: %v, want it compiled", err)
	}
	if _, err := globRegexp(strings.Repeat("a", 16<<10+1), nil); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a pattern over 16 KiB: %v, want it refused as too long", err)
	}
}

// repeatedAlternatives is a pattern of n components, each of 11 groups "{a,b}": one
// component's expression is ~14 KB, and the same one is repeated in every component.
func repeatedAlternatives(n int) string {
	comps := make([]string, n)
	for i := range comps {
		comps[i] = strings.Repeat("{a,b}", 11)
	}
	return strings.Join(comps, "/")
}

// TestGlobRegexpRepeatedComponents: a component repeated in a pattern counts each time it is
// used. Counted once (memoized), 292 of them made a 4 MB expression: 2.4 s and 800 MB to
// compile, per call.
func TestGlobRegexpRepeatedComponents(t *testing.T) {
	p := repeatedAlternatives(292)
	var err error
	var took time.Duration
	alloc := allocsOf(func() { took = within(t, 30*time.Second, "globRegexp", func() { _, err = globRegexp(p, nil) }) })
	if err == nil || !strings.Contains(err.Error(), "too many alternatives") {
		t.Errorf("globRegexp of 292 repeated components: %v, want it refused", err)
	}
	if alloc > 16<<20 || took > time.Second {
		t.Errorf("refusing it allocated %d MB in %v, want under 16 MB and a second", alloc>>20, took)
	}
	if _, err := globRegexp(repeatedAlternatives(3), nil); err != nil {
		t.Errorf("3 components of 11 alternatives: %v, want them compiled", err)
	}
}

// TestFilesetRepeatedPatternInLoop: fileset called 200 times in a loop with a pattern it
// refuses, and with the largest of these it accepts (its compilation charged to the budget),
// takes under 2 s in all: the compiled pattern is kept per pattern.
func TestFilesetRepeatedPatternInLoop(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{repeatedAlternatives(292), "too many alternatives"},
		{repeatedAlternatives(4), ""},
	} {
		fs := files("main.tf", `locals { p = "`+tc.pattern+`" }
output "o" { value = [for i in range(200) : fileset("g", local.p)] }`, "g/x", "x")
		var ds diag.Diagnostics
		took := within(t, 20*time.Second, "fileset", func() { ds = evalOutput(t, context.Background(), fs) })
		if tc.want == "" && ds.HasErrors() || tc.want != "" && (!ds.HasErrors() || !strings.Contains(ds.Err().Error(), tc.want)) {
			t.Errorf("200 calls of fileset: %.300v, want %q", ds.Err(), tc.want)
		}
		if took > 2*time.Second {
			t.Errorf("200 calls of fileset took %v, want the pattern compiled once", took)
		}
	}
}
