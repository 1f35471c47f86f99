package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Functions = (*Store)(nil)

const functionCols = `name, kind, url, handler, code_dir, timeout_ms, memory_mb, concurrency, created_at, tenant, env`

// functionKey is the name column of a function: unique across tenants (as state.StackKey).
func functionKey(tenant, name string) string { return state.StackKey(tenant, name) }

// PutFunction inserts f unless its tenant has a function of that name.
func (s *Store) PutFunction(ctx context.Context, f state.Function) error {
	key := functionKey(f.Tenant, f.Name)
	env, err := s.sealEnv(f.Env, key)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO functions (`+functionCols+`, code) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		key, f.Kind, f.URL, f.Handler, f.CodeDir, f.Timeout.Milliseconds(), f.MemoryMB, f.Concurrency, ms(f.CreatedAt), tenantOf(f.Tenant), env, f.Code)
	if isUnique(err, "functions_pkey") {
		return fmt.Errorf("function %s: %w", f.Name, state.ErrFunctionExists)
	}
	if err != nil {
		return fmt.Errorf("cannot store function %s: %w", f.Name, err)
	}
	return nil
}

// ReplaceFunction replaces the stored definition of f's tenant and name (its code, handler,
// limits, environment and code zip), keeping its creation time.
func (s *Store) ReplaceFunction(ctx context.Context, f state.Function) error {
	key := functionKey(f.Tenant, f.Name)
	if badKey(key) {
		return fmt.Errorf("function %s: %w", f.Name, state.ErrNotFound)
	}
	env, err := s.sealEnv(f.Env, key)
	if err != nil {
		return err
	}
	tag, err := s.exec(ctx, `UPDATE functions SET kind = $1, url = $2, handler = $3, code_dir = $4, timeout_ms = $5,
		memory_mb = $6, concurrency = $7, env = $8, code = $9 WHERE name = $10`,
		f.Kind, f.URL, f.Handler, f.CodeDir, f.Timeout.Milliseconds(), f.MemoryMB, f.Concurrency, env, f.Code, key)
	if err != nil {
		return fmt.Errorf("cannot store function %s: %w", f.Name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("function %s: %w", f.Name, state.ErrNotFound)
	}
	return nil
}

// sealEnv is the env column of a function: its variables as a sealed JSON object, nil for none.
func (s *Store) sealEnv(env map[string]string, key string) ([]byte, error) {
	if len(env) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the environment of function %s: %w", key, err)
	}
	return s.seal(b, "functions", "env", key), nil
}

// GetFunction returns tenant's function called name.
func (s *Store) GetFunction(ctx context.Context, tenant, name string) (state.Function, error) {
	key := functionKey(tenant, name)
	if badKey(key) {
		return state.Function{}, fmt.Errorf("function %s: %w", name, state.ErrNotFound)
	}
	f, err := s.scanFunction(s.queryRow(ctx, `SELECT `+functionCols+` FROM functions WHERE name = $1`, key))
	if err != nil {
		return state.Function{}, fmt.Errorf("function %s: %w", name, noRow(err))
	}
	return f, nil
}

// ListFunctions returns tenant's functions, by name.
func (s *Store) ListFunctions(ctx context.Context, tenant string) ([]state.Function, error) {
	fs, err := list(ctx, s, s.scanFunction, `SELECT `+functionCols+` FROM functions WHERE tenant = $1 ORDER BY name`, tenantOf(tenant))
	if err != nil {
		return nil, fmt.Errorf("cannot list functions: %w", err)
	}
	return fs, nil
}

// DeleteFunction removes tenant's function called name.
func (s *Store) DeleteFunction(ctx context.Context, tenant, name string) error {
	key := functionKey(tenant, name)
	if badKey(key) {
		return fmt.Errorf("function %s: %w", name, state.ErrNotFound)
	}
	tag, err := s.exec(ctx, `DELETE FROM functions WHERE name = $1`, key)
	if err != nil {
		return fmt.Errorf("cannot delete function %s: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("function %s: %w", name, state.ErrNotFound)
	}
	return nil
}

func (s *Store) scanFunction(r scanner) (state.Function, error) {
	var f state.Function
	var key string
	var timeout, created int64
	var env []byte
	err := r.Scan(&key, &f.Kind, &f.URL, &f.Handler, &f.CodeDir, &timeout, &f.MemoryMB, &f.Concurrency, &created, &f.Tenant, &env)
	if err != nil {
		return f, err
	}
	_, f.Name = state.SplitStackKey(key)
	f.Timeout = time.Duration(timeout) * time.Millisecond
	f.CreatedAt = tm(created)
	if err := s.open(&env, "functions", "env", key); err != nil {
		return f, err
	}
	if env != nil {
		if err := json.Unmarshal(env, &f.Env); err != nil {
			return f, fmt.Errorf("cannot decode the environment of function %s: %w", key, err)
		}
	}
	return f, nil
}

// FunctionCode returns the code zip of tenant's function called name.
func (s *Store) FunctionCode(ctx context.Context, tenant, name string) ([]byte, error) {
	key := functionKey(tenant, name)
	if badKey(key) {
		return nil, fmt.Errorf("function %s: %w", name, state.ErrNotFound)
	}
	var code []byte
	if err := s.queryRow(ctx, `SELECT code FROM functions WHERE name = $1`, key).Scan(&code); err != nil {
		return nil, fmt.Errorf("function %s: %w", name, noRow(err))
	}
	return code, nil
}
