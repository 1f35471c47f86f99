package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/k3s-io/kine/pkg/drivers/generic"
	"github.com/k3s-io/kine/pkg/endpoint"
)

// startKine serves the etcd protocol the apiserver stores through, from the SQLite file
// kube.db in dir (or the PostgreSQL database at database, when set), on a unix socket only this user can reach. Its settings are the defaults of
// kine's own flags (its Config has no usable zero value).
func startKine(ctx context.Context, dir, database string) ([]string, error) {
	socket := filepath.Join(dir, "kine.sock")
	if len(socket) > 100 { // sun_path holds 108 bytes
		f, err := os.MkdirTemp("", "cairn-kine")
		if err != nil {
			return nil, err
		}
		socket = filepath.Join(f, "kine.sock")
	}
	db := "sqlite://" + filepath.Join(dir, "kube.db") +
		"?_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_stmt_cache_size=20&cache=shared"
	if database != "" {
		db = database // kine's pgsql driver: its table "kine", beside cairn's, shared by every replica
	}
	cfg := endpoint.Config{
		Listener: "unix://" + socket,
		Endpoint: db,
		ConnectionPoolConfig: generic.ConnectionPoolConfig{
			MaxIdle:     20,
			MaxIdleTime: 2 * time.Minute,
		},
		NotifyInterval:      5 * time.Second,
		EmulatedETCDVersion: "3.6.11",
		CompactTimeout:      5 * time.Second,
		CompactMinRetain:    1000,
		CompactBatchSize:    1000,
		PollBatchSize:       500,
		PollInterval:        time.Second,
		LogFormat:           "plain",
	}
	etcd, err := endpoint.Listen(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot open the kube store: %w", err)
	}
	return etcd.Endpoints, nil
}
