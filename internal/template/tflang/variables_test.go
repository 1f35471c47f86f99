package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// param returns the bound parameter called name.
func param(t *testing.T, st *template.Stack, name string) *template.Parameter {
	t.Helper()
	for _, p := range st.Parameters {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no parameter %q among %v", name, st.Parameters)
	return nil
}

func TestVariableTypes(t *testing.T) {
	src := `
variable "str" {
  type        = string
  default     = "hi"
  description = "A string."
}
variable "num" {
  type    = number
  default = "42"
}
variable "flag" {
  type = bool
}
variable "names" {
  type    = list(string)
  default = ["a", "b"]
}
variable "tags" {
  type = map(string)
}
variable "obj" {
  type = object({
    name = string
    size = optional(number, 3)
  })
}
variable "any" {}
variable "secret" {
  type      = string
  sensitive = true
  default   = "hunter2"
}
variable "strict" {
  type     = string
  nullable = false
  default  = "fallback"
}
`
	st := mustParse(t, files("variables.tf", src, "terraform.tfvars", "strict = null\n"), Options{
		Vars: map[string]string{"flag": "true", "tags": `{ env = "dev" }`, "obj": `{ name = "x" }`, "any": "[1, 2]"},
	})
	cases := map[string]struct {
		reason string
		typ    string
		want   cty.Value
	}{
		"str":    {reason: "A string default.", typ: "string", want: cty.StringVal("hi")},
		"num":    {reason: "A default converts to the declared type.", typ: "number", want: cty.NumberIntVal(42)},
		"flag":   {reason: "A -var of primitive type is a literal converted to the type.", typ: "bool", want: cty.True},
		"names":  {reason: "A list default.", typ: "list of string", want: cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
		"tags":   {reason: "A -var of complex type is an HCL expression.", typ: "map of string", want: cty.MapVal(map[string]cty.Value{"env": cty.StringVal("dev")})},
		"obj":    {reason: "Optional attributes take their defaults.", typ: "object", want: cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("x"), "size": cty.NumberIntVal(3)})},
		"any":    {reason: "An unconstrained -var is a literal string, as terraform reads it.", typ: "dynamic", want: cty.StringVal("[1, 2]")},
		"secret": {reason: "A sensitive variable's value is marked.", typ: "string", want: cty.StringVal("hunter2").Mark(value.Sensitive)},
		"strict": {reason: "null given to a non-nullable variable takes its default.", typ: "string", want: cty.StringVal("fallback")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := param(t, st, name)
			if !p.Value.RawEquals(tc.want) {
				t.Errorf("%s\nvar.%s = %#v, want %#v", tc.reason, name, p.Value, tc.want)
			}
			if p.Type != tc.typ {
				t.Errorf("%s\nvar.%s type %q, want %q", tc.reason, name, p.Type, tc.typ)
			}
			if p.NoEcho != (name == "secret") {
				t.Errorf("var.%s NoEcho = %v", name, p.NoEcho)
			}
		})
	}
	if p := param(t, st, "str"); p.Description != "A string." || p.Range != rng("variables.tf", 2, 1) {
		t.Errorf("var.str description %q range %v", p.Description, p.Range)
	}
	var order []string
	for _, p := range st.Parameters {
		order = append(order, p.Name)
	}
	if diff := cmp.Diff([]string{"str", "num", "flag", "names", "tags", "obj", "any", "secret", "strict"}, order); diff != "" {
		t.Errorf("Parameters keep declaration order: -want +got:\n%s", diff)
	}
}

func TestVariablePrecedence(t *testing.T) {
	// Each source sets the variables from its letter on, so each variable shows the highest
	// source that sets it: default < TF_VAR_ < terraform.tfvars < *.auto.tfvars (lexical)
	// < -var-file (in order) < -var.
	var decl strings.Builder
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		decl.WriteString("variable \"" + n + "\" { default = \"default\" }\n")
	}
	assign := func(src string, names ...string) string {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(n + " = \"" + src + "\"\n")
		}
		return b.String()
	}
	fs := files(
		"main.tf", decl.String(),
		"terraform.tfvars", assign("terraform.tfvars", "c", "d", "e", "f", "g", "h"),
		"b.auto.tfvars", assign("b.auto.tfvars", "e", "f", "g", "h"),
		"a.auto.tfvars.json", `{"d": "a.auto.tfvars.json", "e": "a.auto.tfvars.json", "f": "a.auto.tfvars.json", "g": "a.auto.tfvars.json", "h": "a.auto.tfvars.json"}`,
		"one.tfvars", assign("one.tfvars", "f", "g", "h"),
		"two.tfvars", assign("two.tfvars", "g", "h"),
		"sub/terraform.tfvars", assign("sub", "a", "b", "c", "d", "e", "f", "g", "h"), // another directory: ignored
		"ignored.tfvars", assign("ignored.tfvars", "a", "b", "c", "d", "e", "f", "g", "h"), // not auto-loaded
	)
	st := mustParse(t, fs, Options{
		Env:      map[string]string{"b": "env", "c": "env", "d": "env", "e": "env", "f": "env", "g": "env", "h": "env", "undeclared": "ignored"},
		VarFiles: []string{"one.tfvars", "two.tfvars"},
		Vars:     map[string]string{"h": "-var"},
	})
	want := map[string]string{"a": "default", "b": "env", "c": "terraform.tfvars", "d": "a.auto.tfvars.json", "e": "b.auto.tfvars",
		"f": "one.tfvars", "g": "two.tfvars", "h": "-var"}
	got := map[string]string{}
	for _, p := range st.Parameters {
		got[p.Name] = p.Value.AsString()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variable values by source: -want +got:\n%s", diff)
	}
}

func TestVariableTfvarsJSONAfterTfvars(t *testing.T) {
	// terraform loads terraform.tfvars, then terraform.tfvars.json, so the JSON file wins.
	fs := files("main.tf", `variable "x" {}`, "terraform.tfvars", `x = "hcl"`, "terraform.tfvars.json", `{"x": "json"}`)
	for range 20 { // the order must not depend on map iteration
		st := mustParse(t, fs, Options{})
		if got := param(t, st, "x").Value.AsString(); got != "json" {
			t.Skipf("BUG(tflang module.bindVariables): terraform.tfvars and terraform.tfvars.json are prepended in map iteration order, so either may win; got %q, want %q (terraform's order)", got, "json")
		}
	}
}

func TestVariableErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		files  map[string][]byte
		opts   Options
		want   []diag.Diagnostic // Detail is matched as a prefix
	}{
		"Missing": {
			reason: "A variable without a default needs a value.",
			files:  files("main.tf", "\nvariable \"region\" {\n  type = string\n}\n"),
			want: []diag.Diagnostic{{Summary: "No value for required variable", Range: rng("main.tf", 2, 1),
				Detail: `The root module input variable "region" is not set, and has no default value.`}},
		},
		"BadType": {
			reason: "A value that does not convert to the type names the variable and its declaration.",
			files:  files("main.tf", "variable \"size\" {\n  type = number\n}\n"),
			opts:   Options{Vars: map[string]string{"size": "large"}},
			want: []diag.Diagnostic{{Summary: "Invalid value for input variable", Range: rng("main.tf", 1, 1),
				Detail: "The given value is not suitable for var.size declared at main.tf:1,1-16: a number is required."}},
		},
		"UndeclaredInTfvars": {
			reason: "A variables file assigning an undeclared variable points at the assignment.",
			files:  files("main.tf", `variable "a" { default = 1 }`, "terraform.tfvars", "a = 2\nb = 3\n"),
			want: []diag.Diagnostic{{Summary: "Value for undeclared variable", Range: rng("terraform.tfvars", 2, 1),
				Detail: `A variable named "b" was assigned, but the root module does not declare a variable of that name.`}},
		},
		"UndeclaredVar": {
			reason: "A -var for an undeclared variable is an error.",
			files:  files("main.tf", `variable "a" { default = 1 }`),
			opts:   Options{Vars: map[string]string{"nope": "1"}},
			want:   []diag.Diagnostic{{Summary: "Value for undeclared variable", Detail: `A variable named "nope" was assigned`}},
		},
		"MissingVarFile": {
			reason: "A -var-file that is not among the files.",
			files:  files("main.tf", `variable "a" { default = 1 }`),
			opts:   Options{VarFiles: []string{"prod.tfvars"}},
			want:   []diag.Diagnostic{{Summary: "Failed to read variables file", Detail: "Given variables file prod.tfvars does not exist."}},
		},
		"Validation": {
			reason: "A failing validation rule reports its error_message at the condition.",
			files: files("main.tf", `variable "env" {
  type = string
  validation {
    condition     = contains(["dev", "prod"], var.env)
    error_message = "env must be dev or prod."
  }
}
`),
			opts: Options{Vars: map[string]string{"env": "qa"}},
			want: []diag.Diagnostic{{Summary: "Invalid value for variable", Range: rng("main.tf", 4, 21),
				Detail: "env must be dev or prod.\n\nThis was checked by the validation rule at main.tf:3,3-13."}},
		},
		"Duplicate": {
			reason: "Two declarations of one variable.",
			files:  files("a.tf", `variable "x" {}`, "b.tf", "\nvariable \"x\" {}"),
			want: []diag.Diagnostic{{Summary: "Duplicate variable declaration", Range: rng("b.tf", 2, 10),
				Detail: `A variable named "x" was already declared.`}},
		},
		"EveryProblemAtOnce": {
			reason: "All variable problems are reported in one pass.",
			files:  files("main.tf", "variable \"a\" {}\nvariable \"b\" { type = number }\n"),
			opts:   Options{Vars: map[string]string{"b": "x"}},
			want: []diag.Diagnostic{
				{Summary: "No value for required variable", Range: rng("main.tf", 1, 1)},
				{Summary: "Invalid value for input variable", Range: rng("main.tf", 2, 1)},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, ds := Parse(context.Background(), tc.files, tc.opts)
			if st != nil {
				t.Errorf("%s\nParse returned a stack despite errors", tc.reason)
			}
			got := make([]diag.Diagnostic, len(ds))
			for i, d := range ds {
				got[i] = d
				if i < len(tc.want) && strings.HasPrefix(d.Detail, tc.want[i].Detail) {
					got[i].Detail = tc.want[i].Detail
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParse diagnostics: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValidateMode(t *testing.T) {
	// With Validate, a variable without a value is unknown rather than an error, and
	// validation rules that depend on it are not evaluated.
	st := mustParse(t, files("main.tf", `
variable "env" {
  type = string
  validation {
    condition     = var.env != "x"
    error_message = "not x"
  }
}
resource "time_static" "t" {
  count = 2
}
`), Options{Validate: true})
	if v := param(t, st, "env").Value; v.IsKnown() || !v.Type().Equals(cty.String) {
		t.Errorf("var.env = %#v, want an unknown string", v)
	}
	if len(st.Resources) != 2 {
		t.Errorf("Resources = %d, want 2", len(st.Resources))
	}
}

func TestEnvComplexValue(t *testing.T) {
	st := mustParse(t, files("main.tf", `variable "zones" { type = list(string) }`), Options{Env: map[string]string{"zones": `["a", "b"]`}})
	want := cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})
	if v := param(t, st, "zones").Value; !v.RawEquals(want) {
		t.Errorf("TF_VAR_zones = %#v, want %#v", v, want)
	}
}
