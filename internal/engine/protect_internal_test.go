package engine

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// TestProtects: with a kept protect flag, a replacement is refused when the program and the row
// both protect; a row stored before cairn kept the flag takes the program's word (so a stack
// deployed with protect before the upgrade stays protected).
func TestProtects(t *testing.T) {
	kept := template.DialectPolicy{Protection: &template.Protection{}}
	cases := map[string]struct {
		pol  template.DialectPolicy
		prog bool
		row  state.Resource
		want bool
	}{
		"BothProtect":          {kept, true, state.Resource{Protect: true}, true},
		"UnprotectedInOneGo":   {kept, false, state.Resource{Protect: true}, false},
		"NewlyProtected":       {kept, true, state.Resource{}, false},
		"RowBeforeTheFlag":     {kept, true, state.Resource{ProtectUnknown: true}, true},
		"RowBeforeUnprotected": {kept, false, state.Resource{ProtectUnknown: true}, false},
		"TemplateOnly":         {template.DialectPolicy{}, true, state.Resource{}, true},
	}
	for name, tc := range cases {
		if got := protects(tc.pol, &template.Resource{PreventDestroy: tc.prog}, tc.row); got != tc.want {
			t.Errorf("%s: protects = %v, want %v", name, got, tc.want)
		}
	}
}
