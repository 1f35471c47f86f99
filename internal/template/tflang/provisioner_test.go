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
		"file with source and content": {body: `provisioner "file" {
    source      = "a"
    content     = "b"
    destination = "/tmp/a"
  }`, want: `Cannot set both 'source' and 'content'`, at: "main.tf:2:3"},
		"file with neither": {body: `provisioner "file" {
    content     = null
    destination = "/tmp/a"
  }`, want: `Must provide one of 'source' or 'content'`, at: "main.tf:2:3"},
		"file without destination": {body: `provisioner "file" {
    content = "x"
  }`, want: `Missing required argument`, at: "main.tf:2:22"},
		"remote-exec with two scripts": {body: `provisioner "remote-exec" {
    inline = ["true"]
    script = "a.sh"
  }`, want: `Invalid remote-exec provisioner configuration: Only one of "inline", "script", or "scripts" must be set`, at: "main.tf:2:3"},
		"connection without host": {body: `connection {
    user = "u"
  }
  provisioner "file" {
    content     = "x"
    destination = "/tmp/a"
  }`, want: `Missing required argument`, at: "main.tf:2:14"},
		"connection argument of no communicator": {body: `provisioner "file" {
    content     = "x"
    destination = "/tmp/a"
    connection {
      host = "h"
      hots = "typo"
    }
  }`, want: `Unsupported argument`, at: "main.tf:7:7"},
		"winrm": {body: `provisioner "file" {
    content     = "x"
    destination = "/tmp/a"
    connection {
      type = "winrm"
      host = "h"
    }
  }`, want: `Unsupported connection type: cairn does not open WinRM connections`, at: "main.tf:6:14"},
		"two connection blocks": {body: `connection {
    host = "a"
  }
  connection {
    host = "b"
  }`, want: `Duplicate connection block`, at: "main.tf:5:3"},
		"destroy connection references another resource": {body: `provisioner "file" {
    when        = destroy
    content     = "x"
    destination = "/tmp/a"
    connection {
      host = terraform_data.other.output
    }
  }`, want: `Invalid reference from destroy provisioner`, at: "main.tf:7:14"},
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
		"destroy with a resource connection referencing another resource": {body: `connection {
    host = terraform_data.other.output
  }
  provisioner "local-exec" {
    when    = destroy
    command = "true"
  }`, want: `Invalid reference from destroy provisioner`, at: "main.tf:3:12"},
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

// TestProvisionerConnection: a provisioner's connection block overrides the resource's
// argument by argument, both see self, and what a creation-time one references is a
// dependency.
func TestProvisionerConnection(t *testing.T) {
	src := `
resource "terraform_data" "dep" {}
resource "terraform_data" "x" {
  input = "10.0.0.1"
  connection {
    host        = self.output
    user        = "base"
    private_key = file("id_test")
  }
  provisioner "file" {
    content     = "x"
    destination = "/tmp/x"
    connection {
      user = "own-${terraform_data.dep.id}"
      port = 2222
    }
  }
  provisioner "remote-exec" {
    when   = destroy
    inline = ["true"]
  }
  provisioner "local-exec" {
    command = "true"
  }
}
`
	st, ds := Parse(context.Background(), map[string][]byte{"main.tf": []byte(src), "id_test": []byte("KEY")}, Options{})
	if ds.HasErrors() {
		t.Fatal(ds.Err())
	}
	res := st.Resource("terraform_data.x")
	if res == nil || len(res.Provisioners) != 3 {
		t.Fatalf("resource = %+v", res)
	}
	if deps := strings.Join(res.DependsOn, " "); deps != "terraform_data.dep" {
		t.Errorf("depends on %q, want terraform_data.dep", deps)
	}
	self := cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("ID"), "output": cty.StringVal("10.0.0.1")})
	sc := fixedScope{"terraform_data.dep": cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("DEP")})}
	for i, want := range []string{"10.0.0.1 own-DEP 2222 KEY", "10.0.0.1 base <nil> KEY", "10.0.0.1 base <nil> KEY"} {
		p := res.Provisioners[i]
		if p.Connection == nil {
			t.Fatalf("provisioner %d has no connection", i)
		}
		v, ds := p.Connection.EvalSelf(sc, self, provisioner.ConnectionSpec)
		if ds.HasErrors() {
			t.Fatal(ds.Err())
		}
		port := "<nil>"
		if pv := v.GetAttr("port"); !pv.IsNull() {
			port = pv.AsBigFloat().String()
		}
		got := strings.Join([]string{v.GetAttr("host").AsString(), v.GetAttr("user").AsString(), port, v.GetAttr("private_key").AsString()}, " ")
		if got != want {
			t.Errorf("connection of provisioner %d = %q, want %q", i, got, want)
		}
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
