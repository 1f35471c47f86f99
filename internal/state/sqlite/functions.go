package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Functions = (*Store)(nil)

const functionCols = `name, kind, url, handler, code_dir, timeout_ms, memory_mb, concurrency, created_at`

// PutFunction inserts f unless its name is taken.
func (s *Store) PutFunction(ctx context.Context, f state.Function) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO functions (`+functionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.Name, f.Kind, f.URL, f.Handler, f.CodeDir, f.Timeout.Milliseconds(), f.MemoryMB, f.Concurrency, ms(f.CreatedAt))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("function %s: %w", f.Name, state.ErrFunctionExists)
	}
	if err != nil {
		return fmt.Errorf("cannot store function %s: %w", f.Name, err)
	}
	return nil
}

// GetFunction returns the function called name.
func (s *Store) GetFunction(ctx context.Context, name string) (state.Function, error) {
	f, err := scanFunction(s.r.QueryRowContext(ctx, `SELECT `+functionCols+` FROM functions WHERE name = ?`, name))
	if err != nil {
		return state.Function{}, fmt.Errorf("function %s: %w", name, noRow(err))
	}
	return f, nil
}

// ListFunctions returns every function, by name.
func (s *Store) ListFunctions(ctx context.Context) ([]state.Function, error) {
	fs, err := list(ctx, s.r, scanFunction, `SELECT `+functionCols+` FROM functions ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("cannot list functions: %w", err)
	}
	return fs, nil
}

// DeleteFunction removes the function called name.
func (s *Store) DeleteFunction(ctx context.Context, name string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM functions WHERE name = ?`, name)
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
	var timeout, created int64
	err := r.Scan(&f.Name, &f.Kind, &f.URL, &f.Handler, &f.CodeDir, &timeout, &f.MemoryMB, &f.Concurrency, &created)
	f.Timeout = time.Duration(timeout) * time.Millisecond
	f.CreatedAt = tm(created)
	return f, err
}
