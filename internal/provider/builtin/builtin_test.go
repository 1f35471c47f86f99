package builtin

import (
	"context"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

func props(input, triggers cty.Value) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"input": input, "triggers_replace": triggers})
}

var null = cty.NullVal(cty.DynamicPseudoType)

// TestDataLifecycle: output follows input; a changed input updates in place, a changed
// triggers_replace replaces; types count (a list is not a tuple), also after the state went
// through cairn's untyped storage.
func TestDataLifecycle(t *testing.T) {
	ctx := context.Background()
	p := New()
	res := provider.Resource{Type: DataType, Name: "terraform_data.x"}
	list := cty.ListVal([]cty.Value{cty.StringVal("a")})
	c, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: props(list, cty.StringVal("t1"))})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(c.ID) {
		t.Errorf("id %q is not a UUID", c.ID)
	}
	if !c.Outputs.GetAttr("output").RawEquals(list) || c.Outputs.GetAttr("id").AsString() != c.ID {
		t.Errorf("outputs = %#v", c.Outputs)
	}
	// what the engine stores and reads back: no types
	b, err := value.Marshal(c.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := value.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	diff := func(newProps cty.Value) provider.DiffResponse {
		t.Helper()
		d, err := p.Diff(ctx, provider.DiffRequest{Resource: res, ID: c.ID, NewProps: newProps, OldOutputs: stored, Private: c.Private})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for name, tc := range map[string]struct {
		props                 cty.Value
		changed, replace      bool
		keys                  []string
		plannedID, plannedOut cty.Value
	}{
		"unchanged": {props: props(list, cty.StringVal("t1")), plannedID: cty.StringVal(c.ID), plannedOut: list},
		"input changed": {props: props(cty.StringVal("b"), cty.StringVal("t1")), changed: true, keys: []string{"input", "output"},
			plannedID: cty.StringVal(c.ID), plannedOut: cty.UnknownVal(cty.String)},
		"a tuple is not the list": {props: props(cty.TupleVal([]cty.Value{cty.StringVal("a")}), cty.StringVal("t1")), changed: true,
			keys: []string{"input", "output"}, plannedID: cty.StringVal(c.ID), plannedOut: cty.UnknownVal(cty.Tuple([]cty.Type{cty.String}))},
		"trigger changed": {props: props(list, cty.StringVal("t2")), changed: true, replace: true,
			keys: []string{"id", "output", "triggers_replace"}, plannedID: cty.UnknownVal(cty.String).RefineNotNull(), plannedOut: cty.UnknownVal(list.Type())},
		"input unknown": {props: props(cty.UnknownVal(cty.String), cty.StringVal("t1")), changed: true, keys: []string{"input", "output"},
			plannedID: cty.StringVal(c.ID), plannedOut: cty.UnknownVal(cty.String)},
		"input removed": {props: props(null, cty.StringVal("t1")), changed: true, keys: []string{"input", "output"},
			plannedID: cty.StringVal(c.ID), plannedOut: null},
	} {
		t.Run(name, func(t *testing.T) {
			d := diff(tc.props)
			if d.Changed != tc.changed || d.Replace != tc.replace || !cmp.Equal(d.ChangedKeys, tc.keys) {
				t.Errorf("diff = changed %v replace %v keys %v, want %v %v %v", d.Changed, d.Replace, d.ChangedKeys, tc.changed, tc.replace, tc.keys)
			}
			if got := d.Planned.GetAttr("id"); !got.RawEquals(tc.plannedID) {
				t.Errorf("planned id = %#v, want %#v", got, tc.plannedID)
			}
			if got := d.Planned.GetAttr("output"); !got.RawEquals(tc.plannedOut) {
				t.Errorf("planned output = %#v, want %#v", got, tc.plannedOut)
			}
		})
	}
	u, err := p.Update(ctx, provider.UpdateRequest{Resource: res, ID: c.ID, NewProps: props(cty.StringVal("b"), cty.StringVal("t1")), Private: c.Private})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != c.ID || u.Outputs.GetAttr("output").AsString() != "b" {
		t.Errorf("update = %+v", u)
	}
}

func TestSchema(t *testing.T) {
	p := New()
	s, err := p.Schema(context.Background(), provider.SchemaRequest{Kind: provider.SchemaResource, Type: DataType})
	if err != nil || !s.ImpliedType.Equals(stateType) {
		t.Fatalf("schema = %#v, %v", s, err)
	}
	if _, err := p.Schema(context.Background(), provider.SchemaRequest{Kind: provider.SchemaResource, Type: "terraform_other"}); err == nil {
		t.Error("an unknown type has a schema")
	}
}
