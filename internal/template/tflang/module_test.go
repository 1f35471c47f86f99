package tflang

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tfmodule"
	"github.com/cairn-dev/cairn/internal/value"
)

// moduleFixture reads testdata/modules/<root> as a client sends it: every file below the
// root by relative path, plus the directories outside it its local module calls name.
func moduleFixture(t *testing.T, root string) map[string][]byte {
	t.Helper()
	base := filepath.Join("testdata", "modules", filepath.FromSlash(root))
	out := map[string][]byte{}
	readTree := func(rel string) {
		dir := filepath.Join(base, filepath.FromSlash(rel))
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			r, err := filepath.Rel(base, p)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			out[filepath.ToSlash(r)] = b
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	readTree(".")
	for _, d := range localModuleDirs(func(rel string) map[string][]byte {
		if strings.HasPrefix(rel, "..") {
			readTree(rel)
		}
		return out
	}) {
		if strings.HasPrefix(d, "..") {
			readTree(d)
		}
	}
	return out
}

// moduleParse parses a fixture and fails the test on any error.
func moduleParse(t *testing.T, fs map[string][]byte) *template.Stack {
	t.Helper()
	st, ds := Parse(context.Background(), fs, Options{})
	if ds.HasErrors() {
		t.Fatalf("Parse: %v", ds.Err())
	}
	return st
}

// moduleScope is a template.Scope of resource outputs by instance address.
type moduleScope map[string]cty.Value

func (s moduleScope) Resource(name string) (template.ResourceValue, bool) {
	v, ok := s[name]
	if !ok {
		return template.UnknownResource, true
	}
	return template.ResourceValue{ID: cty.UnknownVal(cty.String), Outputs: v}, true
}

func (moduleScope) Context() context.Context { return context.Background() }

func moduleEval(t *testing.T, x template.Expr, s template.Scope) cty.Value {
	t.Helper()
	v, ds := x.Eval(s)
	if ds.HasErrors() {
		t.Fatalf("Eval: %v", ds.Err())
	}
	return v
}

func TestModuleAddresses(t *testing.T) {
	st := moduleParse(t, moduleFixture(t, "basic"))
	var got []string
	deps := map[string][]string{}
	for _, r := range st.Resources {
		got = append(got, r.Name)
		deps[r.Name] = r.DependsOn
	}
	want := []string{
		"time_static.root",
		"time_static.after",
		"module.net.time_static.t",
		`module.counted[0].time_static.t`,
		`module.counted[1].time_static.t`,
		`module.each["a"].time_static.t`,
		`module.each["b"].time_static.t`,
		"module.outer.module.inner.time_static.t",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resource addresses: -want +got:\n%s", diff)
	}
	wantDeps := map[string][]string{
		"time_static.root": {},
		// module.net.id is time_static.t.id; depends_on = [module.outer] is everything in it.
		"time_static.after": {"module.net.time_static.t", "module.outer.module.inner.time_static.t"},
		// var.trigger is the call's argument time_static.root.rfc3339.
		"module.net.time_static.t":        {"time_static.root"},
		`module.counted[0].time_static.t`: {},
		`module.counted[1].time_static.t`: {},
		`module.each["a"].time_static.t`:  {},
		`module.each["b"].time_static.t`:  {},
		// depends_on on module.outer reaches the module it calls.
		"module.outer.module.inner.time_static.t": {"time_static.root"},
	}
	if diff := cmp.Diff(wantDeps, deps); diff != "" {
		t.Errorf("DependsOn: -want +got:\n%s", diff)
	}
	if r := st.Resource("module.net.time_static.t"); r.Range.Filename != "modules/net/main.tf" || r.Range.Line != 14 {
		t.Errorf("Range = %+v, want modules/net/main.tf line 14", r.Range)
	}
}

func TestModuleValues(t *testing.T) {
	st := moduleParse(t, moduleFixture(t, "basic"))
	s := moduleScope{
		"time_static.root":         cty.ObjectVal(map[string]cty.Value{"rfc3339": cty.StringVal("2024-01-02T03:04:05Z")}),
		"module.net.time_static.t": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("net-id")}),
	}
	cases := map[string]struct {
		reason string
		expr   template.Expr
		want   cty.Value
	}{
		"ArgumentsInCaller": {
			reason: "A child's variables are its call's arguments, evaluated in the caller, converted to their types, with defaults.",
			expr:   st.Resource("module.net.time_static.t").Properties,
			want: cty.ObjectVal(map[string]cty.Value{"triggers": cty.ObjectVal(map[string]cty.Value{
				"name": cty.StringVal("p-net"), "trigger": cty.StringVal("2024-01-02T03:04:05Z"), "size": cty.NumberIntVal(3)})}),
		},
		"CountIndexInArguments": {
			reason: "count.index in a counted call's arguments is the instance's index.",
			expr:   st.Resource("module.counted[1].time_static.t").Properties,
			want: cty.ObjectVal(map[string]cty.Value{"triggers": cty.ObjectVal(map[string]cty.Value{
				"name": cty.StringVal("c1"), "trigger": cty.StringVal("x"), "size": cty.NumberIntVal(3)})}),
		},
		"PathModule": {
			reason: "path.module is the module's directory relative to the root.",
			expr:   st.Resource("module.outer.module.inner.time_static.t").Properties,
			want: cty.ObjectVal(map[string]cty.Value{"triggers": cty.ObjectVal(map[string]cty.Value{
				"label": cty.StringVal("deep"), "path": cty.StringVal("modules/inner")})}),
		},
	}
	outputs := map[string]cty.Value{
		"net_id": cty.StringVal("net-id"),
		"names":  cty.TupleVal([]cty.Value{cty.StringVal("c0"), cty.StringVal("c1")}),
		"each_a": cty.StringVal("a"),
		"deep":   cty.StringVal("deep"),
		"file":   cty.StringVal("from inner"),
	}
	for _, o := range st.Outputs {
		cases["Output"+o.Name] = struct {
			reason string
			expr   template.Expr
			want   cty.Value
		}{reason: "module.NAME.OUTPUT reads a child's output, through count, for_each and nesting.", expr: o.Value, want: outputs[o.Name]}
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := moduleEval(t, tc.expr, s)
			if !got.RawEquals(tc.want) {
				t.Errorf("%s\nEval = %#v, want %#v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestModuleProviders(t *testing.T) {
	st := moduleParse(t, moduleFixture(t, "providers"))
	got := map[string]string{}
	for _, r := range st.Resources {
		got[r.Name] = r.Provider
	}
	want := map[string]string{
		"module.inherits.time_static.default": "provider.time",      // a default configuration is inherited
		"module.mapped.time_static.default":   "provider.time.west", // providers = { time = time.west }
		"module.mapped.time_static.east":      "provider.time",      // providers = { time.east = time }
		"module.legacy.time_static.own":       "module.legacy.provider.time",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Provider: -want +got:\n%s", diff)
	}
	var addrs []string
	for _, p := range st.Providers {
		addrs = append(addrs, p.Addr)
	}
	if diff := cmp.Diff([]string{"provider.time", "provider.time.west", "module.legacy.provider.time"}, addrs); diff != "" {
		t.Errorf("Providers: -want +got:\n%s", diff)
	}
	if len(st.Requirements) != 1 || st.Requirements[0].Versions != ">= 0.9, < 1.0" {
		t.Errorf("Requirements = %+v, want one time requirement with both modules' constraints", st.Requirements)
	}
}

func TestModuleOutsideRoot(t *testing.T) {
	fs := moduleFixture(t, "outside/root")
	if _, ok := fs["../shared/main.tf.json"]; !ok {
		t.Fatalf("files = %v, want ../shared/main.tf.json collected through its module call", fs)
	}
	st := moduleParse(t, fs)
	if len(st.Resources) != 1 || st.Resources[0].Name != "module.shared.time_static.s[0]" {
		t.Errorf("Resources = %v, want module.shared.time_static.s[0]", st.Resources)
	}
}

// localModuleDirs lists the local module directories a configuration calls, directly or
// through other local modules, relative to its root, sorted, from ModuleCalls as the CLI's
// module installer finds them. read returns the files of one such directory keyed by their
// path relative to the root; it is called with "." for the root.
func localModuleDirs(read func(dir string) map[string][]byte) []string {
	seen := map[string]bool{}
	var walk func(rel string)
	walk = func(rel string) {
		for _, c := range ModuleCalls(read(rel), rel) {
			if sub := path.Join(rel, c.Source.Local); c.Source.Kind == tfmodule.Local && !seen[sub] {
				seen[sub] = true
				walk(sub)
			}
		}
	}
	walk(".")
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func TestModuleCallsLocalDirs(t *testing.T) {
	got := localModuleDirs(func(string) map[string][]byte { return moduleFixture(t, "basic") })
	if diff := cmp.Diff([]string{"modules/inner", "modules/net", "modules/outer"}, got); diff != "" {
		t.Errorf("local module directories: -want +got:\n%s", diff)
	}
}

func TestModuleSensitiveArgument(t *testing.T) {
	fs := map[string][]byte{
		"main.tf":     []byte("variable \"pw\" {\n  sensitive = true\n  default = \"s3cret\"\n}\nmodule \"m\" {\n  source = \"./m\"\n  pw = var.pw\n}\noutput \"o\" {\n  value = module.m.pw\n  sensitive = true\n}\n"),
		"m/main.tf":   []byte("variable \"pw\" {}\noutput \"pw\" {\n  value = var.pw\n  sensitive = true\n}\n"),
		"unrelated.x": []byte("x"),
	}
	st := moduleParse(t, fs)
	v := moduleEval(t, st.Outputs[0].Value, moduleScope{})
	if !value.IsSecret(v) {
		t.Errorf("output = %#v, want it marked sensitive", v)
	}
}

func TestModuleErrors(t *testing.T) {
	cases := map[string]struct {
		reason  string
		files   map[string]string
		summary string
		detail  string // a part of the detail
		rng     diag.Range
	}{
		"RegistrySource": {
			reason:  "A registry module is found through the modules manifest the client installed; without one it is not installed.",
			files:   map[string]string{"main.tf": "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"5.0.0\"\n}\n"},
			summary: "Module not installed", detail: "the server never downloads modules",
			rng: diag.Range{Filename: "main.tf", Line: 2, Column: 13},
		},
		"GitSource": {
			reason:  "A Git source is installed by the client too.",
			files:   map[string]string{"main.tf": "module \"x\" {\n  source = \"git::https://example.com/x.git\"\n}\n"},
			summary: "Module not installed", detail: `"git::https://example.com/x.git", which is not installed`,
			rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12},
		},
		"MissingDir": {
			reason:  "A local module whose directory has no configuration files is an error at its source.",
			files:   map[string]string{"main.tf": "module \"net\" {\n  source = \"./modules/net\"\n}\n"},
			summary: "Unreadable module directory", detail: "the directory modules/net does not exist",
			rng: diag.Range{Filename: "main.tf", Line: 2, Column: 12},
		},
		"UnknownArgument": {
			reason:  "An argument the module declares no variable for is an error.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n  nope = 1\n}\n", "m/main.tf": ""},
			summary: "Unsupported argument", detail: `An argument named "nope" is not expected here`,
			rng: diag.Range{Filename: "main.tf", Line: 3, Column: 3},
		},
		"MissingArgument": {
			reason:  "A variable without a default must be given.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n}\n", "m/main.tf": "variable \"x\" {}\n"},
			summary: "Missing required argument", detail: `The argument "x" is required`,
			rng: diag.Range{Filename: "main.tf", Line: 1, Column: 1},
		},
		"UndeclaredOutput": {
			reason:  "Reading an output the module does not declare is an error.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n}\noutput \"o\" {\n  value = module.m.nope\n}\n", "m/main.tf": "output \"x\" {\n  value = 1\n}\n"},
			summary: "Unsupported attribute", detail: `"nope"`,
			rng: diag.Range{Filename: "main.tf", Line: 5, Column: 11},
		},
		"UndeclaredModule": {
			reason:  "Referring to a module call that does not exist is an error.",
			files:   map[string]string{"main.tf": "output \"o\" {\n  value = module.nope.x\n}\n"},
			summary: "Reference to undeclared module", detail: `No module call named "nope"`,
			rng: diag.Range{Filename: "main.tf", Line: 2, Column: 11},
		},
		"CallsItself": {
			reason:  "A module whose source is one of its callers would never end.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n}\n", "m/main.tf": "module \"again\" {\n  source = \"../m\"\n}\n"},
			summary: "Module calls itself", detail: "one of its callers",
			rng: diag.Range{Filename: "m/main.tf", Line: 2, Column: 12},
		},
		"ValidationInChild": {
			reason:  "A child's variable validation checks its argument.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n  x = \"no\"\n}\n", "m/main.tf": "variable \"x\" {\n  validation {\n    condition = var.x != \"no\"\n    error_message = \"Not no.\"\n  }\n}\n"},
			summary: "Invalid value for variable", detail: "Not no.",
			rng: diag.Range{Filename: "m/main.tf", Line: 3, Column: 17},
		},
		"WrongArgumentType": {
			reason:  "An argument is converted to the variable's type.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n  n = \"many\"\n}\n", "m/main.tf": "variable \"n\" {\n  type = number\n}\nresource \"time_static\" \"t\" {\n  count = var.n\n}\n"},
			summary: "Invalid value for input variable", detail: "module.m.var.n",
			rng: diag.Range{Filename: "main.tf", Line: 3, Column: 7},
		},
		"ProvidersInCountedModule": {
			reason:  "A module with its own provider blocks cannot be counted.",
			files:   map[string]string{"main.tf": "module \"m\" {\n  source = \"./m\"\n  count = 2\n}\n", "m/main.tf": "provider \"time\" {}\n"},
			summary: "Module is incompatible with count, for_each, and depends_on",
			rng:     diag.Range{Filename: "main.tf", Line: 1, Column: 1},
		},
		"UnpassedAlias": {
			reason:  "An aliased configuration reaches a module only through providers.",
			files:   map[string]string{"main.tf": "provider \"time\" {\n  alias = \"w\"\n}\nmodule \"m\" {\n  source = \"./m\"\n}\n", "m/main.tf": "resource \"time_static\" \"t\" {\n  provider = time.w\n}\n"},
			summary: "Provider configuration not present", detail: "module.m.provider.time.w",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := map[string][]byte{}
			for k, v := range tc.files {
				fs[k] = []byte(v)
			}
			st, ds := Parse(context.Background(), fs, Options{})
			if !ds.HasErrors() {
				t.Fatalf("%s\nParse: no error, want %q", tc.reason, tc.summary)
			}
			if st != nil {
				t.Errorf("%s\nParse returned a stack despite errors", tc.reason)
			}
			for _, d := range ds {
				if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) {
					if tc.rng != (diag.Range{}) && d.Range != tc.rng {
						t.Errorf("%s\nRange = %+v, want %+v", tc.reason, d.Range, tc.rng)
					}
					return
				}
			}
			t.Errorf("%s\nParse: %v, want %q with %q", tc.reason, ds.Err(), tc.summary, tc.detail)
		})
	}
}

func TestModuleExpansionErrorMentionsAddress(t *testing.T) {
	// count on a module must be known when the stack is built, as for resources.
	fs := map[string][]byte{
		"main.tf":   []byte("resource \"time_static\" \"r\" {}\nmodule \"m\" {\n  source = \"./m\"\n  count = length(time_static.r.id)\n}\n"),
		"m/main.tf": []byte(""),
	}
	_, ds := Parse(context.Background(), fs, Options{})
	if !ds.HasErrors() || ds[0].Summary != "Invalid count argument" || path.Base(ds[0].Range.Filename) != "main.tf" {
		t.Errorf("Parse: %v, want Invalid count argument at main.tf", ds.Err())
	}
}

func TestModuleConcurrentEval(t *testing.T) {
	// The engine evaluates resources in parallel: evaluation must only read what building
	// the stack computed (run with -race).
	st := moduleParse(t, moduleFixture(t, "basic"))
	done := make(chan struct{})
	for _, r := range st.Resources {
		go func() {
			defer func() { done <- struct{}{} }()
			_, _ = r.Properties.Eval(moduleScope{})
		}()
	}
	for _, o := range st.Outputs {
		go func() {
			defer func() { done <- struct{}{} }()
			_, _ = o.Value.Eval(moduleScope{})
		}()
	}
	for range len(st.Resources) + len(st.Outputs) {
		<-done
	}
}
