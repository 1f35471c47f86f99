package pulumistate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider/pulumirpc"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// A component's row is exported as Pulumi's state holds it: the component (not custom, no id,
// no inputs, no provider) then its children with parent, the component's provider and sealed
// secrets, URNs on the export's project.
func TestEncodeComponent(t *testing.T) {
	ins, _ := value.Marshal(cty.ObjectVal(map[string]cty.Value{"value": value.Secret(cty.StringVal("hush"))}))
	priv, err := pulumirpc.ComponentState{URN: "urn:pulumi:dev::dev::simple:index:Group::g", Children: []pulumirpc.ComponentChild{{
		URN: "urn:pulumi:dev::dev::simple:index:Group$simple:index:Resource::g-0", Type: "simple:index:Resource", Name: "g-0",
		Parent: "urn:pulumi:dev::dev::simple:index:Group::g", Custom: true, ID: "id-0", Inputs: ins, Outputs: ins,
	}}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	st := &template.Stack{Resources: []*template.Resource{{Name: "g", Type: "simple:index:Group", Provider: "pulumi:providers:simple::default"}}}
	st.Resources[0].PropertyDeps = map[string][]string{"value": {}} // the program's: pulumi keeps none for a component
	snap := template.StateSnapshot{Stack: "dev", StackID: "sid", Resources: []template.StateResource{{Name: "g", Type: "simple:index:Group",
		ID: "urn:pulumi:dev::dev::simple:index:Group::g", Provider: "pulumi:providers:simple::default",
		Inputs: cty.EmptyObjectVal, Outputs: cty.ObjectVal(map[string]cty.Value{"count": cty.NumberIntVal(1)}), Private: priv}}}
	b, err := testFormat().Encode(context.Background(), st, snap, template.StateKeys{Passphrase: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hush") {
		t.Fatalf("a child's secret is in clear:\n%s", b)
	}
	var ud untypedDeployment
	var d deployment
	if err := json.Unmarshal(b, &ud); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ud.Deployment, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Resources) != 4 {
		t.Fatalf("resources: %+v", d.Resources)
	}
	prov, comp, child := d.Resources[1], d.Resources[2], d.Resources[3]
	if comp.URN != "urn:pulumi:dev::proj::simple:index:Group::g" || comp.Custom || comp.ID != "" || comp.Inputs != nil || comp.Provider != "" || comp.Outputs["count"] != 1.0 ||
		comp.PropertyDependencies != nil {
		t.Errorf("component: %+v", comp)
	}
	if child.URN != "urn:pulumi:dev::proj::simple:index:Group$simple:index:Resource::g-0" || child.Parent != comp.URN || !child.Custom ||
		child.ID != "id-0" || child.Provider != prov.URN+"::"+prov.ID {
		t.Errorf("child: %+v (provider %s)", child, prov.URN)
	}
}
