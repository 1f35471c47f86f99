package tflang

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// files turns name/source pairs into Parse's input.
func files(kv ...string) map[string][]byte {
	out := map[string][]byte{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = []byte(kv[i+1])
	}
	return out
}

// mustParse parses and fails the test on any error diagnostic.
func mustParse(t *testing.T, fs map[string][]byte, opts Options) *template.Stack {
	t.Helper()
	st, ds := Parse(context.Background(), fs, opts)
	if ds.HasErrors() {
		t.Fatalf("Parse: %v", ds.Err())
	}
	return st
}

// scope is a template.Scope of resource outputs by instance address.
type scope map[string]cty.Value

func (s scope) Resource(name string) (template.ResourceValue, bool) {
	v, ok := s[name]
	return template.ResourceValue{ID: cty.UnknownVal(cty.String), Outputs: v}, ok
}

func (scope) Context() context.Context { return context.Background() }

// eval evaluates e and fails the test on any error diagnostic.
func eval(t *testing.T, e template.Expr, s template.Scope) cty.Value {
	t.Helper()
	v, ds := e.Eval(s)
	if ds.HasErrors() {
		t.Fatalf("Eval: %v", ds.Err())
	}
	return v
}

func rng(file string, line, col int) diag.Range {
	return diag.Range{Filename: file, Line: line, Column: col}
}

func TestDetect(t *testing.T) {
	cases := map[string]struct {
		reason string
		files  map[string][]byte
		dir    string
		want   bool
	}{
		"HCL":       {reason: "A .tf file at the top level.", files: files("main.tf", ""), want: true},
		"JSON":      {reason: "A .tf.json file.", files: files("main.tf.json", "{}"), want: true},
		"Subdir":    {reason: "Files of another directory do not count.", files: files("modules/x/main.tf", ""), want: false},
		"InDir":     {reason: "Files of the named directory count.", files: files("infra/main.tf", ""), dir: "infra/", want: true},
		"OtherOnly": {reason: "Variables files alone are not a configuration.", files: files("terraform.tfvars", "", "stack.yaml", ""), want: false},
		"Empty":     {reason: "Nothing.", files: files(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Detect(tc.files, tc.dir); got != tc.want {
				t.Errorf("%s\nDetect(..., %q) = %v, want %v", tc.reason, tc.dir, got, tc.want)
			}
		})
	}
}

func TestRequirements(t *testing.T) {
	cases := map[string]struct {
		reason string
		files  map[string][]byte
		want   []*template.ProviderRequirement
	}{
		"ObjectForm": {
			reason: "source and version; a two-part source implies the default registry.",
			files: files("main.tf", `terraform {
  required_providers {
    time = {
      source  = "hashicorp/time"
      version = "~> 0.14"
    }
    huaweicloud = {
      source = "registry.example.com/HuaweiCloud/huaweicloud"
    }
  }
}
`),
			want: []*template.ProviderRequirement{
				{Name: "huaweicloud", Source: "registry.example.com/huaweicloud/huaweicloud", Range: rng("main.tf", 7, 5)},
				{Name: "time", Source: "registry.terraform.io/hashicorp/time", Versions: "~> 0.14", Range: rng("main.tf", 3, 5)},
			},
		},
		"LegacyString": {
			reason: "A bare version string implies hashicorp/<name>.",
			files:  files("versions.tf", "terraform {\n  required_providers {\n    random = \">= 3.0\"\n  }\n}\n"),
			want:   []*template.ProviderRequirement{{Name: "random", Source: "registry.terraform.io/hashicorp/random", Versions: ">= 3.0", Range: rng("versions.tf", 3, 5)}},
		},
		"JSONObject": {
			reason: "The .tf.json object form.",
			files: files("main.tf.json", `{"terraform": {"required_providers": {
  "time": {"source": "hashicorp/time", "version": "0.14.2"}}}}`),
			want: []*template.ProviderRequirement{{Name: "time", Source: "registry.terraform.io/hashicorp/time", Versions: "0.14.2", Range: rng("main.tf.json", 2, 3)}},
		},
		"JSONArrayRFS": {
			reason: "Huawei RFS writes required_providers as an array of objects.",
			files: files("main.tf.json", `{
  "terraform": {
    "required_providers": [
      {
        "huaweicloud": {
          "source": "huawei.com/provider/huaweicloud",
          "version": ">= 1.40.0"
        }
      }
    ]
  }
}`),
			want: []*template.ProviderRequirement{{Name: "huaweicloud", Source: "huawei.com/provider/huaweicloud", Versions: ">= 1.40.0", Range: rng("main.tf.json", 5, 9)}},
		},
		"JSONArrayTwoProviders": {
			reason: "Each object of the RFS array may name several providers, and the array may hold several objects.",
			files: files("main.tf.json", `{"terraform": {"required_providers": [
  {"time": {"source": "hashicorp/time", "version": "0.14.2"}},
  {"random": {"source": "hashicorp/random"}}
]}}`),
			want: []*template.ProviderRequirement{
				{Name: "random", Source: "registry.terraform.io/hashicorp/random", Range: rng("main.tf.json", 3, 4)},
				{Name: "time", Source: "registry.terraform.io/hashicorp/time", Versions: "0.14.2", Range: rng("main.tf.json", 2, 4)},
			},
		},
		"Implied": {
			reason: "A provider used by a resource but not required is hashicorp/<prefix of the type>.",
			files:  files("main.tf", `resource "time_static" "t" {}`),
			want:   []*template.ProviderRequirement{{Name: "time", Source: "registry.terraform.io/hashicorp/time"}},
		},
	}
	ignoreRange := cmpopts.IgnoreFields(template.ProviderRequirement{}, "Range")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := mustParse(t, tc.files, Options{})
			opts := []cmp.Option{cmpopts.SortSlices(func(a, b *template.ProviderRequirement) bool { return a.Name < b.Name })}
			if diff := cmp.Diff(tc.want, st.Requirements, opts...); diff != "" {
				// Report source mismatches apart from ranges, which are easier to misjudge.
				if d2 := cmp.Diff(tc.want, st.Requirements, append(opts, ignoreRange)...); d2 != "" {
					t.Errorf("%s\nRequirements: -want +got:\n%s", tc.reason, d2)
				} else {
					t.Errorf("%s\nRequirements ranges: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

func TestProviders(t *testing.T) {
	st := mustParse(t, files("main.tf", `
provider "time" {}

provider "time" {
  alias = "west"
}

resource "time_static" "a" {}

resource "time_static" "b" {
  provider = time.west
}

resource "random_id" "c" {}
`), Options{})
	type sum struct{ Addr, Name, Alias string }
	var got []sum
	for _, p := range st.Providers {
		got = append(got, sum{p.Addr, p.Name, p.Alias})
	}
	want := []sum{{"provider.time", "time", ""}, {"provider.time.west", "time", "west"}, {"provider.random", "random", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Providers: -want +got:\n%s", diff)
	}
	for name, want := range map[string]string{"time_static.a": "provider.time", "time_static.b": "provider.time.west", "random_id.c": "provider.random"} {
		if r := st.Resource(name); r == nil || r.Provider != want {
			t.Errorf("%s: provider %v, want %s", name, r, want)
		}
	}
	if got := st.Provider("provider.time.west").Range; got != rng("main.tf", 4, 1) {
		t.Errorf("provider.time.west range = %v, want main.tf:4:1", got)
	}
}

func TestResourceMeta(t *testing.T) {
	st := mustParse(t, files("main.tf", `
resource "time_static" "base" {}

data "time_lookup" "d" {
  id = time_static.base.id
}

resource "time_offset" "o" {
  base_rfc3339 = data.time_lookup.d.rfc3339
  offset_days  = 1
  depends_on   = [time_static.base]

  lifecycle {
    create_before_destroy = true
    prevent_destroy       = true
    ignore_changes        = [triggers["a"], offset_days]
    replace_triggered_by  = [time_static.base.id]
  }
}

resource "time_static" "all" {
  lifecycle {
    ignore_changes = all
  }
}
`), Options{})
	type sum struct {
		Name, Type, Provider string
		Mode                 template.Mode
		DependsOn            []string
		CBD, Prevent, All    bool
		Ignore               []cty.Path
		ReplaceBy            []string
		Range, TypeRange     diag.Range
	}
	var got []sum
	for _, r := range st.Resources {
		got = append(got, sum{r.Name, r.Type, r.Provider, r.Mode, r.DependsOn, r.CreateBeforeDestroy, r.PreventDestroy,
			r.IgnoreAllChanges, r.IgnoreChanges, r.ReplaceTriggeredBy, r.Range, r.TypeRange})
	}
	want := []sum{
		{Name: "time_static.base", Type: "time_static", Provider: "provider.time", DependsOn: []string{}, ReplaceBy: []string{},
			Range: rng("main.tf", 2, 1), TypeRange: rng("main.tf", 2, 10)},
		{Name: "data.time_lookup.d", Type: "time_lookup", Provider: "provider.time", Mode: template.Data, DependsOn: []string{"time_static.base"},
			ReplaceBy: []string{}, Range: rng("main.tf", 4, 1), TypeRange: rng("main.tf", 4, 6)},
		{Name: "time_offset.o", Type: "time_offset", Provider: "provider.time", DependsOn: []string{"data.time_lookup.d", "time_static.base"},
			CBD: true, Prevent: true, Ignore: []cty.Path{cty.GetAttrPath("triggers").Index(cty.StringVal("a")), cty.GetAttrPath("offset_days")},
			ReplaceBy: []string{"time_static.base"}, Range: rng("main.tf", 8, 1), TypeRange: rng("main.tf", 8, 10)},
		{Name: "time_static.all", Type: "time_static", Provider: "provider.time", DependsOn: []string{}, All: true, ReplaceBy: []string{},
			Range: rng("main.tf", 21, 1), TypeRange: rng("main.tf", 21, 10)},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b cty.Path) bool { return a.Equals(b) })); diff != "" {
		t.Errorf("Resources: -want +got:\n%s", diff)
	}

	// The body, decoded with the provider's schema as the engine does, holds only the
	// provider's arguments: meta-arguments and the lifecycle block are gone.
	o := st.Resource("time_offset.o").Properties.(template.BodyExpr)
	spec := hcldec.ObjectSpec{
		"base_rfc3339": &hcldec.AttrSpec{Name: "base_rfc3339", Type: cty.String},
		"offset_days":  &hcldec.AttrSpec{Name: "offset_days", Type: cty.Number},
	}
	v, ds := o.EvalSpec(scope{"data.time_lookup.d": cty.ObjectVal(map[string]cty.Value{"rfc3339": cty.StringVal("2024-01-01T00:00:00Z")})}, spec)
	if ds.HasErrors() {
		t.Fatalf("EvalSpec: %v", ds.Err())
	}
	wantBody := cty.ObjectVal(map[string]cty.Value{"base_rfc3339": cty.StringVal("2024-01-01T00:00:00Z"), "offset_days": cty.NumberIntVal(1)})
	if !v.RawEquals(wantBody) {
		t.Errorf("time_offset.o properties = %#v, want %#v", v, wantBody)
	}
}

func TestLifecycleBlockLeavesBody(t *testing.T) {
	// A lifecycle block is a meta-argument: like depends_on it must not stay in the body, so
	// the schema-less Eval and the property ranges see the provider's arguments only.
	st := mustParse(t, files("main.tf", `
resource "time_static" "t" {
  triggers   = { a = "b" }
  depends_on = []
  lifecycle {
    prevent_destroy = true
  }
}
`), Options{})
	r := st.Resource("time_static.t")
	v, ds := r.Properties.Eval(scope{})
	if ds.HasErrors() {
		t.Fatalf("Eval: %v", ds.Err())
	}
	if want := cty.ObjectVal(map[string]cty.Value{"triggers": cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("b")})}); !v.RawEquals(want) {
		t.Errorf("Eval = %#v, want %#v", v, want)
	}
	if diff := cmp.Diff(map[string]diag.Range{"triggers": rng("main.tf", 3, 3)}, r.PropertyRanges); diff != "" {
		t.Errorf("PropertyRanges: -want +got:\n%s", diff)
	}
}

func TestEvalNestedBlocks(t *testing.T) {
	// Without a schema, nested blocks decode as a tuple of objects per block type, dynamic
	// blocks expanded in place; provisioner and connection, like lifecycle, are left out.
	st := mustParse(t, files("main.tf", `
variable "ports" { default = [80, 443] }

resource "time_static" "t" {
  name = "x"
  rule {
    port = 22
  }
  dynamic "rule" {
    for_each = var.ports
    iterator = p
    content {
      port = p.value
      nested {
        i = p.key
      }
    }
  }
  provisioner "local-exec" {
    command = "echo"
  }
  connection {
    host = "h"
  }
  lifecycle {
    create_before_destroy = true
  }
}
`), Options{})
	r := st.Resource("time_static.t")
	v := eval(t, r.Properties, scope{})
	num := func(n int64) cty.Value { return cty.NumberIntVal(n) }
	want := cty.ObjectVal(map[string]cty.Value{
		"name": cty.StringVal("x"),
		"rule": cty.TupleVal([]cty.Value{
			cty.ObjectVal(map[string]cty.Value{"port": num(22)}),
			cty.ObjectVal(map[string]cty.Value{"port": num(80), "nested": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"i": num(0)})})}),
			cty.ObjectVal(map[string]cty.Value{"port": num(443), "nested": cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"i": num(1)})})}),
		}),
	})
	if !v.RawEquals(want) {
		t.Errorf("Eval = %#v, want %#v", v, want)
	}
	wantRanges := map[string]diag.Range{"name": rng("main.tf", 5, 3), "rule": rng("main.tf", 6, 3), "rule.0": rng("main.tf", 6, 3), "rule.0.port": rng("main.tf", 7, 5)}
	if diff := cmp.Diff(wantRanges, r.PropertyRanges); diff != "" {
		t.Errorf("PropertyRanges: -want +got:\n%s", diff)
	}
	if !r.CreateBeforeDestroy {
		t.Error("CreateBeforeDestroy is false, want the lifecycle block's true")
	}
}

func TestPropertyRanges(t *testing.T) {
	st := mustParse(t, files("main.tf", "resource \"time_offset\" \"o\" {\n  offset_days = 1\n  count       = 1\n  triggers = {\n    a = \"b\"\n  }\n}\n"), Options{})
	want := map[string]diag.Range{"offset_days": rng("main.tf", 2, 3), "triggers": rng("main.tf", 4, 3)}
	if diff := cmp.Diff(want, st.Resource("time_offset.o[0]").PropertyRanges); diff != "" {
		t.Errorf("PropertyRanges: -want +got:\n%s", diff)
	}
}

func TestLocalsAndOutputs(t *testing.T) {
	st := mustParse(t, files(
		"main.tf", `
locals {
  prefix = "app-${var.env}"
  name   = upper(local.prefix)
  base   = time_static.t.id
}

resource "time_static" "t" {
  triggers = { name = local.name }
}

resource "time_static" "u" {
  triggers = { base = local.base }
}
`,
		"outputs.tf", `
output "name" {
  value       = local.name
  description = "The name."
}

output "id" {
  value     = time_static.t.id
  sensitive = true
}
`,
		"variables.tf", `variable "env" { default = "dev" }`), Options{})

	// A local that references a resource makes its users depend on that resource.
	if got := st.Resource("time_static.u").DependsOn; !cmp.Equal(got, []string{"time_static.t"}) {
		t.Errorf("time_static.u DependsOn = %v, want [time_static.t] through local.base", got)
	}
	v := eval(t, st.Resource("time_static.t").Properties, scope{})
	if got := v.GetAttr("triggers").GetAttr("name"); !got.RawEquals(cty.StringVal("APP-DEV")) {
		t.Errorf("triggers.name = %#v, want APP-DEV", got)
	}

	type sum struct {
		Name, Description string
		Range             diag.Range
	}
	var got []sum
	for _, o := range st.Outputs {
		got = append(got, sum{o.Name, o.Description, o.Range})
	}
	if diff := cmp.Diff([]sum{{"name", "The name.", rng("outputs.tf", 2, 1)}, {"id", "", rng("outputs.tf", 7, 1)}}, got); diff != "" {
		t.Errorf("Outputs: -want +got:\n%s", diff)
	}
	if v := eval(t, st.Outputs[0].Value, scope{}); !v.RawEquals(cty.StringVal("APP-DEV")) {
		t.Errorf("output name = %#v", v)
	}
	id := eval(t, st.Outputs[1].Value, scope{"time_static.t": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("x")})})
	if !value.IsSecret(id) {
		t.Errorf("sensitive output id = %#v, want it marked sensitive", id)
	}
	// Before the resource exists, its attributes are unknown.
	if v := eval(t, st.Outputs[1].Value, scope{}); v.IsKnown() {
		t.Errorf("output id before apply = %#v, want unknown", v)
	}
}

func TestDirOption(t *testing.T) {
	fs := files(
		"main.tf", `resource "time_static" "top" {}`,
		"infra/main.tf", `resource "time_static" "inner" { triggers = { f = file("data/x.txt") } }`,
		"infra/data/x.txt", "hello",
		"infra/modules/m/main.tf", `resource "time_static" "nested" {}`)
	st := mustParse(t, fs, Options{Dir: "infra"})
	if len(st.Resources) != 1 || st.Resources[0].Name != "time_static.inner" {
		t.Fatalf("Resources = %v, want only infra's time_static.inner", st.Resources)
	}
	v := eval(t, st.Resources[0].Properties, scope{})
	if got := v.GetAttr("triggers").GetAttr("f"); !got.RawEquals(cty.StringVal("hello")) {
		t.Errorf("file() relative to Dir = %#v, want hello", got)
	}
	if st.Dialect != template.Terraform {
		t.Errorf("Dialect = %q", st.Dialect)
	}
}

// A -var value of an untyped variable is a string; count converts it, as terraform does.
func TestCountOfStringVar(t *testing.T) {
	st := mustParse(t, files("main.tf", `
variable "n" { default = 2 }
resource "terraform_data" "x" {
  count = var.n
}
`), Options{Vars: map[string]string{"n": "3"}})
	if len(st.Resources) != 3 {
		t.Fatalf("want 3 instances, got %d", len(st.Resources))
	}
}
