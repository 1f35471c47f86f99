package e2e

// Custom conditions and check blocks against the terraform CLI: the same configuration, the
// same provider binaries, the same failures (text, place, exit status) and warnings.

import (
	"strconv"
	"strings"
	"testing"
)

// conditionCase is a configuration both tools apply; a failing one must fail in both with
// summary at the same line and detail in the message, a warning one must succeed in both
// and warn.
type conditionCase struct {
	reason  string
	src     string
	fails   bool
	summary string
	detail  string
	line    int
	created bool // the failure comes after the resource was created (a postcondition)
}

var conditionCases = map[string]conditionCase{
	"precondition": {
		reason: "a failing precondition stops the resource before its provider is called",
		src: timeHeader + `variable "n" {
  default = 3
}
resource "time_static" "t" {
  rfc3339 = "2024-01-02T03:04:05Z"
  lifecycle {
    precondition {
      condition     = var.n < 2
      error_message = "n must be below 2, not ${var.n}."
    }
  }
}
`,
		fails: true, summary: "Resource precondition failed", detail: "n must be below 2, not 3.", line: 13,
	},
	"postcondition": {
		reason: "a postcondition unknown at plan reads self after the apply and fails it",
		src: timeHeader + `resource "time_static" "t" {
  lifecycle {
    postcondition {
      condition     = self.year < 2000
      error_message = "The year is not before 2000."
    }
  }
}
`,
		fails: true, summary: "Resource postcondition failed", detail: "The year is not before 2000.", line: 9, created: true,
	},
	"output precondition": {
		reason: "an output's precondition unknown at plan fails the apply",
		src: timeHeader + `resource "time_static" "t" {}
output "year" {
  value = time_static.t.year
  precondition {
    condition     = time_static.t.year < 2000
    error_message = "The year is not before 2000."
  }
}
`,
		fails: true, summary: "Module output value precondition failed", detail: "The year is not before 2000.", line: 10, created: true,
	},
	"check": {
		reason: "a failing assertion of a check block is a warning; the apply succeeds",
		src: timeHeader + `resource "time_static" "t" {
  rfc3339 = "2024-01-02T03:04:05Z"
}
check "year" {
  assert {
    condition     = time_static.t.year == 2023
    error_message = "year is ${time_static.t.year}."
  }
}
output "year" {
  value = time_static.t.year
  precondition {
    condition     = time_static.t.year > 2000
    error_message = "too old"
  }
}
`,
		summary: "Check block assertion failed", detail: "year is 2024.", line: 11,
	},
}

func TestTerraformConditions(t *testing.T) {
	for name, tc := range conditionCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rc := providersRC(t, 5)
			w := newTwins(t, rc, tc.src)
			tf, c, cDir := w.tf, w.c, w.cDir

			tr := tf.try("apply", "-auto-approve", "-input=false")
			cr := c.try("deploy", "-f", cDir, "--stack", "s")
			if (tr.err != nil) != tc.fails {
				t.Fatalf("%s\nterraform apply: err=%v (the test is wrong)\n%s", tc.reason, tr.err, tr.all())
			}
			if (cr.err != nil) != tc.fails {
				t.Fatalf("%s\ncairn deploy: err=%v, terraform: err=%v\n%s", tc.reason, cr.err, tr.err, cr.all())
			}
			kind := "Error: "
			if !tc.fails {
				kind = "Warning: "
			}
			for _, want := range []string{kind + tc.summary, "line " + strconv.Itoa(tc.line), tc.detail} {
				if !strings.Contains(tr.all(), want) {
					t.Fatalf("terraform lacks %q (the test is wrong):\n%s", want, tr.all())
				}
			}
			// cairn: "main.tf:LINE:COL: summary: detail", in the diagnostics or in an event
			wantAt := "main.tf:" + strconv.Itoa(tc.line) + ":"
			found := false
			for _, line := range strings.Split(cr.all(), "\n") {
				if i := strings.Index(line, wantAt); i >= 0 && strings.Contains(line[i:], tc.summary+": "+tc.detail) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s\ncairn lacks %q at %s (terraform: %s):\n%s", tc.reason, tc.summary+": "+tc.detail, wantAt, tr.all(), cr.all())
			}
			st := tf.show()
			if got := len(st.Values.RootModule.Resources) > 0; got != (tc.created || !tc.fails) {
				t.Fatalf("terraform state has %d resources (the test is wrong)", len(st.Values.RootModule.Resources))
			}
			rows := 0
			if tc.created || !tc.fails { // else cairn refused it before making the stack
				rows = len(c.describe("s").Resources)
			}
			if (rows > 0) != (tc.created || !tc.fails) {
				t.Errorf("%s\ncairn has %d resources, terraform %d", tc.reason, rows, len(st.Values.RootModule.Resources))
			}
			if tc.fails {
				return
			}
			// the next plan knows the values: both warn again, and change nothing
			tp := tf.run("plan", "-input=false")
			cp := c.try("preview", "-f", cDir, "--stack", "s")
			if !strings.Contains(tp, "Warning: "+tc.summary) || !strings.Contains(tp, "No changes") {
				t.Fatalf("terraform plan (the test is wrong):\n%s", tp)
			}
			if cp.err != nil || !strings.Contains(cp.stderr, wantAt) || !strings.Contains(cp.stderr, "warning: "+tc.summary) {
				t.Errorf("cairn preview does not warn as terraform plan does:\n%s", cp.all())
			}
		})
	}
}

// TestTerraformCheckScopedData reads a check block's data source (cairntest_echo) and
// asserts about it: a warning in both tools, and the data source is nowhere else.
func TestTerraformCheckScopedData(t *testing.T) {
	t.Parallel()
	src := cairntestHeader + `check "echo" {
  data "cairntest_echo" "e" {
    input = "hello"
  }
  assert {
    condition     = data.cairntest_echo.e.length == 3
    error_message = "echo of ${data.cairntest_echo.e.output} has length ${data.cairntest_echo.e.length}."
  }
}
`
	rc := providersRC(t, 6)
	w := newTwins(t, rc, src)
	tf, c, cDir := w.tf, w.c, w.cDir
	out := tf.run("apply", "-auto-approve", "-input=false")
	const detail = "echo of hello has length 5."
	if !strings.Contains(out, "Warning: Check block assertion failed") || !strings.Contains(out, detail) {
		t.Fatalf("terraform apply (the test is wrong):\n%s", out)
	}
	cr := c.try("deploy", "-f", cDir, "--stack", "s")
	if cr.err != nil || !strings.Contains(cr.all(), "Check block assertion failed: "+detail) {
		t.Fatalf("cairn deploy:\n%s", cr.all())
	}
	cp := c.try("preview", "-f", cDir, "--stack", "s")
	if cp.err != nil || !strings.Contains(cp.stderr, "warning: Check block assertion failed") {
		t.Fatalf("cairn preview:\n%s", cp.all())
	}
}
