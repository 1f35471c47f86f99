package pulumistate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/template"
)

// TestInitErrorsAreTheProvidersReasons: the stored reason of a failed create (the adapter's
// "Create: <reason>" diagnostics joined) gives back the provider's reasons, one each.
func TestInitErrorsAreTheProvidersReasons(t *testing.T) {
	for reason, want := range map[string][]string{
		"Create: a-1 did not become ready: failCreate is set": {"a-1 did not become ready: failCreate is set"},
		"Create: first; reason; Create: second":               {"first; reason", "second"},
		"Resource operation cancelled by the user":            {"Resource operation cancelled by the user"},
		"": {"the resource's create failed"},
	} {
		if d := cmp.Diff(want, initErrors(reason)); d != "" {
			t.Errorf("initErrors(%q): -want +got\n%s", reason, d)
		}
	}
}

// TestExportPropertyDependencies: every property the program set has its entry, with the
// URNs of the resources its value uses; an invoke stands for what it depends on.
func TestExportPropertyDependencies(t *testing.T) {
	prov := "pulumi:providers:simple::default"
	st := &template.Stack{Resources: []*template.Resource{
		{Name: "a", Type: "simple:index:Resource", Provider: prov, Options: template.Options{PropertyDeps: map[string][]string{"value": {}}}},
		{Name: "fn::invoke@x", Type: "simple:index:fn", Mode: template.Data, Provider: prov, DependsOn: []string{"a"}},
		{Name: "b", Type: "simple:index:Resource", Provider: prov, DependsOn: []string{"a", "fn::invoke@x"},
			Options: template.Options{PropertyDeps: map[string][]string{"value": {"a"}, "text": {"fn::invoke@x"}, "plain": {}}}},
	}}
	snap := template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{
		{Name: "a", Type: "simple:index:Resource", ID: "id-a", Provider: prov, Inputs: cty.EmptyObjectVal, Outputs: cty.EmptyObjectVal},
		{Name: "b", Type: "simple:index:Resource", ID: "id-b", Provider: prov, Inputs: cty.EmptyObjectVal, Outputs: cty.EmptyObjectVal,
			Deps: []string{"a"}, Failed: true, FailReason: "Create: not ready"},
	}}
	b, err := testFormat().Encode(context.Background(), st, snap, template.StateKeys{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var ud untypedDeployment
	var d deployment
	if err := json.Unmarshal(b, &ud); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ud.Deployment, &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]resourceState{}
	for _, r := range d.Resources {
		got[r.URN] = r
	}
	a := "urn:pulumi:dev::proj::simple:index:Resource::a"
	if d := cmp.Diff(map[string][]string{"value": {}}, got[a].PropertyDependencies); d != "" {
		t.Errorf("a: -want +got\n%s", d)
	}
	rb := got["urn:pulumi:dev::proj::simple:index:Resource::b"]
	if d := cmp.Diff(map[string][]string{"value": {a}, "text": {a}, "plain": {}}, rb.PropertyDependencies); d != "" {
		t.Errorf("b: -want +got\n%s", d)
	}
	if d := cmp.Diff([]string{"not ready"}, rb.InitErrors); d != "" {
		t.Errorf("b's initErrors: -want +got\n%s", d)
	}
}

// TestExportLeavesTheProviderOutOfDependencies: a resource served by an explicit provider
// resource depends on it (cairn orders it after), but Pulumi lists the provider only in the
// resource's provider reference, unless its properties use the provider's values.
func TestExportLeavesTheProviderOutOfDependencies(t *testing.T) {
	prov := "pulumi:providers:simple::prov"
	f := testFormat()
	f.ProviderResource = func(addr string) string {
		if addr == prov {
			return "prov"
		}
		return ""
	}
	st := &template.Stack{Resources: []*template.Resource{
		{Name: "prov", Type: "pulumi:providers:simple", Provider: prov},
		{Name: "served", Type: "simple:index:Resource", Provider: prov, DependsOn: []string{"prov"}},
		{Name: "reads", Type: "simple:index:Resource", Provider: prov, DependsOn: []string{"prov"},
			Options: template.Options{PropertyDeps: map[string][]string{"text": {"prov"}}}},
	}}
	row := func(name, typ string) template.StateResource {
		return template.StateResource{Name: name, Type: typ, ID: "id-" + name, Provider: prov, Inputs: cty.EmptyObjectVal,
			Outputs: cty.EmptyObjectVal, Deps: []string{"prov"}}
	}
	p := row("prov", "pulumi:providers:simple")
	p.Deps = nil
	snap := template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{
		p, row("served", "simple:index:Resource"), row("reads", "simple:index:Resource")}}
	b, err := f.Encode(context.Background(), st, snap, template.StateKeys{ShowSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	var ud untypedDeployment
	var d deployment
	if err := json.Unmarshal(b, &ud); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ud.Deployment, &d); err != nil {
		t.Fatal(err)
	}
	provURN := "urn:pulumi:dev::proj::pulumi:providers:simple::prov"
	for _, r := range d.Resources {
		switch r.URN {
		case "urn:pulumi:dev::proj::simple:index:Resource::served":
			if len(r.Dependencies) != 0 {
				t.Errorf("served's dependencies = %v, want none", r.Dependencies)
			}
		case "urn:pulumi:dev::proj::simple:index:Resource::reads":
			if d := cmp.Diff([]string{provURN}, r.Dependencies); d != "" {
				t.Errorf("reads' dependencies: -want +got\n%s", d)
			}
		}
	}
}
