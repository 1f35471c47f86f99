package diag

import (
	"errors"
	"fmt"
	"testing"
)

func TestAppendAndRender(t *testing.T) {
	var ds Diagnostics
	ds = ds.Append(nil, Warnf(Range{}, "", "careful"))
	if ds.HasErrors() || ds.Err() != nil {
		t.Fatalf("warnings only: HasErrors() = true")
	}
	ds = ds.Append(Errorf(Range{Filename: "t.yaml", Line: 3, Column: 7}, "Resources.Db.Properties.Size", "must be a number"))
	ds = ds.Append(fmt.Errorf("wrapped: %w", Diagnostics{Errorf(Range{}, "Outputs.X", "bad")}))
	ds = ds.Append(errors.New("plain"))
	if got, want := len(ds), 4; got != want {
		t.Fatalf("len = %d, want %d", got, want)
	}
	want := "t.yaml:3:7: Resources.Db.Properties.Size: must be a number\nOutputs.X: bad\nplain"
	if got := ds.Err().Error(); got != want {
		t.Errorf("Err() = %q, want %q", got, want)
	}
}
