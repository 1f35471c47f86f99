package e2e

// Parity with the terraform CLI: the same configuration, run by `terraform apply` and by
// `cairn deploy` with the same provider binaries from the same mirror, must leave the same
// attributes, plan the same actions for a change, and reject the same bad input at the same
// place.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

const timeHeader = `terraform {
  required_providers {
    time = { source = "hashicorp/time" }
  }
}
`

const cairntestHeader = `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
  }
}
`

// parityCase is a configuration applied by both tools, then changed and planned by both.
type parityCase struct {
	reason   string
	protocol int    // of the cairntest provider in the mirror
	v1, v2   string // main.tf before and after the change
	// generated lists what differs from run to run: "type.attr" or "address.*".
	generated []string
	cbd       []string // addresses with create_before_destroy
	// want is the plan of v2 that the test expects of terraform (it checks itself).
	want map[string][]string
}

func timeParity() parityCase {
	return parityCase{
		reason:   "hashicorp/time (protocol 5): fixed times, count, a generated time, create_before_destroy",
		protocol: 5,
		v1: timeHeader + `resource "time_static" "fixed" {
  rfc3339  = "2024-01-02T03:04:05Z"
  triggers = { k = "a" }
}
resource "time_offset" "o" {
  count        = 2
  base_rfc3339 = time_static.fixed.rfc3339
  offset_days  = count.index + 1
}
resource "time_static" "now" {}
resource "time_static" "cbd" {
  rfc3339  = "2020-01-01T00:00:00Z"
  triggers = { k = "a" }
  lifecycle {
    create_before_destroy = true
  }
}
`,
		v2: timeHeader + `resource "time_static" "fixed" {
  rfc3339  = "2024-01-02T03:04:05Z"
  triggers = { k = "b" }
}
resource "time_offset" "o" {
  count        = 2
  base_rfc3339 = time_static.fixed.rfc3339
  offset_days  = count.index == 0 ? 1 : 5
}
resource "time_static" "cbd" {
  rfc3339  = "2020-01-01T00:00:00Z"
  triggers = { k = "b" }
  lifecycle {
    create_before_destroy = true
  }
}
resource "time_static" "added" {
  rfc3339 = "2021-01-01T00:00:00Z"
}
`,
		generated: []string{"time_static.now.*"},
		cbd:       []string{"time_static.cbd"},
		want: map[string][]string{
			"time_static.fixed": {"delete", "create"}, "time_offset.o[0]": {"no-op"}, "time_offset.o[1]": {"update"},
			"time_static.now": {"delete"}, "time_static.cbd": {"create", "delete"}, "time_static.added": {"create"},
		},
	}
}

func cairntestParity(protocol int) parityCase {
	settings := ""
	if protocol == 6 {
		settings = "  settings = { mode = \"m\" }\n"
	}
	common := `data "cairntest_echo" "e" {
  input = "hello"
}
resource "cairntest_thing" "keep" {
  name = "keep"
  tags = {}
}
`
	return parityCase{
		reason:   fmt.Sprintf("cairntest (protocol %d): nested blocks, defaults, sensitive, computed, data source", protocol),
		protocol: protocol,
		v1: cairntestHeader + common + `resource "cairntest_thing" "a" {
  name   = "a"
  size   = 1
  secret = "s3cret"
  tags   = { echo = data.cairntest_echo.e.output, n = tostring(data.cairntest_echo.e.length) }
  rule {
    port = 80
  }
  rule {
    port     = 443
    protocol = "udp"
  }
` + settings + `}
resource "cairntest_thing" "b" {
  name = "b"
  size = cairntest_thing.a.revision
  tags = { from = cairntest_thing.a.name }
}
resource "cairntest_thing" "gone" {
  name = "gone"
}
resource "cairntest_thing" "cbd" {
  name = "cbd1"
  lifecycle {
    create_before_destroy = true
  }
}
resource "cairntest_fast" "f" {
  value = "v"
}
`,
		v2: cairntestHeader + common + `resource "cairntest_thing" "a" {
  name   = "a"
  size   = 2
  secret = "s3cret"
  tags   = { echo = data.cairntest_echo.e.output, n = tostring(data.cairntest_echo.e.length) }
  rule {
    port = 80
  }
  rule {
    port     = 443
    protocol = "udp"
  }
` + settings + `}
resource "cairntest_thing" "b" {
  name = "b2"
  size = cairntest_thing.a.revision
  tags = { from = cairntest_thing.a.name }
}
resource "cairntest_thing" "cbd" {
  name = "cbd2"
  lifecycle {
    create_before_destroy = true
  }
}
resource "cairntest_thing" "added" {
  name = "added"
  rule {
    port = 8080
  }
}
resource "cairntest_fast" "f" {
  value = "w"
}
`,
		generated: []string{"cairntest_thing.id", "cairntest_thing.created_at", "cairntest_fast.id"},
		cbd:       []string{"cairntest_thing.cbd"},
		want: map[string][]string{
			"cairntest_thing.keep": {"no-op"}, "cairntest_thing.a": {"update"}, "cairntest_thing.b": {"delete", "create"},
			"cairntest_thing.gone": {"delete"}, "cairntest_thing.cbd": {"create", "delete"},
			"cairntest_thing.added": {"create"}, "cairntest_fast.f": {"update"},
		},
	}
}

// isGenerated reports whether attr of the resource at addr (of type typ) is in gen.
func isGenerated(gen []string, addr, typ, attr string) bool {
	return slices.Contains(gen, addr+".*") || slices.Contains(gen, typ+"."+attr)
}

// resourceType is the type of a resource instance address such as time_offset.o[1].
func resourceType(addr string) string {
	typ, _, _ := strings.Cut(addr, ".")
	return typ
}

// withoutGenerated drops the generated attributes of a resource's attributes.
func withoutGenerated(gen []string, addr string, attrs map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range attrs {
		if !isGenerated(gen, addr, resourceType(addr), k) {
			out[k] = v
		}
	}
	return out
}

// TestTerraformParity applies each configuration with terraform and with cairn, in separate
// directories and provider state, and compares the resulting attributes; then it changes the
// configuration and compares terraform's plan actions with cairn's preview.
func TestTerraformParity(t *testing.T) {
	cases := map[string]parityCase{
		"Time":       timeParity(),
		"Cairntest5": cairntestParity(5),
		"Cairntest6": cairntestParity(6),
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rc := providersRC(t, tc.protocol)
			root := t.TempDir()
			tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
			tf := newTFCLI(t, rc, tfDir, filepath.Join(root, "tf-things"))
			c := newCairnCLI(t, rc, filepath.Join(root, "cairn-things"))

			writeConfig(t, tfDir, tc.v1)
			writeConfig(t, cDir, tc.v1)
			tf.run("init", "-input=false")
			comparePlans(t, tc, "a new stack", tfPlan(tf), c, cDir, "parity")
			tf.run("apply", "-auto-approve", "-input=false")
			if r := c.try("deploy", "-f", cDir, "--stack", "parity"); r.err != nil {
				t.Fatalf("%s\ncairn deploy failed where terraform apply succeeded: %v\n%s", tc.reason, r.err, r.all())
			}

			want := map[string]map[string]any{} // terraform's state, masked as cairn masks
			for _, r := range tf.show().Values.RootModule.Resources {
				if r.Mode == "managed" {
					want[r.Address] = withoutGenerated(tc.generated, r.Address, masked(r.Values, r.SensitiveValues).(map[string]any))
				}
			}
			if len(want) == 0 {
				t.Fatalf("terraform show -json lists no managed resources")
			}
			got := map[string]map[string]any{}
			for _, r := range c.describe("parity").Resources {
				a, _ := r.Attributes.(map[string]any)
				got[r.LogicalID] = withoutGenerated(tc.generated, r.LogicalID, a)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nattributes after apply: -terraform show -json +cairn describe -o json:\n%s", tc.reason, diff)
			}

			writeConfig(t, tfDir, tc.v2)
			writeConfig(t, cDir, tc.v2)
			wantPlan := tfPlan(tf)
			if diff := cmp.Diff(tc.want, wantPlan); diff != "" {
				t.Fatalf("%s\nthe test's expectation of terraform's plan is wrong: -want +terraform:\n%s", tc.reason, diff)
			}
			comparePlans(t, tc, "the change", wantPlan, c, cDir, "parity")
		})
	}
}

// tfPlan is `terraform plan`'s actions by managed resource address.
func tfPlan(tf *tfCLI) map[string][]string {
	tf.t.Helper()
	tf.run("plan", "-out", "p", "-input=false")
	plan := map[string][]string{}
	for _, rc := range tf.show("p").ResourceChanges {
		if rc.Mode == "managed" {
			plan[rc.Address] = rc.Change.Actions
		}
	}
	return plan
}

// comparePlans compares terraform's plan actions with those of cairn's preview of dir.
func comparePlans(t *testing.T, tc parityCase, what string, want map[string][]string, c *cairnCLI, dir, stack string) {
	t.Helper()
	r := c.try("preview", "-f", dir, "--stack", stack, "-o", "json")
	if r.err != nil {
		t.Errorf("%s\ncairn preview of %s failed where terraform plan succeeded: %v\n%s", tc.reason, what, r.err, r.all())
		return
	}
	var p api.PreviewResponse
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("cairn preview -o json: %v\n%s", err, r.stdout)
	}
	got := map[string][]string{}
	for _, ch := range p.Changes {
		if !strings.HasPrefix(ch.LogicalID, "data.") {
			got[ch.LogicalID] = tfActions(ch, slices.Contains(tc.cbd, ch.LogicalID))
		}
	}
	// cairn may leave unchanged resources out of a preview: they are no-ops.
	for addr, acts := range want {
		if _, ok := got[addr]; !ok && slices.Equal(acts, []string{"no-op"}) {
			got[addr] = acts
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s\nplan actions of %s: -terraform plan +cairn preview:\n%s\ncairn preview -o json:\n%s", tc.reason, what, diff, r.stdout)
	}
}

// badInput is an invalid configuration that both tools must refuse with the same error at the
// same line.
type badInput struct {
	reason  string
	src     string
	summary string // the key text of the error summary
}

var badInputs = map[string]badInput{
	// Issue 12 item 8: outputs and locals are checked before anything is created, as terraform's
	// plan does (cairn used to create the resources and end CREATE_FAILED).
	"OutputUnknownFunction": {"An output calling a function that does not exist.", cairntestHeader + `resource "cairntest_thing" "ok" {
  name = "ok"
}
output "o" { value = nosuchfn(cairntest_thing.ok.name) }
`, "Call to unknown function"},
	"LocalUndeclaredResource": {"A local referring to a resource that is not declared.", cairntestHeader + `resource "cairntest_thing" "ok" {
  name = "ok"
}
locals { n = cairntest_thing.missing.name }
output "o" { value = local.n }
`, "Reference to undeclared resource"},
	"OutputTypeError": {"An output whose value has the wrong type for a function, known before apply.", cairntestHeader + `resource "cairntest_thing" "ok" {
  name = "ok"
}
locals { labels = ["a", cairntest_thing.ok.name, ["nested"]] }
output "o" { value = join("-", local.labels) }
`, "Invalid function argument"},
	"UndeclaredVariable": {"A reference to a variable that is not declared.", cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"
  size = var.nope
}
`, "Reference to undeclared input variable"},
	"UnsupportedArgument": {"An argument the resource's schema does not have.", cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"
  nmae = "y"
}
`, "Unsupported argument"},
	"UnsupportedBlock": {"A block the resource's schema does not have.", cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"
  rules {
    port = 1
  }
}
`, "Unsupported block type"},
	"MissingRequiredArgument": {"A required argument left out.", cairntestHeader + `resource "cairntest_thing" "x" {
  size = 1
}
`, "Missing required argument"},
	"InvalidPort": {"A value the provider's validator (ValidateResourceConfig) refuses, in a nested block.", cairntestHeader + `resource "cairntest_thing" "ok" {
  name = "ok"
}
resource "cairntest_thing" "x" {
  name = "x"
  rule {
    port = 80
  }
  rule {
    port = 0
  }
}
`, "Invalid Attribute Value"},
	"InvalidFailOn": {"A value the provider's validator refuses, in a top-level attribute.", cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"

  fail_on = "sometimes"
}
`, "Invalid Attribute Value Match"},
	"UnknownResourceType": {"A resource type the provider does not have.", cairntestHeader + `resource "cairntest_thing" "ok" {
  name = "ok"
}
resource "cairntest_nope" "x" {
  name = "x"
}
`, "Invalid resource type"},
	"SensitiveOutput": {"A root output of a sensitive attribute, without sensitive = true.", cairntestHeader + `resource "cairntest_thing" "x" {
  name   = "x"
  secret = "s3cret"
}
output "s" {
  value = cairntest_thing.x.secret
}
`, "Output refers to sensitive values"},
	"WrongType": {"A value of the wrong type.", cairntestHeader + `resource "cairntest_thing" "x" {
  name = "x"
  size = "big"
}
`, "Incorrect attribute value type"},
}

// TestTerraformParityErrors: for each bad configuration, terraform apply and cairn deploy both
// fail, with an error of the same summary at the same file and line, and create nothing.
func TestTerraformParityErrors(t *testing.T) {
	for _, protocol := range []int{5, 6} {
		for name, tc := range badInputs {
			t.Run(fmt.Sprintf("%s/v%d", name, protocol), func(t *testing.T) {
				t.Parallel()
				rc := providersRC(t, protocol)
				root := t.TempDir()
				tfDir, cDir := filepath.Join(root, "tf"), filepath.Join(root, "cairn")
				tfThings, cThings := filepath.Join(root, "tf-things"), filepath.Join(root, "cairn-things")
				tf := newTFCLI(t, rc, tfDir, tfThings)
				c := newCairnCLI(t, rc, cThings)
				writeConfig(t, tfDir, tc.src)
				writeConfig(t, cDir, tc.src)

				tf.run("init", "-input=false")
				tr := tf.try("apply", "-auto-approve", "-input=false", "-json")
				if tr.err == nil {
					t.Fatalf("%s\nterraform apply succeeded:\n%s", tc.reason, tr.all())
				}
				var want *located
				for _, d := range tfDiagnostics(tr.stdout) {
					if d.Summary == tc.summary {
						want = &d
						break
					}
				}
				if want == nil {
					t.Fatalf("%s\nterraform's errors lack %q (the test is wrong):\n%s", tc.reason, tc.summary, tr.all())
				}

				cr := c.try("deploy", "-f", cDir, "--stack", "bad")
				if cr.err == nil {
					t.Fatalf("%s\ncairn deploy succeeded where terraform failed with %s:\n%s", tc.reason, want, cr.all())
				}
				var got *located
				var all []string
				for _, d := range cairnDiagnostics(cr.stderr) {
					all = append(all, d.String())
					if strings.Contains(d.Summary, tc.summary) && got == nil {
						got = &d
					}
				}
				switch {
				case got == nil:
					t.Errorf("%s\nterraform: %s\ncairn has no error %q:\n%s", tc.reason, want, tc.summary, cr.all())
				case got.File != want.File || got.Line != want.Line:
					t.Errorf("%s\nterraform: %s\ncairn:     %s (all cairn errors: %q)", tc.reason, want, got, all)
				}
				if ids := things(t, tfThings); len(ids) > 0 {
					t.Errorf("terraform created things: %v", ids)
				}
				if ids := things(t, cThings); len(ids) > 0 {
					t.Errorf("%s\ncairn created things before failing: %v", tc.reason, ids)
				}
			})
		}
	}
}
