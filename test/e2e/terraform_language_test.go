package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// languageConfig uses what issue 12 found wrong or missing in cairn's language: terraform's
// functions (coalesce skipping "", regex replace, index of a value, lookup with a null
// default, cidrsubnet), file() relative to the root module, a dynamic block in a provider
// schema's nested block, an integer above 2^53 and a null output.
const languageConfig = cairntestHeader + `variable "ports" {
  default = [{ port = 80, protocol = "tcp" }, { port = 443, protocol = "udp" }]
}
resource "cairntest_thing" "d" {
  name = coalesce("", "dyn")
  size = index([5, 6, 7], 7)
  tags = {
    motd = trimspace(file("${path.module}/motd.txt"))
    sub  = replace("a1b22", "/[0-9]+/", "-")
    none = lookup({}, "x", null) == null ? "null" : "x"
    cidr = cidrsubnet("10.0.0.0/16", 8, 2)
    tmpl = templatefile("hello.tpl", { names = ["a", "b"] })
  }
  dynamic "rule" {
    for_each = var.ports
    iterator = r
    content {
      port     = r.value.port
      protocol = r.value.protocol
    }
  }
}
output "big" { value = 9007199254740993 }
output "nothing" { value = null }
output "rules" { value = cairntest_thing.d.rule }
output "tags" { value = cairntest_thing.d.tags }
`

// TestTerraformLanguage: the same configuration, in ./infra of a project directory, applied
// by terraform -chdir=infra and by cairn deploy -f ./infra from the project directory, gives
// the same attributes and the same outputs (issue 12 items 1, 2, 3, 4, 6, 9).
func TestTerraformLanguage(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	write := func(dir string) {
		infra := filepath.Join(dir, "infra")
		writeConfig(t, infra, languageConfig)
		for name, text := range map[string]string{"motd.txt": "hello from infra\n", "hello.tpl": "%{ for n in names }<${n}>%{ endfor }"} {
			if err := os.WriteFile(filepath.Join(infra, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tfProject, cairnProject := t.TempDir(), t.TempDir()
	write(tfProject)
	write(cairnProject)

	tfThings := filepath.Join(t.TempDir(), "things")
	tf := newTFCLI(t, rc, tfProject, tfThings)
	tf.run("-chdir=infra", "init")
	tf.run("-chdir=infra", "apply", "-auto-approve")
	var tfOut map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(tf.run("-chdir=infra", "output", "-json")), &tfOut); err != nil {
		t.Fatal(err)
	}
	tfVals := map[string]string{}
	for name, o := range tfOut {
		tfVals[name] = compact(t, o.Value)
	}

	c := newCairnCLI(t, rc, filepath.Join(t.TempDir(), "things"))
	r := execIn(cairnProject, c.env, c.bin, "deploy", "-f", "./infra", "--stack", "lang", "--dir", c.dir)
	if r.err != nil {
		t.Fatalf("cairn deploy -f ./infra: %v\n%s", r.err, r.all())
	}
	var st struct {
		Outputs []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(c.run("describe", "--stack", "lang", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	cairnVals := map[string]string{}
	for _, o := range st.Outputs {
		cairnVals[o.Name] = compact(t, o.Value)
	}
	if diff := cmp.Diff(tfVals, cairnVals); diff != "" {
		t.Errorf("outputs: -terraform +cairn:\n%s", diff)
	}
	if tfVals["big"] != "9007199254740993" {
		t.Errorf("terraform's big output = %s", tfVals["big"])
	}
	if _, listed := cairnVals["nothing"]; listed {
		t.Errorf("cairn lists the null output; terraform does not")
	}
	var shown tfShow
	if err := json.Unmarshal([]byte(tf.run("-chdir=infra", "show", "-json")), &shown); err != nil || len(shown.Values.RootModule.Resources) != 1 {
		t.Fatalf("terraform show: %v %+v", err, shown)
	}
	tfAttrs := shown.Values.RootModule.Resources[0].Values
	cairnAttrs := attrs(t, c.describe("lang"), "cairntest_thing.d")
	for _, k := range []string{"name", "size", "tags", "rule"} {
		if fmt.Sprint(tfAttrs[k]) != fmt.Sprint(cairnAttrs[k]) {
			t.Errorf("cairntest_thing.d.%s = %v in cairn, %v in terraform", k, cairnAttrs[k], tfAttrs[k])
		}
	}
}

// compact is a JSON value without insignificant space.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
