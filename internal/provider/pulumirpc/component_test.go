package pulumirpc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

const group = "cairntest:index:Group"

func groupOf(values ...cty.Value) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"values": cty.TupleVal(values)})
}

func things(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "things"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(es)
}

// A component (isComponent in cairntest's schema) is not Checked by the plugin; its create
// runs Construct, whose children (registered on cairn's monitor) are created and kept in the
// private data with their URNs, parents and secrets; an update deletes the children no longer
// registered; a delete deletes the rest.
func TestComponentConstructUpdateDelete(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := provider.Resource{StackName: "dev", Name: "g", Type: group}

	ck, err := p.Check(ctx, provider.CheckRequest{Resource: res, Props: groupOf(cty.StringVal("one"), value.Secret(cty.StringVal("hush")))})
	if err != nil || len(ck.Failures) > 0 {
		t.Fatalf("Check: %v %v", err, ck.Failures)
	}
	if slices.Contains(calls(t, dir), "Check g") {
		t.Errorf("the component was Checked by the plugin: %v", calls(t, dir))
	}
	c, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: ck.Props})
	if err != nil || c.Diagnostics.HasErrors() {
		t.Fatalf("Create: %v %v", err, c.Diagnostics)
	}
	const urn = "urn:pulumi:dev::proj::cairntest:index:Group::g"
	if c.ID != urn || !c.Outputs.GetAttr("count").RawEquals(cty.NumberIntVal(2)) {
		t.Errorf("Create = %s %#v", c.ID, c.Outputs)
	}
	st, ok, err := DecodeComponentState(c.Private)
	if !ok || err != nil || st.URN != urn || len(st.Children) != 2 {
		t.Fatalf("private data = %+v %v %v", st, ok, err)
	}
	second := st.Children[1]
	if second.URN != "urn:pulumi:dev::proj::cairntest:index:Group$cairntest:index:Thing::g-1" || second.Parent != urn || !second.Custom || second.ID == "" {
		t.Errorf("child = %+v", second)
	}
	ins, _, err := second.Values()
	if err != nil || !value.IsSecret(ins.GetAttr("value")) {
		t.Errorf("the secret child input lost its mark: %#v %v", ins, err)
	}
	if n := things(t, dir); n != 2 {
		t.Errorf("objects after create = %d", n)
	}

	u, err := p.Update(ctx, provider.UpdateRequest{Resource: res, ID: c.ID, OldProps: ck.Props, NewProps: groupOf(cty.StringVal("one")),
		OldOutputs: c.Outputs, Private: c.Private})
	if err != nil || u.Diagnostics.HasErrors() {
		t.Fatalf("Update: %v %v", err, u.Diagnostics)
	}
	if st, _, _ := DecodeComponentState(u.Private); len(st.Children) != 1 || things(t, dir) != 1 {
		t.Errorf("after the shrink: children %+v, objects %d", st.Children, things(t, dir))
	}
	if !slices.Contains(calls(t, dir), "Delete g-1") {
		t.Errorf("g-1 not deleted: %v", calls(t, dir))
	}

	d, err := p.Delete(ctx, provider.DeleteRequest{Resource: res, ID: u.ID, Outputs: u.Outputs, Private: u.Private})
	if err != nil || d.Diagnostics.HasErrors() {
		t.Fatalf("Delete: %v %v", err, d.Diagnostics)
	}
	if n := things(t, dir); n != 0 {
		t.Errorf("objects after delete = %d", n)
	}
}

// A preview constructs with dryRun: children planned, nothing made, no private data.
func TestComponentPreview(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := provider.Resource{StackName: "dev", Name: "g", Type: group}
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: res, NewProps: groupOf(cty.StringVal("one"))})
	if err != nil || !d.Changed {
		t.Fatalf("Diff of a new component: %+v %v", d, err)
	}
	if !slices.Contains(calls(t, dir), "Construct g preview") || !slices.Contains(calls(t, dir), "Create g-0 preview") || things(t, dir) != 0 {
		t.Errorf("calls %v, objects %d", calls(t, dir), things(t, dir))
	}
}

// Resource references keep only what Pulumi's engine stores of them.
func TestCanonicalRefs(t *testing.T) {
	ref := cty.ObjectVal(map[string]cty.Value{psig.Key: cty.StringVal(psig.ResourceReference), "urn": cty.StringVal("urn:x"),
		"id": cty.StringVal("i"), "name": cty.StringVal("n"), "type": cty.StringVal("t")})
	got := canonicalRefs(cty.ObjectVal(map[string]cty.Value{"ref": value.Secret(ref), "other": cty.StringVal("x")}))
	want := value.Secret(cty.ObjectVal(map[string]cty.Value{psig.Key: cty.StringVal(psig.ResourceReference), "urn": cty.StringVal("urn:x"),
		"id": cty.StringVal("i"), "packageVersion": cty.StringVal("")}))
	if !got.GetAttr("ref").RawEquals(want) || got.GetAttr("other").AsString() != "x" {
		t.Errorf("canonicalRefs = %#v", got)
	}
}
