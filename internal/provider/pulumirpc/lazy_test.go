package pulumirpc

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/provider"
)

// TestLazyStartsOnFirstCall: opening starts nothing (Close of an unstarted plugin is free and
// later calls fail, not panic); a plugin that cannot start fails each call the same way.
func TestLazyStartsOnFirstCall(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "pulumi-resource-nothere")
	l := Open(Options{Package: "nothere", Executable: missing})
	if err := l.Close(); err != nil {
		t.Fatalf("Close of a plugin never started: %v", err)
	}
	if _, err := l.Check(ctx, provider.CheckRequest{}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Check after Close: %v", err)
	}

	l = Open(Options{Package: "nothere", Executable: missing})
	_, err1 := l.Create(ctx, provider.CreateRequest{})
	_, err2 := l.Delete(ctx, provider.DeleteRequest{})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), "cannot start") {
		t.Errorf("calls of a plugin that cannot start: %v / %v", err1, err2)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
