package tfplugin

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// decodeConfig decodes HCL source with the schema of typ, as the Terraform language does.
func decodeConfig(t *testing.T, p *Provider, kind provider.SchemaKind, typ, src string) cty.Value {
	t.Helper()
	s, err := p.Schema(context.Background(), provider.SchemaRequest{Kind: kind, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclsyntax.ParseConfig([]byte(src), "test.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	v, diags := hcldec.Decode(f.Body, s.Spec, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return v
}

// TestTimeProvider runs the real hashicorp/time provider (protocol 5) through a create,
// a no-op plan, a replacing plan, a read, an import and a delete.
func TestTimeProvider(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := New(Config{Name: "time", Executable: providerbin.Time(t)})
	defer p.Close()
	if _, err := p.Configure(ctx, provider.ConfigureRequest{}); err != nil {
		t.Fatal(err)
	}
	res := provider.Resource{Type: "time_static"}
	cfg := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "a" }`)
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: res, Props: cfg})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("Check = %+v, %v", chk, err)
	}
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: cfg})
	if err != nil || cr.Diagnostics.HasErrors() {
		t.Fatalf("Create = %+v, %v", cr, err)
	}
	if cr.ID == "" || cr.Outputs.GetAttr("rfc3339").AsString() != cr.ID || cr.Outputs.GetAttr("year").IsNull() {
		t.Fatalf("Create state = %#v, id %q", cr.Outputs, cr.ID)
	}
	same, err := p.Diff(ctx, provider.DiffRequest{Resource: res, ID: cr.ID, NewProps: cfg, OldOutputs: cr.Outputs, Private: cr.Private})
	if err != nil || same.Changed || same.Replace {
		t.Fatalf("Diff unchanged = %+v, %v", same, err)
	}
	cfg2 := decodeConfig(t, p, provider.SchemaResource, "time_static", `triggers = { k = "b" }`)
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: res, ID: cr.ID, NewProps: cfg2, OldOutputs: cr.Outputs, Private: cr.Private})
	if err != nil || !d.Changed || !d.Replace || !slices.Contains(d.ReplacePaths, "triggers") {
		t.Fatalf("Diff changed triggers = %+v, %v", d, err)
	}
	if d.Planned.GetAttr("rfc3339").IsKnown() {
		t.Errorf("planned rfc3339 of a replacement is known: %#v", d.Planned.GetAttr("rfc3339"))
	}
	rd, err := p.Read(ctx, provider.ReadRequest{Resource: res, ID: cr.ID, Outputs: cr.Outputs, Private: cr.Private})
	if err != nil || rd.ID != cr.ID {
		t.Fatalf("Read = %+v, %v", rd, err)
	}
	im, err := p.Import(ctx, provider.ImportRequest{Resource: res, ID: "2024-01-02T03:04:05Z"})
	if err != nil || im.Diagnostics.HasErrors() || im.ID != "2024-01-02T03:04:05Z" || im.Outputs.GetAttr("year").AsBigFloat().String() != "2024" {
		t.Fatalf("Import = %+v, %v", im, err)
	}
	bad, err := p.Import(ctx, provider.ImportRequest{Resource: res, ID: "not a time"})
	if err != nil || !bad.Diagnostics.HasErrors() {
		t.Fatalf("Import of a bad id = %+v, %v; want an error diagnostic", bad, err)
	}
	del, err := p.Delete(ctx, provider.DeleteRequest{Resource: res, ID: cr.ID, Outputs: cr.Outputs, Private: cr.Private})
	if err != nil || del.Diagnostics.HasErrors() {
		t.Fatalf("Delete = %+v, %v", del, err)
	}
	if _, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "time_nope"}); err == nil {
		t.Error("Schema of an unknown type: no error")
	}
	if _, err := p.ReadData(ctx, provider.ReadDataRequest{Resource: provider.Resource{Type: "time_nope"}}); err == nil {
		t.Error("ReadData of an unknown data source: no error")
	}
}
