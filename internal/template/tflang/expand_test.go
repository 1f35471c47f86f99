package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/value"
)

func TestExpansion(t *testing.T) {
	const decl = `
variable "n" { default = 2 }
variable "zones" { default = ["b", "a"] }
variable "sizes" { default = { small = 1, large = 3 } }
`
	cases := map[string]struct {
		reason string
		src    string
		want   []string
	}{
		"Single":      {reason: "No count or for_each: one instance at the block address.", src: `resource "time_static" "t" {}`, want: []string{"time_static.t"}},
		"Count":       {reason: "count gives indexed instances.", src: `resource "time_static" "t" { count = 3 }`, want: []string{"time_static.t[0]", "time_static.t[1]", "time_static.t[2]"}},
		"CountVar":    {reason: "count may use variables.", src: `resource "time_static" "t" { count = var.n }`, want: []string{"time_static.t[0]", "time_static.t[1]"}},
		"CountZero":   {reason: "count = 0 gives no instances.", src: `resource "time_static" "t" { count = 0 }`, want: nil},
		"CountBool":   {reason: "The conditional idiom.", src: `resource "time_static" "t" { count = var.n > 1 ? 1 : 0 }`, want: []string{"time_static.t[0]"}},
		"ForEachSet":  {reason: "A set of strings is keyed by its elements, sorted.", src: `resource "time_static" "t" { for_each = toset(var.zones) }`, want: []string{`time_static.t["a"]`, `time_static.t["b"]`}},
		"ForEachMap":  {reason: "A map is keyed by its keys.", src: `resource "time_static" "t" { for_each = var.sizes }`, want: []string{`time_static.t["large"]`, `time_static.t["small"]`}},
		"ForEachNone": {reason: "An empty map gives no instances.", src: `resource "time_static" "t" { for_each = {} }`, want: nil},
		"Data":        {reason: "Data sources expand too.", src: `data "time_x" "d" { count = 1 }`, want: []string{"data.time_x.d[0]"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := mustParse(t, files("main.tf", decl+tc.src), Options{})
			var got []string
			for _, r := range st.Resources {
				got = append(got, r.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\ninstances: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestInstanceValues(t *testing.T) {
	st := mustParse(t, files("main.tf", `
resource "time_static" "c" {
  count    = 2
  triggers = { i = "n${count.index}" }
}

resource "time_static" "e" {
  for_each = { x = "ex", y = "why" }
  triggers = { k = each.key, v = each.value }
}

resource "time_static" "uses_one" {
  triggers = { id = time_static.c[1].id }
}

resource "time_static" "uses_all" {
  triggers = { ids = join(",", [for k, r in time_static.e : r.id]) }
}
`), Options{})
	triggers := func(name string, s scope) cty.Value {
		t.Helper()
		r := st.Resource(name)
		if r == nil {
			t.Fatalf("no resource %s", name)
		}
		return eval(t, r.Properties, s).GetAttr("triggers")
	}
	str := func(v string) cty.Value { return cty.StringVal(v) }
	obj := func(kv ...string) cty.Value {
		m := map[string]cty.Value{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = str(kv[i+1])
		}
		return cty.ObjectVal(m)
	}
	checks := []struct {
		name string
		s    scope
		want cty.Value
	}{
		{"time_static.c[0]", nil, obj("i", "n0")},
		{"time_static.c[1]", nil, obj("i", "n1")},
		{`time_static.e["x"]`, nil, obj("k", "x", "v", "ex")},
		{`time_static.e["y"]`, nil, obj("k", "y", "v", "why")},
		{"time_static.uses_one", scope{"time_static.c[1]": obj("id", "one")}, obj("id", "one")},
		{"time_static.uses_all", scope{`time_static.e["x"]`: obj("id", "1"), `time_static.e["y"]`: obj("id", "2")}, obj("ids", "1,2")},
	}
	for _, c := range checks {
		if got := triggers(c.name, c.s); !got.RawEquals(c.want) {
			t.Errorf("%s triggers = %#v, want %#v", c.name, got, c.want)
		}
	}

	// Dependencies name every instance of a referenced block, even for an indexed reference.
	deps := map[string][]string{}
	for _, r := range st.Resources {
		deps[r.Name] = r.DependsOn
	}
	want := map[string][]string{
		"time_static.c[0]": nil, "time_static.c[1]": nil, `time_static.e["x"]`: nil, `time_static.e["y"]`: nil,
		"time_static.uses_one": {"time_static.c[0]", "time_static.c[1]"},
		"time_static.uses_all": {`time_static.e["x"]`, `time_static.e["y"]`},
	}
	if diff := cmp.Diff(want, deps, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("DependsOn: -want +got:\n%s", diff)
	}
}

func TestForEachOverResource(t *testing.T) {
	// terraform plans this (checked with terraform 1.11 and hashicorp/time): the keys of a
	// for_each resource are known before apply, only the values are not.
	fs := files("main.tf", `
resource "time_static" "e" {
  for_each = { x = "ex", y = "why" }
}

resource "time_static" "chained" {
  for_each = time_static.e
  triggers = { up = each.value.id }
}
`)
	st := mustParse(t, fs, Options{})
	var got []string
	for _, r := range st.Resources {
		got = append(got, r.Name)
	}
	want := []string{`time_static.e["x"]`, `time_static.e["y"]`, `time_static.chained["x"]`, `time_static.chained["y"]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instances: -want +got:\n%s", diff)
	}
	r := st.Resource(`time_static.chained["y"]`)
	v := eval(t, r.Properties, scope{`time_static.e["y"]`: cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("2")})})
	if got := v.GetAttr("triggers").GetAttr("up"); !got.RawEquals(cty.StringVal("2")) {
		t.Errorf("each.value.id = %#v, want the id of time_static.e[\"y\"]", got)
	}
	// Planned before time_static.e is applied, each.value is unknown, not an error.
	v = eval(t, r.Properties, scope{`time_static.e["y"]`: cty.UnknownVal(cty.Object(map[string]cty.Type{"id": cty.String}))})
	if got := v.GetAttr("triggers").GetAttr("up"); got.IsKnown() {
		t.Errorf("each.value.id before apply = %#v, want unknown", got)
	}
	if got, want := r.DependsOn, []string{`time_static.e["x"]`, `time_static.e["y"]`}; !cmp.Equal(want, got) {
		t.Errorf("DependsOn = %v, want %v", got, want)
	}
}

func TestForEachOverResourceValues(t *testing.T) {
	// Keys known at parse time, values from the applied resources: a for expression over a
	// counted resource, and a module call over a for_each resource.
	fs := files("main.tf", `
resource "time_static" "c" {
  count = 2
}

resource "time_static" "byid" {
  for_each = { for i, r in time_static.c : "n${i}" => r }
  triggers = { up = each.value.id, k = each.key }
}

resource "time_static" "e" {
  for_each = { x = "ex", y = "why" }
}

module "m" {
  source   = "./m"
  for_each = time_static.e
  up       = each.value.id
}
`, "m/main.tf", `
variable "up" {}

resource "time_static" "in" {
  triggers = { up = var.up }
}
`)
	st := mustParse(t, fs, Options{})
	var got []string
	for _, r := range st.Resources {
		got = append(got, r.Name)
	}
	want := []string{"time_static.c[0]", "time_static.c[1]", `time_static.byid["n0"]`, `time_static.byid["n1"]`,
		`time_static.e["x"]`, `time_static.e["y"]`, `module.m["x"].time_static.in`, `module.m["y"].time_static.in`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("instances: -want +got:\n%s", diff)
	}
	id := func(s string) cty.Value { return cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(s)}) }
	applied := scope{"time_static.c[0]": id("c0"), "time_static.c[1]": id("c1"), `time_static.e["x"]`: id("ex-id"), `time_static.e["y"]`: id("why-id")}
	checks := map[string]cty.Value{
		`time_static.byid["n1"]`:       cty.ObjectVal(map[string]cty.Value{"up": cty.StringVal("c1"), "k": cty.StringVal("n1")}),
		`module.m["x"].time_static.in`: cty.ObjectVal(map[string]cty.Value{"up": cty.StringVal("ex-id")}),
		`module.m["y"].time_static.in`: cty.ObjectVal(map[string]cty.Value{"up": cty.StringVal("why-id")}),
	}
	for name, want := range checks {
		if got := eval(t, st.Resource(name).Properties, applied).GetAttr("triggers"); !got.RawEquals(want) {
			t.Errorf("%s triggers = %#v, want %#v", name, got, want)
		}
	}
}

func TestForEachUnknownKeys(t *testing.T) {
	// Keys that come from resource attributes are still unknown at parse time: an error.
	cases := map[string]string{
		"SetOfIDs":  `toset([for r in time_static.e : r.id])`,
		"MapByID":   `{ for r in time_static.e : r.id => r }`,
		"Attribute": `time_static.one.triggers`,
	}
	for name, expr := range cases {
		t.Run(name, func(t *testing.T) {
			_, ds := Parse(context.Background(), files("main.tf", `
resource "time_static" "one" {}
resource "time_static" "e" {
  for_each = { x = "ex" }
}
resource "time_static" "t" {
  for_each = `+expr+`
}
`), Options{})
			if !ds.HasErrors() || ds[0].Summary != "Invalid for_each argument" {
				t.Errorf("Parse: %v, want Invalid for_each argument", ds.Err())
			}
		})
	}
}

func TestFunctions(t *testing.T) {
	const cfg = `
locals {
  m    = { a = 1 }
  csv  = "name,size\nx,1\n"
}
output "o" { value = %s }
`
	cases := map[string]struct {
		reason, expr string
		want         cty.Value
		knownBug     string // non-empty: the case fails today for this reason
	}{
		"upper":        {expr: `upper("abc")`, want: cty.StringVal("ABC")},
		"join":         {expr: `join("-", ["a", "b"])`, want: cty.StringVal("a-b")},
		"format":       {expr: `format("%s-%03d", "x", 7)`, want: cty.StringVal("x-007")},
		"merge":        {expr: `merge({a = 1}, {b = 2})`, want: cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1), "b": cty.NumberIntVal(2)})},
		"jsonencode":   {expr: `jsonencode({a = [1, "x"]})`, want: cty.StringVal(`{"a":[1,"x"]}`)},
		"jsondecode":   {expr: `jsondecode("{\"a\": 1}").a`, want: cty.NumberIntVal(1)},
		"lookup":       {expr: `lookup(local.m, "b", 9)`, want: cty.NumberIntVal(9)},
		"max":          {expr: `max(3, 9, 1)`, want: cty.NumberIntVal(9)},
		"replace":      {expr: `replace("a.b.c", ".", "/")`, want: cty.StringVal("a/b/c")},
		"range":        {expr: `length(range(4))`, want: cty.NumberIntVal(4)},
		"csvdecode":    {expr: `csvdecode(local.csv)[0].name`, want: cty.StringVal("x")},
		"tostring":     {expr: `tostring(12)`, want: cty.StringVal("12")},
		"tryFallback":  {reason: "try returns the first argument that evaluates.", expr: `try(local.m.b, "fallback")`, want: cty.StringVal("fallback")},
		"tryFirst":     {expr: `try(local.m.a, "fallback")`, want: cty.NumberIntVal(1)},
		"canFalse":     {expr: `can(local.m.b)`, want: cty.False},
		"canTrue":      {expr: `can(local.m.a)`, want: cty.True},
		"file":         {reason: "file reads the configuration's own files.", expr: `trimspace(file("templates/motd.txt"))`, want: cty.StringVal("hello")},
		"nonsensitive": {expr: `nonsensitive(sensitive("x"))`, want: cty.StringVal("x")},
		"sensitive":    {expr: `sensitive("x")`, want: cty.StringVal("x").Mark(value.Sensitive)},
		"lengthString": {reason: "terraform's length counts the characters of a string.", expr: `length("héllo")`, want: cty.NumberIntVal(5),
			knownBug: "BUG(tflang functions): length is go-cty's stdlib.LengthFunc, which accepts only collections; terraform's length also takes a string"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := files("main.tf", strings.Replace(cfg, "%s", tc.expr, 1), "templates/motd.txt", "hello\n")
			st := mustParse(t, fs, Options{})
			got, ds := st.Outputs[0].Value.Eval(scope{})
			if tc.knownBug != "" && (ds.HasErrors() || !got.RawEquals(tc.want)) {
				t.Skipf("%s: got %#v, %v", tc.knownBug, got, ds.Err())
			}
			if ds.HasErrors() {
				t.Fatalf("%s\n%s: %v", tc.reason, tc.expr, ds.Err())
			}
			if !got.RawEquals(tc.want) {
				t.Errorf("%s\n%s = %#v, want %#v", tc.reason, tc.expr, got, tc.want)
			}
		})
	}
}

func TestFunctionErrors(t *testing.T) {
	cases := map[string]struct {
		expr, summary, detail string
	}{
		"FileMissing": {expr: `file("nope.txt")`, summary: "Invalid function argument", detail: `no file exists at "nope.txt"`},
		"BadArg":      {expr: `upper(["x"])`, summary: "Invalid function argument", detail: "string required"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := mustParse(t, files("main.tf", "output \"o\" {\n  value = "+tc.expr+"\n}\n"), Options{})
			_, ds := st.Outputs[0].Value.Eval(scope{})
			if len(ds) != 1 {
				t.Fatalf("Eval(%s): diagnostics %v, want one", tc.expr, ds)
			}
			d := ds[0]
			if d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || d.Range.Filename != "main.tf" || d.Range.Line != 2 {
				t.Errorf("Eval(%s): %#v, want %q containing %q at main.tf:2", tc.expr, d, tc.summary, tc.detail)
			}
			if !strings.HasSuffix(d.Detail, "\n\n  2:   value = "+tc.expr) {
				t.Errorf("Eval(%s): detail %q does not end with the source line", tc.expr, d.Detail)
			}
		})
	}
}
