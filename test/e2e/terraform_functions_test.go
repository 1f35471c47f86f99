package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTerraformProviderFunctions calls hashicorp/time's provider-defined function in an
// output, a resource argument and a local, and compares the values with terraform's; an
// unknown function of the provider is refused at validate, where terraform refuses it.
func TestTerraformProviderFunctions(t *testing.T) {
	t.Parallel()
	src := timeHeader + `locals {
  parsed = provider::time::rfc3339_parse("2023-07-25T23:43:16Z")
}
resource "time_static" "t" {
  rfc3339 = format("%d-01-02T03:04:05Z", local.parsed.year + 1)
}
output "t" {
  value = provider::time::rfc3339_parse("2023-07-25T23:43:16Z")
}
output "from_resource" {
  value = provider::time::rfc3339_parse(time_static.t.rfc3339).unix
}
`
	rc := providersRC(t, 5)
	w := newTwins(t, rc, src)
	tf, c, tfDir, cDir := w.tf, w.c, w.tfDir, w.cDir
	tf.run("apply", "-auto-approve", "-input=false")
	var tfOut map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal([]byte(tf.run("output", "-json")), &tfOut); err != nil {
		t.Fatal(err)
	}
	c.run("deploy", "-f", cDir, "--stack", "s")
	got := map[string]any{}
	for _, o := range c.describe("s").Outputs {
		got[o.Name] = o.Value
	}
	want := map[string]any{}
	for k, v := range tfOut {
		want[k] = v.Value
	}
	// one JSON form for both (describe may keep numbers exact)
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]any{}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" || len(want) != 2 {
		t.Fatalf("outputs differ from terraform's (-terraform +cairn):\n%s", d)
	}
	if a := attrs(t, c.describe("s"), "time_static.t"); a["rfc3339"] != "2024-01-02T03:04:05Z" {
		t.Fatalf("time_static.t = %v", a)
	}

	bad := timeHeader + `output "x" {
  value = provider::time::nope("2023-07-25T23:43:16Z")
}
`
	writeConfig(t, tfDir, bad)
	writeConfig(t, cDir, bad)
	tr := tf.try("validate")
	if tr.err == nil || !strings.Contains(tr.all(), "Unknown provider function") || !strings.Contains(tr.all(), `The function "nope" is not available from the provider "time".`) {
		t.Fatalf("terraform validate (the test is wrong):\n%s", tr.all())
	}
	cr := c.try("validate", "-f", cDir)
	if cr.err == nil || !strings.Contains(cr.all(), "main.tf:7:") || !strings.Contains(cr.all(), "Unknown provider function") ||
		!strings.Contains(cr.all(), `The function "nope" is not available from the provider "time".`) {
		t.Fatalf("cairn validate:\n%s", cr.all())
	}
}
