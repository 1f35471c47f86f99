package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSmallOperationReadsSkipTheRequest: the queries run on every fenced journal append and
// every watch of an operation are answered from operations_small, never from the table row,
// whose request column (the whole template) precedes the columns they read.
func TestSmallOperationReadsSkipTheRequest(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "state.db"))
	for name, q := range map[string]string{"fence": fenceQuery, "watch": watchQuery} {
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, "op")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		found := false
		for _, d := range plan {
			if strings.HasPrefix(d, "SEARCH o USING COVERING INDEX operations_small") ||
				strings.HasPrefix(d, "SEARCH operations USING COVERING INDEX operations_small") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: plan %q does not read operations through the covering index", name, plan)
		}
	}
}
