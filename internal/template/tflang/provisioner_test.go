package tflang

import (
	"context"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provisioner"
	"github.com/cairn-dev/cairn/internal/template"
)

// TestProvisionerRefusals: what cairn cannot run, or terraform refuses, fails at Parse with
// the place it is about.
func TestProvisionerRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		body, want, at string
	}{
		"file needs a connection": {body: `provisioner "file" {
    source      = "a"
    destination = "/tmp/a"
  }`, want: `Unsupported provisioner "file": The "file" provisioner acts on a remote machine over an SSH or WinRM connection, and cairn does not open SSH or WinRM connections.`, at: "main.tf:2:15"},
		"remote-exec": {body: `provisioner "remote-exec" {
    inline = ["true"]
  }`, want: `Unsupported provisioner "remote-exec"`, at: "main.tf:2:15"},
		"removed": {body: `provisioner "chef" {}`, want: `The "chef" provisioner has been removed`, at: "main.tf:2:15"},
		"unknown": {body: `provisioner "shell" {}`, want: `Invalid provisioner type`, at: "main.tf:2:15"},
		"bad when": {body: `provisioner "local-exec" {
    command = "true"
    when    = later
  }`, want: `Invalid "when" keyword`, at: "main.tf:4:15"},
		"bad on_failure": {body: `provisioner "local-exec" {
    command    = "true"
    on_failure = retry
  }`, want: `Invalid "on_failure" keyword`, at: "main.tf:4:18"},
		"missing command": {body: `provisioner "local-exec" {}`, want: `Missing required argument`, at: "main.tf:2:28"},
		"unknown argument": {body: `provisioner "local-exec" {
    command = "true"
    shell   = "bash"
  }`, want: `Unsupported argument`, at: "main.tf:4:5"},
		"destroy references another resource": {body: `provisioner "local-exec" {
    when    = destroy
    command = "echo ${terraform_data.other.id}"
  }`, want: `Invalid reference from destroy provisioner`, at: "main.tf:4:23"},
	} {
		t.Run(name, func(t *testing.T) {
			src := "resource \"terraform_data\" \"x\" {\n  " + tc.body + "\n}\nresource \"terraform_data\" \"other\" {}\n"
			_, ds := Parse(context.Background(), map[string][]byte{"main.tf": []byte(src)}, Options{})
			err := ds.Err()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.at) {
				t.Fatalf("Parse = %v\nwant %q at %s", err, tc.want, tc.at)
			}
		})
	}
}

// TestProvisionerBlocks: the provisioners of every instance, evaluated with self and the
// instance's key; what creation-time provisioners reference is a dependency; terraform_data
// needs no required_providers entry.
func TestProvisionerBlocks(t *testing.T) {
	src := `
resource "terraform_data" "dep" {}
resource "terraform_data" "x" {
  for_each = toset(["k"])
  provisioner "local-exec" {
    command     = "echo ${self.output} ${each.key} ${terraform_data.dep.id}"
    environment = { A = "b" }
    on_failure  = "continue"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo ${self.id} ${each.key}"
  }
}
`
	st, ds := Parse(context.Background(), map[string][]byte{"main.tf": []byte(src)}, Options{})
	if ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	if r := st.Requirement("terraform"); r == nil || r.Source != template.BuiltinProvider {
		t.Fatalf("requirement of terraform_data = %+v", r)
	}
	res := st.Resource(`terraform_data.x["k"]`)
	if res == nil || len(res.Provisioners) != 2 {
		t.Fatalf("resource = %+v", res)
	}
	if len(res.DependsOn) != 1 || res.DependsOn[0] != "terraform_data.dep" {
		t.Errorf("depends on %v, want terraform_data.dep (from the provisioner)", res.DependsOn)
	}
	create, destroy := res.Provisioners[0], res.Provisioners[1]
	if create.When != template.WhenCreate || !create.Continue || destroy.When != template.WhenDestroy || destroy.Continue {
		t.Errorf("provisioners = %+v, %+v", create, destroy)
	}
	spec, _ := provisioner.Spec(provisioner.LocalExec)
	self := cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("ID"), "output": cty.StringVal("OUT")})
	sc := fixedScope{"terraform_data.dep": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("DEP")})}
	v, ds := create.Config.EvalSelf(sc, self, spec)
	if ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	if got := v.GetAttr("command").AsString(); got != "echo OUT k DEP" {
		t.Errorf("command = %q", got)
	}
	v, ds = destroy.Config.EvalSelf(sc, self, spec)
	if ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	if got := v.GetAttr("command").AsString(); got != "echo ID k" {
		t.Errorf("destroy command = %q", got)
	}
}

// fixedScope is a scope of known resource values.
type fixedScope map[string]cty.Value

func (s fixedScope) Context() context.Context { return context.Background() }

func (s fixedScope) Resource(name string) (template.ResourceValue, bool) {
	v, ok := s[name]
	if !ok {
		return template.UnknownResource, true
	}
	return template.ResourceValue{ID: cty.StringVal(name), Outputs: v}, true
}
