package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Accounts = (*Store)(nil)

const tokenCols = `id, hash, tenant, role, name, created_by, created_at, expires_at, revoked_at`

// CreateToken inserts t.
func (s *Store) CreateToken(ctx context.Context, t state.Token) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.Tenant, t.Role, t.Name, t.CreatedBy, ms(t.CreatedAt), ms(t.ExpiresAt), ms(t.RevokedAt))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("token %s: %w", t.ID, state.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("cannot store token %s: %w", t.ID, err)
	}
	return nil
}

func scanToken(sc scanner) (state.Token, error) {
	var t state.Token
	var created, expires, revoked int64
	if err := sc.Scan(&t.ID, &t.Hash, &t.Tenant, &t.Role, &t.Name, &t.CreatedBy, &created, &expires, &revoked); err != nil {
		return state.Token{}, err
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = tm(created), tm(expires), tm(revoked)
	return t, nil
}

// TokenByHash returns the token whose hash is hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (state.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, hash))
	if err != nil {
		return state.Token{}, fmt.Errorf("token: %w", noRow(err))
	}
	return t, nil
}

// ListTokens returns tenant's tokens, or every tenant's for "".
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]state.Token, error) {
	q, args := `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`, []any{}
	if tenant != "" {
		q, args = `SELECT `+tokenCols+` FROM tokens WHERE tenant = ? ORDER BY created_at, id`, []any{tenant}
	}
	ts, err := list(ctx, s.r, scanToken, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cannot list tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken marks a token revoked, keeping the time of its first revocation.
func (s *Store) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END
		WHERE id = ? AND (? = '' OR tenant = ?)`, ms(at), id, tenant, tenant)
	if err != nil {
		return fmt.Errorf("cannot revoke token %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %s: %w", id, state.ErrNotFound)
	}
	return nil
}

// PutGrant inserts or replaces a grant.
func (s *Store) PutGrant(ctx context.Context, g state.Grant) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO grants (tenant, subject, stack, role, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (tenant, subject, stack) DO UPDATE SET role = excluded.role, created_at = excluded.created_at`,
		g.Tenant, g.Subject, g.Stack, g.Role, ms(g.CreatedAt))
	if err != nil {
		return fmt.Errorf("cannot store grant: %w", err)
	}
	return nil
}

// DeleteGrant removes a grant.
func (s *Store) DeleteGrant(ctx context.Context, tenant, subject, stack string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM grants WHERE tenant = ? AND subject = ? AND stack = ?`, tenant, subject, stack)
	if err != nil {
		return fmt.Errorf("cannot delete grant: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("grant of %s on %s: %w", subject, stack, state.ErrNotFound)
	}
	return nil
}

// Grants returns the grants of subject (or all) in tenant.
func (s *Store) Grants(ctx context.Context, tenant, subject string) ([]state.Grant, error) {
	gs, err := list(ctx, s.r, func(sc scanner) (state.Grant, error) {
		var g state.Grant
		var created int64
		err := sc.Scan(&g.Tenant, &g.Subject, &g.Stack, &g.Role, &created)
		g.CreatedAt = tm(created)
		return g, err
	}, `SELECT tenant, subject, stack, role, created_at FROM grants WHERE tenant = ? AND (? = '' OR subject = ?)
		ORDER BY subject, stack`, tenant, subject, subject)
	if err != nil {
		return nil, fmt.Errorf("cannot list grants: %w", err)
	}
	return gs, nil
}

// AppendAudit appends an audit entry.
func (s *Store) AppendAudit(ctx context.Context, e state.AuditEntry) (int64, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO audit (at, tenant, subject, role, action, target, remote, status)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, ms(e.At), e.Tenant, e.Subject, e.Role, e.Action, e.Target, e.Remote, e.Status)
	if err != nil {
		return 0, fmt.Errorf("cannot append to the audit log: %w", err)
	}
	return res.LastInsertId()
}

// ListAudit returns the audit entries f selects.
func (s *Store) ListAudit(ctx context.Context, f state.AuditFilter) ([]state.AuditEntry, error) {
	limit := int64(f.Limit)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	es, err := list(ctx, s.r, func(sc scanner) (state.AuditEntry, error) {
		var e state.AuditEntry
		var at int64
		err := sc.Scan(&e.Seq, &at, &e.Tenant, &e.Subject, &e.Role, &e.Action, &e.Target, &e.Remote, &e.Status)
		e.At = tm(at)
		return e, err
	}, `SELECT seq, at, tenant, subject, role, action, target, remote, status FROM audit
		WHERE seq > ? AND (? = '' OR tenant = ?) ORDER BY seq LIMIT ?`, f.After, f.Tenant, f.Tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("cannot read the audit log: %w", err)
	}
	return es, nil
}
