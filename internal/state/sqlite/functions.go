package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Functions = (*Store)(nil)

const functionCols = `name, kind, url, handler, code_dir, timeout_ms, memory_mb, concurrency, created_at, tenant`

// functionKey is the name column of a function: unique across tenants (as state.StackKey).
func functionKey(tenant, name string) string { return state.StackKey(tenant, name) }

// PutFunction inserts f unless its tenant has a function of that name.
func (s *Store) PutFunction(ctx context.Context, f state.Function) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO functions (`+functionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		functionKey(f.Tenant, f.Name), f.Kind, f.URL, f.Handler, f.CodeDir, f.Timeout.Milliseconds(), f.MemoryMB, f.Concurrency, ms(f.CreatedAt), tenantOf(f.Tenant))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("function %s: %w", f.Name, state.ErrFunctionExists)
	}
	if err != nil {
		return fmt.Errorf("cannot store function %s: %w", f.Name, err)
	}
	return nil
}

// GetFunction returns tenant's function called name.
func (s *Store) GetFunction(ctx context.Context, tenant, name string) (state.Function, error) {
	f, err := scanFunction(s.r.QueryRowContext(ctx, `SELECT `+functionCols+` FROM functions WHERE name = ?`, functionKey(tenant, name)))
	if err != nil {
		return state.Function{}, fmt.Errorf("function %s: %w", name, noRow(err))
	}
	return f, nil
}

// ListFunctions returns tenant's functions, by name.
func (s *Store) ListFunctions(ctx context.Context, tenant string) ([]state.Function, error) {
	fs, err := list(ctx, s.r, scanFunction, `SELECT `+functionCols+` FROM functions WHERE tenant = ? ORDER BY name`, tenantOf(tenant))
	if err != nil {
		return nil, fmt.Errorf("cannot list functions: %w", err)
	}
	return fs, nil
}

// DeleteFunction removes tenant's function called name.
func (s *Store) DeleteFunction(ctx context.Context, tenant, name string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM functions WHERE name = ?`, functionKey(tenant, name))
	if err != nil {
		return fmt.Errorf("cannot delete function %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("function %s: %w", name, state.ErrNotFound)
	}
	return nil
}

func scanFunction(r scanner) (state.Function, error) {
	var f state.Function
	var key string
	var timeout, created int64
	err := r.Scan(&key, &f.Kind, &f.URL, &f.Handler, &f.CodeDir, &timeout, &f.MemoryMB, &f.Concurrency, &created, &f.Tenant)
	_, f.Name = state.SplitStackKey(key)
	f.Timeout = time.Duration(timeout) * time.Millisecond
	f.CreatedAt = tm(created)
	return f, err
}
