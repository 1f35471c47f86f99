package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

const conditionsConfig = `
variable "n" {
  type    = number
  default = 1
}
resource "time_static" "t" {
  count = 2
  lifecycle {
    precondition {
      condition     = var.n + count.index < 2
      error_message = "n too big for ${count.index}."
    }
    postcondition {
      condition     = self.year > 2000
      error_message = "too old"
    }
  }
}
output "o" {
  value = var.n
  precondition {
    condition     = var.n > 0
    error_message = "n must be positive"
  }
}
check "c" {
  data "time_echo" "e" {
    input = var.n
  }
  assert {
    condition     = data.time_echo.e.out == "ok"
    error_message = "echo says ${data.time_echo.e.out}"
  }
}
`

func conditionsParse(t *testing.T, src string, vars map[string]string) *template.Stack {
	t.Helper()
	st, ds := Parse(context.Background(), map[string][]byte{"main.tf": []byte(src)}, Options{Vars: vars})
	if ds.HasErrors() {
		t.Fatalf("Parse: %v", ds.Err())
	}
	return st
}

// one returns the only diagnostic of ds, failing otherwise.
func one(t *testing.T, ds diag.Diagnostics) diag.Diagnostic {
	t.Helper()
	if len(ds) != 1 {
		t.Fatalf("want one diagnostic, got %d: %v", len(ds), ds)
	}
	return ds[0]
}

func TestResourceConditions(t *testing.T) {
	st := conditionsParse(t, conditionsConfig, nil)
	t0, t1 := st.Resource("time_static.t[0]"), st.Resource("time_static.t[1]")
	if len(t0.Preconditions) != 1 || len(t0.Postconditions) != 1 {
		t.Fatalf("conditions of t[0]: %d pre, %d post", len(t0.Preconditions), len(t0.Postconditions))
	}
	// preconditions see the instance's count.index; terraform's summary, the condition's place
	if ds := template.CheckAll(t0.Preconditions, moduleScope{}, cty.NilVal); len(ds) != 0 {
		t.Fatalf("t[0] precondition: %v", ds)
	}
	d := one(t, template.CheckAll(t1.Preconditions, moduleScope{}, cty.NilVal))
	if d.Severity != diag.Error || d.Summary != "Resource precondition failed" || !strings.HasPrefix(d.Detail, "n too big for 1.") ||
		d.Range != (diag.Range{Filename: "main.tf", Line: 10, Column: 23}) {
		t.Fatalf("t[1] precondition: %#v", d)
	}
	// postconditions read self; unknown is not a failure yet
	if ds := template.CheckAll(t0.Postconditions, moduleScope{}, cty.DynamicVal); len(ds) != 0 {
		t.Fatalf("unknown self: %v", ds)
	}
	old := cty.ObjectVal(map[string]cty.Value{"year": cty.NumberIntVal(1999)})
	d = one(t, template.CheckAll(t0.Postconditions, moduleScope{}, old))
	if d.Summary != "Resource postcondition failed" || !strings.HasPrefix(d.Detail, "too old") || d.Range.Line != 14 {
		t.Fatalf("postcondition: %#v", d)
	}
	// the precondition's references are dependencies
	if got := st.Resource("time_static.t[0]").DependsOn; len(got) != 0 {
		t.Fatalf("depends on %v", got)
	}
}

func TestOutputPrecondition(t *testing.T) {
	st := conditionsParse(t, conditionsConfig, map[string]string{"n": "-1"})
	o := st.Outputs[0]
	d := one(t, template.CheckAll(o.Preconditions, moduleScope{}, cty.NilVal))
	if d.Summary != "Module output value precondition failed" || !strings.HasPrefix(d.Detail, "n must be positive") || d.Range.Line != 22 {
		t.Fatalf("output precondition: %#v", d)
	}
}

func TestCheckBlock(t *testing.T) {
	st := conditionsParse(t, conditionsConfig, nil)
	data := st.Resource("data.time_echo.e")
	if data == nil || data.Check != "check.c" || data.Mode != template.Data {
		t.Fatalf("scoped data source: %+v", data)
	}
	if len(st.Checks) != 1 || st.Checks[0].Name != "check.c" || len(st.Checks[0].Asserts) != 1 {
		t.Fatalf("checks: %+v", st.Checks)
	}
	a := st.Checks[0].Asserts
	if ds := template.CheckAll(a, moduleScope{}, cty.NilVal); len(ds) != 0 { // not read yet: unknown
		t.Fatalf("unknown assertion: %v", ds)
	}
	read := moduleScope{"data.time_echo.e": cty.ObjectVal(map[string]cty.Value{"out": cty.StringVal("bad")})}
	d := one(t, template.CheckAll(a, read, cty.NilVal))
	if d.Severity != diag.Warning || d.Summary != "Check block assertion failed" || !strings.HasPrefix(d.Detail, "echo says bad") {
		t.Fatalf("assertion: %#v", d)
	}
}

func TestConditionErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		src, summary string
		line         int
	}{
		"constant condition": {`resource "time_static" "t" {
  lifecycle {
    precondition {
      condition     = true
      error_message = "x"
    }
  }
}`, "Invalid precondition expression", 4},
		"missing error_message": {`resource "time_static" "t" {
  lifecycle {
    postcondition {
      condition = self.year > 0
    }
  }
}`, "Missing required argument", 3},
		"self in precondition": {`resource "time_static" "t" {
  lifecycle {
    precondition {
      condition     = self.year > 0
      error_message = "x"
    }
  }
}`, `Invalid "self" reference`, 4},
		"refers to itself": {`resource "time_static" "t" {
  lifecycle {
    postcondition {
      condition     = time_static.t.year > 0
      error_message = "x"
    }
  }
}`, "Invalid reference in postcondition", 4},
		"check without assert": {`check "c" {
  data "time_echo" "e" {}
}`, "Zero assert blocks", 1},
		"scoped data outside its check": {`check "c" {
  data "time_echo" "e" {}
  assert {
    condition     = data.time_echo.e.out == "ok"
    error_message = "x"
  }
}
output "o" { value = data.time_echo.e.out }`, "Reference to scoped resource", 8},
	} {
		t.Run(name, func(t *testing.T) {
			st, ds := Parse(context.Background(), map[string][]byte{"main.tf": []byte(tc.src)}, Options{})
			if !ds.HasErrors() && st != nil {
				// evaluation-time errors: the output, or the conditions with an unknown scope
				for _, o := range st.Outputs {
					_, d := o.Value.Eval(moduleScope{})
					ds = ds.Append(d)
				}
				for _, r := range st.Resources {
					ds = ds.Append(template.CheckAll(r.Preconditions, moduleScope{}, cty.NilVal))
				}
			}
			for _, d := range ds {
				if d.Summary == tc.summary && d.Range.Line == tc.line {
					return
				}
			}
			t.Fatalf("want %q at line %d, got %v", tc.summary, tc.line, ds)
		})
	}
}
