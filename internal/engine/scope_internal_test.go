package engine

import (
	"context"
	"testing"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// TestScopeUndecodableRow: a stored row whose outputs are valid JSON but not a stored
// value used to fail setRow (and the run, "cannot decode"); now setRow accepts it and every
// reference to the resource silently sees an unknown value.
func TestScopeUndecodableRow(t *testing.T) {
	tmpl := &template.Stack{Resources: []*template.Resource{{Name: "a"}}}
	sc := newScope(context.Background(), tmpl)
	row := state.Resource{Name: "a", ID: "id-a", Outputs: []byte(`[1,2]`)}
	if _, err := rowValue(row); err == nil {
		t.Fatal("rowValue accepted [1,2]; the test premise is wrong")
	}
	err := sc.setRow(row)
	v, _ := sc.Resource("a")
	if err == nil {
		t.Errorf("setRow accepted an undecodable row; Resource now answers ID known=%v (unknown resource: %v)",
			v.ID.IsKnown(), v.ID.RawEquals(template.UnknownResource.ID))
	}
}
