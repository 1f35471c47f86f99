package pulumibuiltin

import (
	"context"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

var stashRes = provider.Resource{Name: "s", Type: StashType}

func TestStashKeepsItsFirstInput(t *testing.T) {
	ctx := context.Background()
	p := Provider{}
	first := cty.ObjectVal(map[string]cty.Value{"input": cty.ObjectVal(map[string]cty.Value{"": cty.False, "key": cty.TupleVal([]cty.Value{cty.StringVal("value")})})})
	c, err := p.Create(ctx, provider.CreateRequest{Resource: stashRes, Props: first})
	if err != nil || c.ID == "" {
		t.Fatalf("Create: %v, id %q", err, c.ID)
	}
	if !c.Outputs.GetAttr("output").RawEquals(first.GetAttr("input")) || !c.Outputs.GetAttr("input").RawEquals(first.GetAttr("input")) {
		t.Fatalf("Create outputs = %#v, want input and output both the input", c.Outputs)
	}
	second := cty.ObjectVal(map[string]cty.Value{"input": cty.StringVal("ignored")})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: stashRes, ID: c.ID, OldProps: first, NewProps: second, OldOutputs: c.Outputs})
	if err != nil || !d.Changed || d.Replace {
		t.Fatalf("Diff of a changed input = %+v, %v: want an update, not a replacement", d, err)
	}
	u, err := p.Update(ctx, provider.UpdateRequest{Resource: stashRes, ID: c.ID, OldProps: first, NewProps: second, OldOutputs: c.Outputs})
	if err != nil {
		t.Fatal(err)
	}
	if u.Outputs.GetAttr("input") != cty.StringVal("ignored") || !u.Outputs.GetAttr("output").RawEquals(first.GetAttr("input")) {
		t.Errorf("Update outputs = %#v, want the new input and the first output", u.Outputs)
	}
	same, err := p.Diff(ctx, provider.DiffRequest{Resource: stashRes, ID: c.ID, OldProps: second, NewProps: second, OldOutputs: u.Outputs})
	if err != nil || same.Changed {
		t.Errorf("Diff of the same input = %+v, %v: want no change", same, err)
	}
}

func TestStashCheck(t *testing.T) {
	cases := map[string]struct {
		props cty.Value
		fail  string // the property a failure names, "" for none
	}{
		"InputOnly":    {props: cty.ObjectVal(map[string]cty.Value{"input": cty.NumberIntVal(1)})},
		"NullInput":    {props: cty.ObjectVal(map[string]cty.Value{"input": cty.NullVal(cty.String)})},
		"Missing":      {props: cty.EmptyObjectVal, fail: "input"},
		"UnknownOther": {props: cty.ObjectVal(map[string]cty.Value{"input": cty.True, "extra": cty.True}), fail: "extra"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, err := Provider{}.Check(context.Background(), provider.CheckRequest{Resource: stashRes, Props: tc.props})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if len(resp.Failures) > 0 {
				got = resp.Failures[0].Property
			}
			if got != tc.fail {
				t.Errorf("Check failures = %+v, want one about %q", resp.Failures, tc.fail)
			}
		})
	}
	if _, err := (Provider{}).Check(context.Background(), provider.CheckRequest{Resource: provider.Resource{Type: "pulumi:pulumi:StackReference"}, Props: cty.EmptyObjectVal}); err == nil {
		t.Error("a type the builtin provider does not serve was checked")
	}
}
