package cfn

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// maxAlloc is what a refused hostile template may make Parse allocate: far below what
// would hurt a 512 MB server (on main, the billion laughs passed 2 GiB and the 9,999-level
// list 472 MB).
const maxAlloc = 64 << 20

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// billionLaughs is the classic alias bomb (410 bytes here, the report's had a longer
// header): nine levels of nine aliases each, 9^9 (387 million) strings once expanded.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("Resources:\n  R: {Type: AWS::SNS::Topic}\nMetadata:\n")
	b.WriteString("  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for c := 'b'; c <= 'i'; c++ {
		p := string(c - 1)
		fmt.Fprintf(&b, "  %c: &%c [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", c, c, p, p, p, p, p, p, p, p, p)
	}
	return b.String()
}

// mergeBomb does the same with merge keys: every level is nine maps merging the level below.
func mergeBomb() string {
	var b strings.Builder
	b.WriteString("Resources:\n  R: {Type: AWS::SNS::Topic}\nMetadata:\n")
	b.WriteString("  l0: &l0 {a: lol, b: lol, c: lol, d: lol, e: lol, f: lol, g: lol, h: lol, i: lol}\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{<<: *l%d}", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func nestedList(depth int) string {
	return "Resources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: " +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
}

func nestedJSON(depth int) string {
	return `{"Resources": {"R": {"Type": "AWS::SNS::Topic", "Properties": {"P": ` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}}}}"
}

// TestHostileTemplates: every template that used to exhaust the server's memory or stack is
// refused with one diagnostic that names the limit and says where, and Parse allocates
// little to say so.
func TestHostileTemplates(t *testing.T) {
	cases := map[string]struct {
		reason, src string
		file        string
		want        diag.Range // Filename is the case's file
		wantMsg     []string
	}{
		"BillionLaughs": {reason: "Nine levels of nine aliases expand to 387 million nodes; counting them takes a few hundred.",
			src: billionLaughs(), file: "laughs.yaml", want: rng("", 9, 13), // the alias whose expansion passes the limit: the second *e of f
			wantMsg: []string{"YAML aliases: exceeds the alias-nodes limit of this server (100000)", "--max-alias-nodes"}},
		"MergeKeyBomb": {reason: "Merge keys expand as aliases do.",
			src: mergeBomb(), file: "merge.yaml", want: rng("", 8, 78),
			wantMsg: []string{"exceeds the alias-nodes limit", "--max-alias-nodes"}},
		"RecursiveAlias": {reason: "An alias inside the node it names would expand forever.",
			src: "Resources:\n  R: {Type: AWS::SNS::Topic}\nMetadata:\n  loop: &loop [a, *loop]\n", file: "loop.yaml", want: rng("", 4, 19),
			wantMsg: []string{"recursive alias"}},
		"RecursiveMergeKey": {reason: "A map merging itself.",
			src: "Resources:\n  R: {Type: AWS::SNS::Topic}\nMetadata:\n  m: &m {a: 1, <<: *m}\n", file: "merge-loop.yaml", want: rng("", 4, 20),
			wantMsg: []string{"recursive alias"}},
		"NestedFlowList": {reason: "9,999 nested lists: refused by a scan of the brackets before yaml.v3 parses (it recurses up to 10,000 levels).",
			src: nestedList(9999), file: "deep.yaml", want: rng("", 5, 210), // the 201st bracket
			wantMsg: []string{"the template's nesting: exceeds the depth limit of this server (200)", "--max-depth"}},
		"NestedJSONArray": {reason: "100,000 nested arrays are refused by a scan of the brackets, before decoding.",
			src: nestedJSON(100_000), file: "deep.json", want: rng("", 1, 265), // the 201st bracket
			wantMsg: []string{"the template's nesting: exceeds the depth limit of this server (200)", "--max-depth"}},
		"HugeFlowList": {reason: "10 MB of [a,a,...] would make yaml.v3 build 5 million nodes (1.2 GB): refused unparsed.",
			src: "Resources: [" + strings.Repeat("a,", 5<<20) + "a]\n", file: "wide.yaml", want: rng("", 1, 1),
			wantMsg: []string{"the template's YAML nodes: exceeds the alias-nodes limit of this server (100000)", "--max-alias-nodes"}},
		"AliasesTooDeep": {reason: "Aliases can build nesting the text does not show; the depth counts through them.",
			src: deepAliases(300), file: "alias-deep.yaml", want: rng("", 103, 17), // l100: {k: *l99}: the alias whose expansion passes 200 levels
			wantMsg: []string{"exceeds the depth limit"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st *template.Stack
			var diags diag.Diagnostics
			n := allocated(func() {
				Detect([]byte(tc.src)) // the engine detects the dialect first
				st, diags = Parse(tc.file, []byte(tc.src), opts)
			})
			if st != nil || len(diags) != 1 {
				t.Fatalf("%s\nParse: want no stack and one diagnostic, got %v and %d:\n%v", tc.reason, st != nil, len(diags), diags.Err())
			}
			d := diags[0]
			want := tc.want
			want.Filename = tc.file
			if d.Range != want || d.Severity != diag.Error {
				t.Errorf("%s\nParse: diagnostic at %v (severity %v), want an error at %v", tc.reason, d.Range, d.Severity, want)
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(d.Summary, m) {
					t.Errorf("%s\nParse: diagnostic %q does not say %q", tc.reason, d.Summary, m)
				}
			}
			t.Logf("Parse allocated %.2f MB: %s", float64(n)/(1<<20), diags[0].Summary)
			if n > maxAlloc {
				t.Errorf("%s\nParse allocated %d MB, want at most %d MB", tc.reason, n>>20, maxAlloc>>20)
			}
		})
	}
}

// deepAliases nests n maps, each level an alias of a map holding the level below.
func deepAliases(n int) string {
	var b strings.Builder
	b.WriteString("Resources:\n  R: {Type: AWS::SNS::Topic}\nMetadata:\n  l0: &l0 x\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d {k: *l%d}\n", i, i, i-1)
	}
	return b.String()
}

// TestDeepTemplateIsLinear: with the depth limit lifted, a 9,999-level list converts in
// memory linear in its depth (paths are built only for diagnostics), where main built a path
// string at every level (472 MB).
func TestDeepTemplateIsLinear(t *testing.T) {
	ctx, cancel := budget.With(context.Background(), budget.Limits{Depth: 20_000})
	defer cancel()
	o := opts
	o.Context = ctx
	src := []byte(nestedList(9999))
	var st *template.Stack
	var diags diag.Diagnostics
	n := allocated(func() { st, diags = Parse("deep.yaml", src, o) })
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if _, ds := st.Resource("R").Properties.Eval(ctxScope{unknownScope{}, ctx}); ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	// Evaluated in a scope whose context has the default budget, the same template is too deep.
	if _, ds := st.Resource("R").Properties.Eval(unknownScope{}); !ds.HasErrors() || !strings.Contains(ds.Err().Error(), "exceeds the depth limit") {
		t.Errorf("Eval under the default budget: %v, want the depth limit", ds.Err())
	}
	t.Logf("Parse allocated %.2f MB", float64(n)/(1<<20))
	if n > maxAlloc {
		t.Errorf("Parse allocated %d MB, want at most %d MB", n>>20, maxAlloc>>20)
	}
}

// ctxScope is a scope whose context is ctx.
type ctxScope struct {
	template.Scope
	ctx context.Context
}

func (s ctxScope) Context() context.Context { return s.ctx }

// TestEvaluationBudget: what an expression builds is charged to the request's budget, so a
// template cannot make a copy of a large value many times over or join a long text with
// itself until the server runs out of memory.
func TestEvaluationBudget(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	refs := strings.TrimSuffix(strings.Repeat("!Ref Big, ", 100), ", ")
	var mapping strings.Builder
	mapping.WriteString("[")
	for i := range 5000 {
		fmt.Fprintf(&mapping, "%d,", i)
	}
	mapping.WriteString("0]")
	copies := strings.TrimSuffix(strings.Repeat("!FindInMap [M, k, v], ", 50), ", ")
	manyOutputs := ""
	for i := range 30 {
		manyOutputs += fmt.Sprintf("  O%d: {Value: !FindInMap [M, k, v]}\n", i)
	}
	conds := "Conditions:\n"
	for i := range 150 {
		conds += fmt.Sprintf("  C%d: !Condition C%d\n", i, i+1)
	}
	conds += "  C150: !Equals [a, a]\n"
	cases := map[string]struct {
		reason, src string
		lim         budget.Limits
		params      map[string]string
		wantMsg     string
		want        diag.Range
	}{
		"JoinGrowsPastBytes": {reason: "100 copies of a 1 MB parameter are 100 MB: refused before the text is built.",
			src:    "Parameters:\n  Big: {Type: String}\nResources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: !Join ['', [" + refs + "]]\n",
			params: map[string]string{"Big": big}, wantMsg: "Fn::Join: exceeds the bytes limit of this server (67108864)", want: rng("t.yaml", 7, 10)},
		"SubGrowsPastBytes": {reason: "The same through Fn::Sub.",
			src:    "Parameters:\n  Big: {Type: String}\nResources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: !Sub '" + strings.Repeat("${Big}", 100) + "'\n",
			params: map[string]string{"Big": big}, wantMsg: "Fn::Sub: exceeds the bytes limit", want: rng("t.yaml", 7, 10)},
		"FindInMapCopies": {reason: "50 copies of a 5,000-element mapping pass a 100,000-element budget.",
			src: "Mappings:\n  M:\n    k:\n      v: " + mapping.String() + "\nResources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: [" + copies + "]\n",
			// The 20th copy passes the limit; it is blamed, not the mapping.
			lim: budget.Limits{Elements: 100_000}, wantMsg: "Fn::FindInMap: exceeds the elements limit of this server (100000)", want: rng("t.yaml", 9, 429)},
		"ManyOutputsCopyingAMapping": {reason: "Each output is under the limit; the check pass of them all is not.",
			src: "Mappings:\n  M:\n    k:\n      v: " + mapping.String() + "\nResources:\n  R:\n    Type: AWS::SNS::Topic\nOutputs:\n" + manyOutputs,
			lim: budget.Limits{Elements: 100_000}, wantMsg: "Fn::FindInMap: exceeds the elements limit of this server (100000)", want: rng("t.yaml", 28, 16)},
		"ConditionChain": {reason: "151 conditions naming the next are nested 302 deep.",
			src: conds + "Resources:\n  R:\n    Type: AWS::SNS::Topic\n",
			// The chain's end is reported where the limit is reached.
			wantMsg: "exceeds the depth limit of this server (200)", want: rng("t.yaml", 102, 9)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := budget.With(context.Background(), tc.lim)
			defer cancel()
			o := opts
			o.Context, o.Parameters = ctx, tc.params
			var st *template.Stack
			var diags diag.Diagnostics
			n := allocated(func() { st, diags = Parse("t.yaml", []byte(tc.src), o) })
			if st != nil || len(diags) == 0 {
				t.Fatalf("%s\nParse: want no stack and a diagnostic, got %v and %v", tc.reason, st != nil, diags)
			}
			found, limits := false, 0
			for _, d := range diags {
				found = found || strings.Contains(d.Summary, tc.wantMsg) && d.Range == tc.want
				if strings.Contains(d.Summary, "the server's operator can change it") {
					limits++
				}
			}
			if limits != 1 {
				t.Errorf("%s\nParse: %d diagnostics name a limit, want 1:\n%v", tc.reason, limits, diags.Err())
			}
			if !found {
				t.Errorf("%s\nParse: want %q at %v, got:\n%v", tc.reason, tc.wantMsg, tc.want, diags.Err())
			}
			t.Logf("Parse allocated %.2f MB: %s", float64(n)/(1<<20), diags[0].Summary)
			if n > maxAlloc {
				t.Errorf("%s\nParse allocated %d MB, want at most %d MB", tc.reason, n>>20, maxAlloc>>20)
			}
		})
	}
}

// TestJSONParameterDepth: a ROS Json parameter is decoded with the template's depth limit.
func TestJSONParameterDepth(t *testing.T) {
	src := "ROSTemplateFormatVersion: '2015-09-01'\nParameters:\n  J: {Type: Json}\nResources:\n  R: {Type: 'ALIYUN::ROS::WaitConditionHandle'}\n"
	o := opts
	o.Parameters = map[string]string{"J": strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)}
	_, diags := Parse("ros.yaml", []byte(src), o)
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "parameter J: its JSON value exceeds the depth limit") {
		t.Errorf("Parse: want the Json parameter refused for its depth, got %v", diags.Err())
	}
}

// TestNodeBound: the bound nodeBound finds by scanning a text is never below the nodes
// yaml.v3 makes of it (FuzzParse checks it on every input too).
func TestNodeBound(t *testing.T) {
	srcs := []string{"a", "a: 1\nb: 2", "- - - a", "{a, b}", "{a}", "[a: 1, b: 2]", "? a", "? - a\n  - b\n: c",
		`{"a":1,"b":[1,2,{"c":null}]}`, "a: &x [1, 2]\nb: *x\nc: {<<: *x}", billionLaughs(), mergeBomb()}
	for _, f := range []string{"stack.yaml", "intrinsics.json", "intrinsics.yaml", "ros.json", "ros.yaml", "all-errors.yaml"} {
		srcs = append(srcs, string(readTestdata(t, f)))
	}
	for _, src := range srcs {
		if n, bound := yamlNodeCount(t, []byte(src)), budget.YAMLNodeBound([]byte(src)); n > bound {
			t.Errorf("budget.YAMLNodeBound(%q) = %d, but yaml.v3 makes %d nodes", src, bound, n)
		}
	}
}

// yamlNodeCount returns the nodes yaml.v3 makes of src (aliases not followed), or 0 when src
// is not YAML.
func yamlNodeCount(t testing.TB, src []byte) int64 {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil {
		return 0
	}
	var count func(*yaml.Node) int64
	count = func(y *yaml.Node) int64 {
		n := int64(1)
		for _, c := range y.Content {
			n += count(c)
		}
		return n
	}
	return count(&doc)
}

// TestNumbersInRange: a number whose decimal form would take math/big seconds to hours and
// gigabytes to write (1e-99999, 1e999999999) is refused where it is read: in the template and
// in a ROS Number or Json parameter.
func TestNumbersInRange(t *testing.T) {
	for _, num := range []string{"1e-99999999", "1e-400", "-1e-400"} { // 1e400 is a string to yaml.v3
		src := "Resources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: !Join ['', [" + num + "]]\n"
		_, diags := Parse("t.yaml", []byte(src), opts)
		if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "out of range") {
			t.Errorf("Parse of %s: %v, want out of range", num, diags.Err())
		}
	}
	ros := "ROSTemplateFormatVersion: '2015-09-01'\nParameters:\n  N: {Type: Number}\n  J: {Type: Json}\nResources:\n  R: {Type: 'ALIYUN::ROS::WaitConditionHandle'}\n"
	o := opts
	o.Parameters = map[string]string{"N": "1e-99999999", "J": `{"a": 1e-99999999}`}
	_, diags := Parse("ros.yaml", []byte(ros), o)
	for _, want := range []string{"parameter N: must be a number of at most", "parameter J: must be JSON"} {
		if !strings.Contains(fmt.Sprint(diags.Err()), want) {
			t.Errorf("Parse with out-of-range parameters: %v, want %q", diags.Err(), want)
		}
	}
	if _, diags := Parse("t.yaml", []byte("Resources:\n  R:\n    Type: AWS::SNS::Topic\n    Properties:\n      P: [1e300, 1e-300, 0, 0x1F]\n"), opts); diags.HasErrors() {
		t.Errorf("Parse of numbers in range: %v", diags.Err())
	}
}
