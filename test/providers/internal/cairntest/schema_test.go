package cairntest

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The schemas convert to both protocols: in particular the nested attribute that protocol 5
// cannot carry is left out of the protocol 5 schema.
func TestSchemas(t *testing.T) {
	ctx := context.Background()

	s5, err := providerserver.NewProtocol5WithError(New("test", 5)())()
	if err != nil {
		t.Fatal(err)
	}
	r5, err := s5.GetProviderSchema(ctx, &tfprotov5.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r5.Diagnostics {
		t.Errorf("protocol 5: %s: %s", d.Summary, d.Detail)
	}
	s6, err := providerserver.NewProtocol6WithError(New("test", 6)())()
	if err != nil {
		t.Fatal(err)
	}
	r6, err := s6.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r6.Diagnostics {
		t.Errorf("protocol 6: %s: %s", d.Summary, d.Detail)
	}

	for _, name := range []string{"cairntest_thing", "cairntest_fast"} {
		if r5.ResourceSchemas[name] == nil || r6.ResourceSchemas[name] == nil {
			t.Errorf("resource %s missing", name)
		}
	}
	for _, name := range []string{"cairntest_thing", "cairntest_echo"} {
		if r5.DataSourceSchemas[name] == nil || r6.DataSourceSchemas[name] == nil {
			t.Errorf("data source %s missing", name)
		}
	}
	has5 := map[string]bool{}
	for _, a := range r5.ResourceSchemas["cairntest_thing"].Block.Attributes {
		has5[a.Name] = true
	}
	has6 := map[string]*tfprotov6.SchemaAttribute{}
	for _, a := range r6.ResourceSchemas["cairntest_thing"].Block.Attributes {
		has6[a.Name] = a
	}
	for _, name := range []string{"id", "name", "size", "tags", "secret", "created_at", "revision", "fail_on"} {
		if !has5[name] || has6[name] == nil {
			t.Errorf("cairntest_thing.%s missing (protocol 5: %v)", name, has5[name])
		}
	}
	if has5["settings"] {
		t.Error("protocol 5 schema has the nested attribute settings")
	}
	if a := has6["settings"]; a == nil || a.NestedType == nil || a.NestedType.Nesting != tfprotov6.SchemaObjectNestingModeSingle {
		t.Errorf("protocol 6 settings = %+v, want a single nested attribute", a)
	}
	if a := has6["secret"]; a == nil || !a.Sensitive {
		t.Error("cairntest_thing.secret is not sensitive")
	}
	sensitive := false
	for _, a := range r5.Provider.Block.Attributes {
		sensitive = sensitive || (a.Name == "api_token" && a.Sensitive)
	}
	if !sensitive {
		t.Error("provider api_token is not sensitive")
	}
}
