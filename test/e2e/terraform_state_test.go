package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
)

// stateConfig is a configuration with count, for_each, a module call and nested blocks, over
// the time provider and the cairntest provider (a sensitive attribute, nested rule blocks).
const stateConfig = `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
    time      = { source = "hashicorp/time" }
  }
}
variable "names" {
  type    = set(string)
  default = ["a", "b"]
}
resource "time_static" "c" {
  count    = 2
  triggers = { n = tostring(count.index) }
}
resource "cairntest_thing" "t" {
  for_each = var.names
  name     = "thing-${each.key}"
  size     = length(each.key) + 1
  secret   = "s3cret-${each.key}"
  tags     = { created = time_static.c[0].rfc3339 }
  rule {
    port = 80
  }
  rule {
    port     = 443
    protocol = "udp"
  }
}
module "m" {
  source = "./mod"
  label  = cairntest_thing.t["a"].id
}
output "ids" { value = [for t in cairntest_thing.t : t.id] }
output "times" { value = time_static.c[*].unix }
output "mod" { value = module.m.thing_id }
output "secret" {
  value     = cairntest_thing.t["b"].secret
  sensitive = true
}
`

const stateModule = `terraform {
  required_providers {
    cairntest = { source = "cairn-dev/cairntest" }
    time      = { source = "hashicorp/time" }
  }
}
variable "label" { type = string }
resource "time_offset" "o" {
  offset_days = 1
}
resource "cairntest_thing" "inner" {
  name = "inner"
  tags = { label = var.label, at = time_offset.o.rfc3339 }
  rule {
    port = 22
  }
}
output "thing_id" { value = cairntest_thing.inner.id }
`

// writeStateConfig writes the configuration and its module into a new directory.
func writeStateConfig(t *testing.T, dir string) string {
	t.Helper()
	writeConfig(t, dir, stateConfig)
	writeConfig(t, filepath.Join(dir, "mod"), stateModule)
	return dir
}

// snapshotFiles reads every file of dir, by name.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// tfStateHead is the part of a state file the tests read.
type tfStateHead struct {
	Version   int    `json:"version"`
	Serial    uint64 `json:"serial"`
	Lineage   string `json:"lineage"`
	Resources []struct {
		Module    string `json:"module"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Provider  string `json:"provider"`
		Instances []struct {
			IndexKey   any            `json:"index_key"`
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

func readStateHead(t *testing.T, file string) tfStateHead {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s tfStateHead
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// TestTerraformStatePull: cairn deploys, `cairn state pull` writes the state, and terraform
// plan with the same configuration and provider binaries has nothing to do.
func TestTerraformStatePull(t *testing.T) {
	for _, protocol := range []int{5, 6} {
		t.Run(map[int]string{5: "v5", 6: "v6"}[protocol], func(t *testing.T) {
			t.Parallel()
			rc := providersRC(t, protocol)
			thingDir := filepath.Join(t.TempDir(), "things")
			c := newCairnCLI(t, rc, thingDir)
			cfg := writeStateConfig(t, filepath.Join(t.TempDir(), "cfg"))
			c.run("deploy", "-f", cfg, "--stack", "s")

			tfDir := writeStateConfig(t, filepath.Join(t.TempDir(), "tf"))
			stateFile := filepath.Join(tfDir, "terraform.tfstate")
			c.run("state", "pull", "--stack", "s", "--out", stateFile)
			tf := newTFCLI(t, rc, tfDir, thingDir)
			tf.run("init", "-input=false")
			before := snapshotFiles(t, thingDir)
			plan := tf.try("plan", "-detailed-exitcode", "-input=false")
			if plan.err != nil || !strings.Contains(plan.stdout, "No changes.") {
				t.Fatalf("terraform plan on the pulled state: %v (want exit 0, No changes)\n%s", plan.err, plan.all())
			}
			if after := snapshotFiles(t, thingDir); !reflect.DeepEqual(before, after) {
				t.Errorf("terraform plan changed the things")
			}
			// terraform reads every output back as cairn wrote it.
			out := tf.run("output", "-json")
			var outs map[string]struct {
				Value any `json:"value"`
			}
			if err := json.Unmarshal([]byte(out), &outs); err != nil {
				t.Fatal(err)
			}
			st := c.describe("s")
			if got, want := outs["mod"].Value, attrs(t, st, "module.m.cairntest_thing.inner")["id"]; got != want {
				t.Errorf("terraform output mod = %v, want %v", got, want)
			}
			if outs["secret"].Value != "s3cret-b" {
				t.Errorf("terraform output secret = %v, want s3cret-b", outs["secret"].Value)
			}

			// A pull after a change has the same lineage and a higher serial.
			first := readStateHead(t, stateFile)
			writeConfig(t, cfg, strings.Replace(stateConfig, `default = ["a", "b"]`, `default = ["a", "b", "cc"]`, 1))
			c.run("deploy", "-f", cfg, "--stack", "s")
			again := filepath.Join(t.TempDir(), "again.tfstate")
			c.run("state", "pull", "--stack", "s", "--out", again)
			second := readStateHead(t, again)
			if second.Lineage != first.Lineage || second.Serial <= first.Serial || first.Version != 4 {
				t.Errorf("pull after a deploy: lineage %s serial %d (version %d), then lineage %s serial %d; want one lineage, a higher serial",
					first.Lineage, first.Serial, first.Version, second.Lineage, second.Serial)
			}
		})
	}
}

// TestTerraformStatePush: terraform applies, `cairn state push` adopts its state, cairn
// preview has no changes, and cairn deploy creates, updates or replaces nothing; the stack's
// attributes are terraform's.
func TestTerraformStatePush(t *testing.T) {
	for _, protocol := range []int{5, 6} {
		t.Run(map[int]string{5: "v5", 6: "v6"}[protocol], func(t *testing.T) {
			t.Parallel()
			rc := providersRC(t, protocol)
			thingDir := filepath.Join(t.TempDir(), "things")
			tfDir := writeStateConfig(t, filepath.Join(t.TempDir(), "tf"))
			tf := newTFCLI(t, rc, tfDir, thingDir)
			tf.run("init", "-input=false")
			tf.run("apply", "-auto-approve", "-input=false")
			stateFile := filepath.Join(tfDir, "terraform.tfstate")
			tfState := readStateHead(t, stateFile)

			c := newCairnCLI(t, rc, thingDir)
			cfg := writeStateConfig(t, filepath.Join(t.TempDir(), "cfg"))
			out := c.run("state", "push", stateFile, "--stack", "s", "-f", cfg)
			mustContain(t, "state push", out, "6 resource instance(s)")

			pre := c.try("preview", "-f", cfg, "--stack", "s")
			if pre.err != nil || !strings.Contains(pre.stdout, "No changes.") {
				t.Fatalf("cairn preview after the push: %v (want No changes)\n%s", pre.err, pre.all())
			}
			mustNotContain(t, "preview", pre.all(), "s3cret-")

			before := snapshotFiles(t, thingDir)
			dep := c.run("deploy", "-f", cfg, "--stack", "s")
			for _, line := range strings.Split(dep, "\n") {
				if strings.Contains(line, "_IN_PROGRESS") && !strings.Contains(line, "terraform_stack") {
					t.Errorf("deploy after the push changed a resource: %s\n%s", line, dep)
				}
			}
			if after := snapshotFiles(t, thingDir); !reflect.DeepEqual(before, after) {
				t.Errorf("deploy after the push changed the things:\nbefore %v\nafter  %v", before, after)
			}

			// The stack's attributes are terraform's.
			st := c.describe("s")
			n := 0
			for _, r := range tfState.Resources {
				for _, in := range r.Instances {
					addr := r.Type + "." + r.Name
					if r.Module != "" {
						addr = r.Module + "." + addr
					}
					switch k := in.IndexKey.(type) {
					case string:
						addr += `["` + k + `"]`
					case float64:
						addr += fmt.Sprintf("[%d]", int(k))
					}
					got := attrs(t, st, addr)
					for name, want := range in.Attributes {
						if name == "secret" && want != nil {
							if got[name] != "(sensitive value)" {
								t.Errorf("%s.secret = %v, want it masked", addr, got[name])
							}
							continue
						}
						if jsonString(got[name]) != jsonString(want) {
							t.Errorf("%s.%s = %s, terraform has %s", addr, name, jsonString(got[name]), jsonString(want))
						}
					}
					n++
				}
			}
			if n != 6 {
				t.Errorf("terraform's state has %d instances, want 6", n)
			}

			// Back out: the lineage is terraform's, the serial higher, and terraform plans nothing.
			back := filepath.Join(tfDir, "terraform.tfstate")
			c.run("state", "pull", "--stack", "s", "--out", back)
			head := readStateHead(t, back)
			if head.Lineage != tfState.Lineage || head.Serial <= tfState.Serial {
				t.Errorf("pull after push: lineage %s serial %d; terraform's was %s serial %d", head.Lineage, head.Serial, tfState.Lineage, tfState.Serial)
			}
			if plan := tf.try("plan", "-detailed-exitcode", "-input=false"); plan.err != nil {
				t.Errorf("terraform plan after push and pull: %v\n%s", plan.err, plan.all())
			}
		})
	}
}

// TestTerraformStatePushRefused: a state whose provider the configuration does not declare,
// or whose resource type the provider lacks, is refused and the stack keeps what it had.
func TestTerraformStatePushRefused(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	thingDir := filepath.Join(t.TempDir(), "things")
	c := newCairnCLI(t, rc, thingDir)
	cfg := writeStateConfig(t, filepath.Join(t.TempDir(), "cfg"))
	c.run("deploy", "-f", cfg, "--stack", "s")
	good := filepath.Join(t.TempDir(), "good.tfstate")
	c.run("state", "pull", "--stack", "s", "--out", good)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	before := c.describe("s")
	for name, tc := range map[string]struct{ from, to, want string }{
		"UnknownProvider": {`provider[\"registry.terraform.io/hashicorp/time\"]`, `provider[\"registry.terraform.io/hashicorp/nothere\"]`, "Provider configuration not present"},
		"UnknownType":     {`"type": "time_offset"`, `"type": "time_nothere"`, "Invalid resource type"},
		"OldVersion":      {`"version": 4`, `"version": 3`, "state file format version 3 is not supported"},
		// terraform reads 0.5 as 0; cairn refuses what would silently become another instance.
		"FractionalKey":     {`"index_key": 0,`, `"index_key": 0.5,`, "invalid instance key 0.5"},
		"DuplicateInstance": {`"index_key": 1,`, `"index_key": 0,`, `time_static.c[0] appears twice`},
		"InvalidName":       {`"name": "c",`, `"name": "c[0]",`, `invalid resource name "c[0]"`},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(string(b), tc.from, tc.to, 1)
			if bad == string(b) {
				t.Fatalf("%s not found in the pulled state", tc.from)
			}
			file := filepath.Join(t.TempDir(), "bad.tfstate")
			if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
			r := c.try("state", "push", file, "--stack", "s", "-f", cfg)
			if r.err == nil || !strings.Contains(r.all(), tc.want) {
				t.Errorf("push of a bad state: %v, want an error saying %q\n%s", r.err, tc.want, r.all())
			}
		})
	}
	if after := c.describe("s"); !reflect.DeepEqual(resourceIDs(before), resourceIDs(after)) {
		t.Errorf("a refused push changed the stack: %v, then %v", resourceIDs(before), resourceIDs(after))
	}
}

// resourceIDs maps a stack's resources to their physical ids.
func resourceIDs(st api.Stack) map[string]string {
	out := map[string]string{}
	for _, r := range st.Resources {
		out[r.LogicalID] = r.PhysicalID
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
