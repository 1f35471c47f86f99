package tflang

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// ephemeralScope opens ephemeral resources from a map, counting the opens.
type ephemeralScope struct {
	moduleScope
	vals   map[string]cty.Value
	opened map[string]int
}

func (s *ephemeralScope) Ephemeral(name string) (cty.Value, error) {
	s.opened[name]++
	v, ok := s.vals[name]
	if !ok {
		return cty.NilVal, errors.New("no such thing")
	}
	return v, nil
}

func parseEphemeral(t *testing.T, files map[string]string, vars map[string]string) (*template.Stack, diag.Diagnostics) {
	t.Helper()
	fs := map[string][]byte{}
	for k, v := range files {
		fs[k] = []byte(v)
	}
	return Parse(context.Background(), fs, Options{Vars: vars})
}

func TestEphemeralVariableFlowsToProviderAndChildOutput(t *testing.T) {
	st, ds := parseEphemeral(t, map[string]string{
		"main.tf": `
variable "secret" {
  type      = string
  ephemeral = true
}
locals { l = "${var.secret}-x" }
module "m" {
  source = "./mod"
  in     = local.l
}
provider "time" {
  alias = "a"
  x     = module.m.out
}
output "o" { value = ephemeralasnull(module.m.out) }
output "plain" { value = "p" }
`,
		"mod/main.tf": `
variable "in" {
  type      = string
  ephemeral = true
}
output "out" {
  value     = var.in
  ephemeral = true
}
`}, map[string]string{"secret": "s3cr3t"})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if p := st.Parameters[0]; !p.Ephemeral || !IsEphemeral(p.Value) {
		t.Errorf("parameter %s: Ephemeral %v, value %#v; want an ephemeral parameter", p.Name, p.Ephemeral, p.Value)
	}
	cfg, ds := st.Provider("provider.time.a").Config.Eval(moduleScope{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	x := cfg.GetAttr("x")
	if !IsEphemeral(x) {
		t.Errorf("provider argument %#v is not ephemeral", x)
	}
	if plain, _ := x.Unmark(); plain.AsString() != "s3cr3t-x" {
		t.Errorf("provider argument = %#v", plain)
	}
	o, ds := st.Outputs[0].Value.Eval(moduleScope{})
	if ds.HasErrors() || !o.IsNull() || IsEphemeral(o) {
		t.Errorf("ephemeralasnull output = %#v, %v; want a null without the mark", o, ds)
	}
}

func TestEphemeralValueRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		files   map[string]string
		summary string
		file    string
		line    int
	}{
		"managed resource argument": {map[string]string{"main.tf": `
variable "secret" {
  ephemeral = true
}
locals { l = upper(var.secret) }
resource "time_static" "t" {
  triggers = { a = local.l }
}
`}, "Invalid use of ephemeral value", "main.tf", 7},
		"root output": {map[string]string{"main.tf": `
variable "secret" {
  ephemeral = true
}
output "o" { value = var.secret }
`}, "Ephemeral value not allowed", "main.tf", 5},
		"root ephemeral output": {map[string]string{"main.tf": `
output "e" {
  value     = "a"
  ephemeral = true
}
`}, "Ephemeral output not allowed", "main.tf", 2},
		"module variable not ephemeral": {map[string]string{"main.tf": `
variable "secret" {
  ephemeral = true
}
module "m" {
  source = "./mod"
  in     = var.secret
}
output "o" { value = module.m.out }
`, "mod/main.tf": `
variable "in" {}
output "out" { value = "x" }
`}, "Ephemeral value not allowed", "main.tf", 7},
		"child output not ephemeral": {map[string]string{"main.tf": `
variable "secret" {
  ephemeral = true
}
module "m" {
  source = "./mod"
  in     = var.secret
}
output "o" { value = ephemeralasnull(module.m.out) }
`, "mod/main.tf": `
variable "in" {
  ephemeral = true
}
output "out" { value = var.in }
`}, "Ephemeral value not allowed", "mod/main.tf", 5},
		"ephemeral resource in a data source": {map[string]string{"main.tf": `
ephemeral "random_password" "p" {
  length = 8
}
data "time_echo" "e" {
  in = ephemeral.random_password.p.result
}
`}, "Invalid use of ephemeral value", "main.tf", 6},
		"undeclared ephemeral resource": {map[string]string{"main.tf": `
provider "time" {
  x = ephemeral.random_password.nope.result
}
resource "time_static" "t" {}
`}, "Reference to undeclared resource", "main.tf", 3},
		"provider needs its own ephemeral resource": {map[string]string{"main.tf": `
ephemeral "random_password" "p" {
  length = 8
}
provider "random" {
  x = ephemeral.random_password.p.result
}
`}, "Cycle in provider configuration", "main.tf", 5},
	} {
		t.Run(name, func(t *testing.T) {
			var vars map[string]string
			if strings.Contains(tc.files["main.tf"], `variable "secret"`) {
				vars = map[string]string{"secret": "s3cr3t"}
			}
			st, ds := parseEphemeral(t, tc.files, vars)
			if !ds.HasErrors() && st != nil {
				for _, o := range st.Outputs {
					_, d := o.Value.Eval(moduleScope{})
					ds = ds.Append(d)
				}
				for _, r := range st.Resources {
					_, d := r.Properties.Eval(moduleScope{})
					ds = ds.Append(d)
				}
				for _, p := range st.Providers {
					_, d := p.Config.Eval(moduleScope{})
					ds = ds.Append(d)
				}
			}
			for _, d := range ds {
				if d.Summary == tc.summary && d.Range.Filename == tc.file && d.Range.Line == tc.line {
					return
				}
			}
			t.Fatalf("want %q at %s:%d, got %v", tc.summary, tc.file, tc.line, ds)
		})
	}
}

func TestEphemeralResourceBlocks(t *testing.T) {
	st, ds := parseEphemeral(t, map[string]string{"main.tf": `
resource "time_static" "before" {}
ephemeral "random_password" "p" {
  count      = 2
  length     = 8 + count.index
  depends_on = [time_static.before]
}
ephemeral "random_bytes" "unused" {
  for_each = toset(["a"])
  length   = 4
}
locals { pw = ephemeral.random_password.p[1].result }
provider "time" {
  x = local.pw
}
resource "time_static" "after" {
  triggers = { ok = tostring(ephemeralasnull(ephemeral.random_password.p[0].result) == null) }
}
`}, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	var names []string
	for _, r := range st.Ephemerals {
		names = append(names, r.Name)
		if r.Mode != template.Ephemeral || r.Provider != "provider.random" {
			t.Errorf("%s: mode %q provider %q", r.Name, r.Mode, r.Provider)
		}
	}
	want := []string{`ephemeral.random_password.p[0]`, `ephemeral.random_password.p[1]`, `ephemeral.random_bytes.unused["a"]`}
	if len(names) != len(want) {
		t.Fatalf("ephemerals %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("ephemerals %v, want %v", names, want)
		}
	}
	for _, r := range st.Resources {
		if r.Mode == template.Ephemeral {
			t.Errorf("%s is among the stack's resources", r.Name)
		}
	}
	prov := st.Provider("provider.time")
	has := map[string]bool{}
	for _, d := range prov.DependsOn {
		has[d] = true
	}
	if !has["time_static.before"] || !has["provider.random"] {
		t.Errorf("provider.time depends on %v; want time_static.before (through the ephemeral resource's depends_on) and provider.random", prov.DependsOn)
	}
	// Opened through the scope, only the instance used, and marked ephemeral.
	sc := &ephemeralScope{vals: map[string]cty.Value{
		`ephemeral.random_password.p[0]`: cty.ObjectVal(map[string]cty.Value{"result": cty.StringVal("aaaaaaaa")}),
		`ephemeral.random_password.p[1]`: cty.ObjectVal(map[string]cty.Value{"result": cty.StringVal("bbbbbbbbb")}),
	}, opened: map[string]int{}}
	cfg, ds := prov.Config.Eval(sc)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	x := cfg.GetAttr("x")
	if plain, _ := x.Unmark(); !IsEphemeral(x) || plain.AsString() != "bbbbbbbbb" {
		t.Errorf("provider x = %#v", x)
	}
	after := st.Resource("time_static.after")
	v, ds := after.Properties.Eval(sc)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if got := v.GetAttr("triggers").GetAttr("ok"); got.AsString() != "true" {
		t.Errorf("triggers.ok = %#v", got)
	}
	// An ephemeral resource that cannot be opened fails the evaluation at the reference.
	delete(sc.vals, `ephemeral.random_password.p[1]`)
	_, ds = prov.Config.Eval(sc)
	if !ds.HasErrors() || ds[0].Summary != "Failed to open ephemeral resource" {
		t.Errorf("got %v; want Failed to open ephemeral resource", ds)
	}
}

func TestWithoutEphemeral(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{"a": markEphemeral(cty.StringVal("x")), "b": cty.StringVal("y")})
	got := WithoutEphemeral(v)
	if IsEphemeral(got) || !got.GetAttr("a").IsNull() || got.GetAttr("b").AsString() != "y" {
		t.Errorf("WithoutEphemeral = %#v", got)
	}
}
