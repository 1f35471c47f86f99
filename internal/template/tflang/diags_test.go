package tflang

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/template"
)

// TestDiagnostics checks that every error names its file, line and column and quotes the
// offending source line, as terraform shows it. The configuration is main.tf (which is
// valid) plus the file under test, so the file name matters.
func TestDiagnostics(t *testing.T) {
	const main = "variable \"n\" {\n  default = 1\n}\n"
	cases := map[string]struct {
		reason  string
		file    string // name of the file holding src; b.tf unless set
		src     string
		eval    bool // the error shows when the resource body or output is evaluated, not at Parse
		summary string
		detail  string // a substring of the detail
		line    int
		col     int
		text    string // the source line quoted in the detail
		// BUG(tflang module.build): errors found after resources are built (a missing output
		// value, a duplicate or missing provider configuration) come with a non-nil stack,
		// although a stack with errors should be nil ("stop"). Such cases only log it.
		stackDespiteErrors bool
	}{
		"UndeclaredVariableInCount": {
			reason:  "count is evaluated at Parse time.",
			src:     "resource \"time_static\" \"t\" {\n  count = var.nope\n}\n",
			summary: "Reference to undeclared input variable", detail: `An input variable with the name "nope" has not been declared.`,
			line: 2, col: 11, text: "  count = var.nope",
		},
		"UndeclaredVariableInBody": {
			reason:  "Every expression is checked at Parse, as terraform validate does (issue 12 item 8).",
			src:     "resource \"time_static\" \"t\" {\n  triggers = { a = var.nope }\n}\n",
			summary: "Reference to undeclared input variable", detail: `"nope" has not been declared`,
			line: 2, col: 20, text: "  triggers = { a = var.nope }",
		},
		"UndeclaredLocal": {
			src:     "output \"o\" {\n  value = local.nope\n}\n",
			summary: "Reference to undeclared local value", detail: `A local value with the name "nope" has not been declared.`,
			line: 2, col: 11, text: "  value = local.nope",
		},
		"UndeclaredResource": {
			src:     "resource \"time_static\" \"t\" {\n  count = length(time_static.nope)\n}\n",
			summary: "Reference to undeclared resource", detail: `A managed resource "time_static" "nope" has not been declared in the root module.`,
			line: 2, col: 18, text: "  count = length(time_static.nope)",
		},
		"CountOutsideCount": {
			src: "resource \"time_static\" \"t\" {\n  triggers = { i = count.index }\n}\n", eval: true,
			summary: `Reference to "count" in non-counted context`, detail: `only when the "count" argument is set`,
			line: 2, col: 20, text: "  triggers = { i = count.index }",
		},
		"LocalCycle": {
			src: "locals {\n  a = local.b\n  b = local.a\n}\noutput \"o\" { value = local.a }\n", eval: true,
			summary: "Cycle in local values", detail: "refers to itself", line: 3, col: 7, text: "  b = local.a",
		},
		"BadTypeKeyword": {
			reason:  "A misspelled type constraint.",
			src:     "variable \"x\" {\n  type = strin\n}\n",
			summary: "Invalid type specification", detail: `The keyword "strin" is not a valid type specification.`,
			line: 2, col: 10, text: "  type = strin",
		},
		"UnknownBlock": {
			src:     "\nresourc \"time_static\" \"t\" {}\n",
			summary: "Unsupported block type", detail: `Blocks of type "resourc" are not expected here. Did you mean "resource"?`,
			line: 2, col: 1, text: `resourc "time_static" "t" {}`,
		},
		"UnknownVariableArgument": {
			src:     "variable \"x\" {\n  defualt = 1\n}\n",
			summary: "Unsupported argument", detail: `An argument named "defualt" is not expected here. Did you mean "default"?`,
			line: 2, col: 3, text: "  defualt = 1",
		},
		"UnknownLifecycleArgument": {
			src:     "resource \"time_static\" \"t\" {\n  lifecycle {\n    prevent = true\n  }\n}\n",
			summary: "Unsupported argument", detail: `An argument named "prevent" is not expected here.`,
			line: 3, col: 5, text: "    prevent = true",
		},
		"Syntax": {
			src:     "resource \"time_static\" \"t\" {\n  triggers = {\n}\n",
			summary: "Unclosed configuration block", detail: "There is no closing brace for this block",
			line: 1, col: 28, text: `resource "time_static" "t" {`,
		},
		"JSONSyntax": {
			file: "b.tf.json", src: "{\n  \"resource\": {\n    \"time_static\": {\"t\": {}},\n  }\n}\n",
			summary: "Trailing comma in object", detail: "JSON does not permit a trailing comma",
			line: 3, col: 29, text: `    "time_static": {"t": {}},`,
		},
		"CountAndForEach": {
			src:     "resource \"time_static\" \"t\" {\n  count    = 1\n  for_each = {}\n}\n",
			summary: `Invalid combination of "count" and "for_each"`, detail: "mutually-exclusive",
			line: 3, col: 3, text: "  for_each = {}",
		},
		"NegativeCount": {
			src:     "resource \"time_static\" \"t\" {\n  count = -1\n}\n",
			summary: "Invalid count argument", detail: "must be a whole number greater than or equal to zero",
			line: 2, col: 11, text: "  count = -1",
		},
		"ForEachList": {
			src:     "resource \"time_static\" \"t\" {\n  for_each = [\"a\"]\n}\n",
			summary: "Invalid for_each argument", detail: "must be a map, or set of strings, and you have provided a value of type tuple",
			line: 2, col: 14, text: `  for_each = ["a"]`,
		},
		"DuplicateResource": {
			src:     "resource \"time_static\" \"t\" {}\n\nresource \"time_static\" \"t\" {}\n",
			summary: `Duplicate resource "time_static.t" configuration`, detail: "already declared",
			line: 3, col: 1, text: `resource "time_static" "t" {}`,
		},
		"DuplicateOutput": {
			src:     "output \"o\" { value = 1 }\noutput \"o\" { value = 2 }\n",
			summary: "Duplicate output definition", detail: `An output named "o" was already defined.`,
			line: 2, col: 8, text: `output "o" { value = 2 }`,
		},
		"DuplicateLocal": {
			src:     "locals { a = 1 }\nlocals {\n  a = 2\n}\n",
			summary: "Duplicate local value definition", detail: `A local value named "a" was already defined.`,
			line: 3, col: 3, text: "  a = 2",
		},
		"OutputWithoutValue": {
			src:     "output \"o\" {\n  description = \"x\"\n}\n",
			summary: "Missing required argument", detail: `The argument "value" is required`,
			line: 1, col: 1, text: `output "o" {`, stackDespiteErrors: true,
		},
		"BadProviderSource": {
			src:     "terraform {\n  required_providers {\n    x = { source = \"a/b/c/d\" }\n  }\n}\n",
			summary: "Invalid provider source string", detail: `expected [hostname/]namespace/type`,
			line: 3, col: 5, text: `    x = { source = "a/b/c/d" }`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "b.tf"
			}
			st, ds := Parse(context.Background(), files("main.tf", main, file, tc.src), Options{})
			if tc.eval {
				if ds.HasErrors() {
					t.Fatalf("%s\nParse: %v", tc.reason, ds.Err())
				}
				ds = nil
				for _, r := range st.Resources {
					_, d := r.Properties.(template.BodyExpr).EvalSpec(scope{}, hcldec.ObjectSpec{"triggers": &hcldec.AttrSpec{Name: "triggers", Type: cty.Map(cty.String)}})
					ds = append(ds, d...)
				}
				for _, o := range st.Outputs {
					_, d := o.Value.Eval(scope{})
					ds = append(ds, d...)
				}
			} else if st != nil && tc.stackDespiteErrors {
				t.Logf("BUG(tflang module.build): Parse returned a stack despite errors")
			} else if st != nil {
				t.Errorf("%s\nParse returned a stack despite errors", tc.reason)
			}
			if len(ds) == 0 {
				t.Fatalf("%s\nno diagnostics, want %q", tc.reason, tc.summary)
			}
			d := ds[0]
			if d.Severity != diag.Error {
				t.Errorf("severity %v, want error", d.Severity)
			}
			if diff := cmp.Diff(rng(file, tc.line, tc.col), d.Range); diff != "" {
				t.Errorf("%s\n%s: range -want +got:\n%s\n(diagnostic: %v)", tc.reason, tc.summary, diff, d)
			}
			if d.Summary != tc.summary {
				t.Errorf("%s\nsummary %q, want %q", tc.reason, d.Summary, tc.summary)
			}
			if !strings.Contains(d.Detail, tc.detail) {
				t.Errorf("%s\ndetail %q does not contain %q", tc.reason, d.Detail, tc.detail)
			}
			if quote := fmt.Sprintf("\n\n  %d: %s", tc.line, tc.text); !strings.HasSuffix(d.Detail, quote) {
				t.Errorf("%s\ndetail %q does not end with the source line %q", tc.reason, d.Detail, quote)
			}
		})
	}
}
