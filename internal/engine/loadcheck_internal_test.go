package engine

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestJudgedAtRun: a load-time Check failure is left to the run only when the property it
// names is not known yet.
func TestJudgedAtRun(t *testing.T) {
	props := cty.ObjectVal(map[string]cty.Value{
		"in":    cty.UnknownVal(cty.Bool),
		"known": cty.True,
		"list":  cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.UnknownVal(cty.String)}),
	})
	for property, want := range map[string]bool{"in": true, "list[1]": true, "list.x": true, "known": false, "": false, "absent": false} {
		if got := judgedAtRun(props, property); got != want {
			t.Errorf("judgedAtRun(%q) = %v, want %v", property, got, want)
		}
	}
}
