package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Accounts = (*Store)(nil)

const tokenCols = `id, hash, tenant, role, name, created_by, created_at, expires_at, revoked_at`

// CreateToken inserts t.
func (s *Store) CreateToken(ctx context.Context, t state.Token) error {
	_, err := s.exec(ctx, `INSERT INTO tokens (`+tokenCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.ID, t.Hash, t.Tenant, t.Role, t.Name, t.CreatedBy, ms(t.CreatedAt), ms(t.ExpiresAt), ms(t.RevokedAt))
	if isUnique(err, "") {
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
	t, err := scanToken(s.queryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1`, hash))
	if err != nil {
		return state.Token{}, fmt.Errorf("token: %w", noRow(err))
	}
	return t, nil
}

// ListTokens returns tenant's tokens, or every tenant's for "".
func (s *Store) ListTokens(ctx context.Context, tenant string) ([]state.Token, error) {
	ts, err := list(ctx, s, scanToken, `SELECT `+tokenCols+` FROM tokens WHERE $1::text = '' OR tenant = $1 ORDER BY created_at, id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("cannot list tokens: %w", err)
	}
	return ts, nil
}

// RevokeToken marks a token revoked, keeping the time of its first revocation.
func (s *Store) RevokeToken(ctx context.Context, tenant, id string, at time.Time) error {
	tag, err := s.exec(ctx, `UPDATE tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN $1 ELSE revoked_at END
		WHERE id = $2 AND ($3::text = '' OR tenant = $3)`, ms(at), id, tenant)
	if err != nil {
		return fmt.Errorf("cannot revoke token %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token %s: %w", id, state.ErrNotFound)
	}
	return nil
}

// PutGrant inserts or replaces a grant.
func (s *Store) PutGrant(ctx context.Context, g state.Grant) error {
	_, err := s.exec(ctx, `INSERT INTO grants (tenant, subject, stack, role, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant, subject, stack) DO UPDATE SET role = EXCLUDED.role, created_at = EXCLUDED.created_at`,
		g.Tenant, g.Subject, g.Stack, g.Role, ms(g.CreatedAt))
	if err != nil {
		return fmt.Errorf("cannot store grant: %w", err)
	}
	return nil
}

// DeleteGrant removes a grant.
func (s *Store) DeleteGrant(ctx context.Context, tenant, subject, stack string) error {
	tag, err := s.exec(ctx, `DELETE FROM grants WHERE tenant = $1 AND subject = $2 AND stack = $3`, tenant, subject, stack)
	if err != nil {
		return fmt.Errorf("cannot delete grant: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("grant of %s on %s: %w", subject, stack, state.ErrNotFound)
	}
	return nil
}

// Grants returns the grants of subject (or all) in tenant.
func (s *Store) Grants(ctx context.Context, tenant, subject string) ([]state.Grant, error) {
	gs, err := list(ctx, s, func(sc scanner) (state.Grant, error) {
		var g state.Grant
		var created int64
		err := sc.Scan(&g.Tenant, &g.Subject, &g.Stack, &g.Role, &created)
		g.CreatedAt = tm(created)
		return g, err
	}, `SELECT tenant, subject, stack, role, created_at FROM grants WHERE tenant = $1 AND ($2::text = '' OR subject = $2)
		ORDER BY subject, stack`, tenant, subject)
	if err != nil {
		return nil, fmt.Errorf("cannot list grants: %w", err)
	}
	return gs, nil
}

// AppendAudit appends an audit entry.
func (s *Store) AppendAudit(ctx context.Context, e state.AuditEntry) (int64, error) {
	var seq int64
	// Under a lock held to the commit, as events: entries commit in Seq order, so a reader
	// paging with After never misses one committed late below the last it saw.
	err := s.batch(ctx, func(b *pgx.Batch) {
		b.Queue(`SELECT pg_advisory_xact_lock($1, 0)`, auditLock)
		b.Queue(`INSERT INTO audit (at, tenant, subject, role, action, target, remote, status)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq`,
			ms(e.At), e.Tenant, e.Subject, e.Role, e.Action, e.Target, e.Remote, e.Status)
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&seq)
	})
	if err != nil {
		return 0, fmt.Errorf("cannot append to the audit log: %w", err)
	}
	return seq, nil
}

// ListAudit returns the audit entries f selects.
func (s *Store) ListAudit(ctx context.Context, f state.AuditFilter) ([]state.AuditEntry, error) {
	var limit *int64 // NULL: no limit
	if f.Limit > 0 {
		l := int64(f.Limit)
		limit = &l
	}
	es, err := list(ctx, s, func(sc scanner) (state.AuditEntry, error) {
		var e state.AuditEntry
		var at int64
		err := sc.Scan(&e.Seq, &at, &e.Tenant, &e.Subject, &e.Role, &e.Action, &e.Target, &e.Remote, &e.Status)
		e.At = tm(at)
		return e, err
	}, `SELECT seq, at, tenant, subject, role, action, target, remote, status FROM audit
		WHERE seq > $1 AND ($2::text = '' OR tenant = $2) ORDER BY seq LIMIT $3`, f.After, f.Tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("cannot read the audit log: %w", err)
	}
	return es, nil
}
