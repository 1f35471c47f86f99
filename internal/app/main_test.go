package app

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/state/postgres/pgtest"
)

// TestMain stops the PostgreSQL server the migration tests share.
func TestMain(m *testing.M) { pgtest.Main(m) }
