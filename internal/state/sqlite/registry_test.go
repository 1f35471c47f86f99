package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/statetest"
)

func TestRegistryConformance(t *testing.T) {
	statetest.RunRegistry(t, func(t *testing.T) state.Registry { return open(t, filepath.Join(t.TempDir(), "state.db")) })
}
