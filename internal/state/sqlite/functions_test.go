package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/state/statetest"
)

func TestFunctions(t *testing.T) {
	statetest.RunFunctions(t, open(t, filepath.Join(t.TempDir(), "state.db")))
}
