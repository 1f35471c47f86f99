package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/state/postgres"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// Migration is what Migrate moved.
type Migration struct {
	Tables map[string]int64 `json:"tables"` // rows per table, the same in both databases
	// FunctionCode counts functions whose code was only in Dir/functions (made before the
	// state kept it) and now is in PostgreSQL, for every replica.
	FunctionCode int `json:"functionCode"`
}

// Migrate moves the SQLite state of cfg.Dir into the PostgreSQL database at url, which must
// hold no cairn state yet: every table (stacks, resources, journal, operations, events, keys,
// custom-resource requests, functions, the registry, tokens, grants, the audit log), copied in
// one transaction with sealed values as they are, then verified by counting each table in
// both. It holds the SQLite database's lock throughout: no server may run on it. The secrets
// key of cfg (the one the SQLite state was sealed with) is the PostgreSQL state's key too.
func Migrate(ctx context.Context, cfg Config, url string) (Migration, error) {
	cfg = withDefaults(cfg)
	path := filepath.Join(cfg.Dir, "state.db")
	if _, err := os.Stat(path); err != nil {
		return Migration{}, fmt.Errorf("cannot migrate: no state in %s: %w", cfg.Dir, err)
	}
	ring, _, _, err := loadKeys(cfg, false)
	if err != nil {
		return Migration{}, err
	}
	// Exclusive: refused while a server runs on the directory, and none can start meanwhile.
	// Opening brings the schema up to date and seals what an older cairn left in clear.
	lock, err := sqlite.Open(path, sqlite.Options{Keyring: ring, Exclusive: true})
	if errors.Is(err, sqlite.ErrInUse) {
		return Migration{}, fmt.Errorf("cannot migrate %s: a cairn server or command is using it; stop it first", cfg.Dir)
	}
	if err != nil {
		return Migration{}, err
	}
	defer lock.Close()
	pg, err := postgres.Open(ctx, url, postgres.Options{Keyring: ring})
	if err != nil {
		return Migration{}, err
	}
	defer pg.Close()
	src := lock.DB()
	var m Migration
	if m.Tables, err = pg.Import(ctx, src); err != nil {
		return Migration{}, fmt.Errorf("cannot migrate: %w", err)
	}
	for _, table := range postgres.Tables() {
		var want int64
		if err := src.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&want); err != nil {
			return m, err
		}
		got, err := pg.Count(ctx, table)
		if err != nil {
			return m, err
		}
		if got != want {
			return m, fmt.Errorf("migration check failed: table %s has %d rows in SQLite and %d in PostgreSQL", table, want, got)
		}
	}
	m.FunctionCode, err = storeFunctionCode(ctx, pg, src)
	return m, err
}

// storeFunctionCode puts into pg the code of the functions whose rows have none (made before
// the state kept code), zipped from their code directories: other replicas have no copy.
func storeFunctionCode(ctx context.Context, pg *postgres.Store, src *sql.DB) (int, error) {
	rows, err := src.QueryContext(ctx, `SELECT tenant, name, code_dir FROM functions WHERE code IS NULL AND code_dir <> ''`)
	if err != nil {
		return 0, err
	}
	type fn struct{ tenant, key, dir string }
	var fns []fn
	for rows.Next() {
		var f fn
		if err := rows.Scan(&f.tenant, &f.key, &f.dir); err != nil {
			rows.Close()
			return 0, err
		}
		fns = append(fns, f)
	}
	rows.Close()
	n := 0
	for _, f := range fns {
		_, name := splitFunctionKey(f.key)
		code, err := function.ZipDir(f.dir)
		if err != nil {
			return n, fmt.Errorf("cannot keep the code of function %s (%s): %w", name, f.dir, err)
		}
		def, err := pg.GetFunction(ctx, f.tenant, name)
		if err != nil {
			return n, err
		}
		def.Code = code
		if err := pg.ReplaceFunction(ctx, def); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// splitFunctionKey splits a functions row's name column (TENANT/NAME, or NAME in the default
// tenant).
func splitFunctionKey(key string) (tenant, name string) {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
