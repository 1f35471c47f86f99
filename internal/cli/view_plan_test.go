package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
)

// TestWritePlanImports: import blocks show as terraform 1.11's plan shows them: an import
// that changes nothing with the object's attributes unsigned, an import then updated with
// "(imported from ...)", and the import count first in the summary. (Attribute lines keep
// cairn's indentation, two spaces less than terraform's.)
func TestWritePlanImports(t *testing.T) {
	var b strings.Builder
	writePlan(&b, api.PreviewResponse{Changes: []api.Change{
		{LogicalID: "time_sleep.s", Type: "time_sleep", Action: api.ActionModify, Replacement: api.ReplaceFalse, Importing: "1ms,",
			Details: []api.PropertyChange{{Name: "create_duration", Before: "1ms", After: "2ms"}}},
		{LogicalID: `time_static.m["a"]`, Type: "time_static", Action: api.ActionNoop, Importing: "2023-05-06T07:08:09Z",
			Details: []api.PropertyChange{{Name: "day", Before: 6.0, After: 6.0}, {Name: "id", Before: "2023-05-06T07:08:09Z", After: "2023-05-06T07:08:09Z"}}},
		{LogicalID: "random_string.r", Type: "random_string", Action: api.ActionModify, Replacement: api.ReplaceTrue, Importing: "abcd",
			Details: []api.PropertyChange{{Name: "special", Before: true, After: false, ForcesReplacement: true}}},
	}}, false)
	want := `  # time_sleep.s will be updated in-place
  # (imported from "1ms,")
  ~ resource "time_sleep" "s" {
    ~ create_duration = "1ms" -> "2ms"
    }

  # time_static.m["a"] will be imported
    resource "time_static" "m" {
      day = 6
      id  = "2023-05-06T07:08:09Z"
    }

  # random_string.r must be replaced
  # (imported from "abcd")
  # Warning: this will destroy the imported resource
-/+ resource "random_string" "r" {
    ~ special = true -> false # forces replacement
    }

Plan: 3 to import, 1 to add, 1 to change, 1 to destroy.
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("writePlan: -want +got:\n%s", diff)
	}
}
