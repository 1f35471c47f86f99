package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/internal/state"
)

var _ state.Registry = (*Store)(nil)

const (
	providerCols = `tenant, id, name, description, agency_urn, agency_name, seq, created_at, updated_at`
	versionCols  = `tenant, provider_id, version, description, function_urn, seq, created_at`
)

// CreatePrivateProvider inserts p, and first when not nil, in one transaction. Under a quota,
// the tenant's creates take an advisory lock so that two of them do not both count one row
// short of it.
func (s *Store) CreatePrivateProvider(ctx context.Context, p state.PrivateProvider, first *state.PrivateProviderVersion, maxProviders int) (state.PrivateProvider, error) {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if maxProviders > 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, providersLock, p.Tenant); err != nil {
				return err
			}
		}
		if err := underQuota(ctx, tx, maxProviders, `SELECT COUNT(*) FROM private_providers WHERE tenant = $1`, p.Tenant); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `INSERT INTO private_providers
			(tenant, id, name, description, agency_urn, agency_name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			RETURNING seq`,
			p.Tenant, p.ID, p.Name, p.Description, p.AgencyURN, p.AgencyName, ms(p.CreatedAt), ms(p.UpdatedAt)).Scan(&p.Seq)
		if err != nil {
			return uniqueIs(err, state.ErrExists)
		}
		if first == nil {
			return nil
		}
		v := *first
		v.Tenant, v.ProviderID = p.Tenant, p.ID
		return insertVersion(ctx, tx, v)
	})
	if err != nil {
		return state.PrivateProvider{}, fmt.Errorf("cannot create private provider %s: %w", p.Name, err)
	}
	p.CreatedAt, p.UpdatedAt = tm(ms(p.CreatedAt)), tm(ms(p.UpdatedAt))
	return p, nil
}

// GetPrivateProvider returns tenant's provider called name.
func (s *Store) GetPrivateProvider(ctx context.Context, tenant, name string) (state.PrivateProvider, error) {
	p, err := scanProvider(s.queryRow(ctx, `SELECT `+providerCols+` FROM private_providers
		WHERE tenant = $1 AND name = $2`, tenant, name))
	if err != nil {
		return state.PrivateProvider{}, fmt.Errorf("cannot get private provider %s: %w", name, noRow(err))
	}
	return p, nil
}

// ListPrivateProviders returns a page of tenant's providers.
func (s *Store) ListPrivateProviders(ctx context.Context, tenant string, page state.Page) ([]state.PrivateProvider, error) {
	where, args := pageWhere(page, `tenant = $1`, tenant)
	ps, err := list(ctx, s, scanProvider, `SELECT `+providerCols+` FROM private_providers WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("cannot list private providers: %w", err)
	}
	return ps, nil
}

// UpdatePrivateProvider sets the description and update time of tenant's provider id.
func (s *Store) UpdatePrivateProvider(ctx context.Context, tenant, id, description string, at time.Time) error {
	tag, err := s.exec(ctx, `UPDATE private_providers SET description = $1, updated_at = $2 WHERE tenant = $3 AND id = $4`,
		description, ms(at), tenant, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("cannot update private provider %s: %w", id, err)
	}
	return nil
}

// DeletePrivateProvider removes tenant's provider id and, by the foreign key's cascade, its
// versions.
func (s *Store) DeletePrivateProvider(ctx context.Context, tenant, id string) error {
	tag, err := s.exec(ctx, `DELETE FROM private_providers WHERE tenant = $1 AND id = $2`, tenant, id)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("cannot delete private provider %s: %w", id, err)
	}
	return nil
}

// CreatePrivateProviderVersion inserts v under its provider, whose row it locks (FOR UPDATE)
// so that concurrent creates count its versions one at a time.
func (s *Store) CreatePrivateProviderVersion(ctx context.Context, v state.PrivateProviderVersion, maxVersions int) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM private_providers WHERE tenant = $1 AND id = $2 FOR UPDATE`,
			v.Tenant, v.ProviderID).Scan(&one)
		if err != nil {
			return noRow(err)
		}
		// An existing version is a conflict even at the quota: say what is wrong with it.
		var n int
		err = tx.QueryRow(ctx, `SELECT COUNT(*) FROM private_provider_versions WHERE provider_id = $1 AND version = $2`,
			v.ProviderID, v.Version).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return state.ErrExists
		}
		if err := underQuota(ctx, tx, maxVersions, `SELECT COUNT(*) FROM private_provider_versions WHERE provider_id = $1`, v.ProviderID); err != nil {
			return err
		}
		return insertVersion(ctx, tx, v)
	})
	if err != nil {
		return fmt.Errorf("cannot create version %s of private provider %s: %w", v.Version, v.ProviderID, err)
	}
	return nil
}

// GetPrivateProviderVersion returns one version of tenant's provider providerID.
func (s *Store) GetPrivateProviderVersion(ctx context.Context, tenant, providerID, version string) (state.PrivateProviderVersion, error) {
	v, err := scanVersion(s.queryRow(ctx, `SELECT `+versionCols+` FROM private_provider_versions
		WHERE tenant = $1 AND provider_id = $2 AND version = $3`, tenant, providerID, version))
	if err != nil {
		return state.PrivateProviderVersion{}, fmt.Errorf("cannot get version %s of private provider %s: %w", version, providerID, noRow(err))
	}
	return v, nil
}

// ListPrivateProviderVersions returns a page of the versions of tenant's provider providerID.
func (s *Store) ListPrivateProviderVersions(ctx context.Context, tenant, providerID string, page state.Page) ([]state.PrivateProviderVersion, error) {
	where, args := pageWhere(page, `tenant = $1 AND provider_id = $2`, tenant, providerID)
	vs, err := list(ctx, s, scanVersion, `SELECT `+versionCols+` FROM private_provider_versions WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("cannot list versions of private provider %s: %w", providerID, err)
	}
	return vs, nil
}

// DeletePrivateProviderVersion removes one version of tenant's provider providerID.
func (s *Store) DeletePrivateProviderVersion(ctx context.Context, tenant, providerID, version string) error {
	tag, err := s.exec(ctx, `DELETE FROM private_provider_versions WHERE tenant = $1 AND provider_id = $2 AND version = $3`,
		tenant, providerID, version)
	if err == nil {
		err = affected(tag)
	}
	if err != nil {
		return fmt.Errorf("cannot delete version %s of private provider %s: %w", version, providerID, err)
	}
	return nil
}

func insertVersion(ctx context.Context, tx pgx.Tx, v state.PrivateProviderVersion) error {
	_, err := tx.Exec(ctx, `INSERT INTO private_provider_versions
		(tenant, provider_id, version, description, function_urn, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		v.Tenant, v.ProviderID, v.Version, v.Description, v.FunctionURN, ms(v.CreatedAt))
	return uniqueIs(err, state.ErrExists)
}

// pageWhere completes a WHERE clause (cond with its args, numbered from $1) with page's
// position, order and limit.
func pageWhere(page state.Page, cond string, args ...any) (string, []any) {
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	cmpOp, dir := ">", "ASC"
	if page.Desc {
		cmpOp, dir = "<", "DESC"
	}
	if page.After != nil {
		at := arg(ms(page.After.CreatedAt))
		cond += ` AND (created_at ` + cmpOp + ` ` + at + ` OR (created_at = ` + at + ` AND seq ` + cmpOp + ` ` + arg(page.After.Seq) + `))`
	}
	cond += ` ORDER BY created_at ` + dir + `, seq ` + dir
	if page.Limit > 0 {
		cond += ` LIMIT ` + arg(page.Limit)
	}
	return cond, args
}

// underQuota returns state.ErrQuota when max > 0 and the count query answers max or more.
func underQuota(ctx context.Context, tx pgx.Tx, max int, count string, args ...any) error {
	if max <= 0 {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, count, args...).Scan(&n); err != nil {
		return err
	}
	if n >= max {
		return fmt.Errorf("%w: %d of %d", state.ErrQuota, n, max)
	}
	return nil
}

func scanProvider(r scanner) (state.PrivateProvider, error) {
	var p state.PrivateProvider
	var c, u int64
	err := r.Scan(&p.Tenant, &p.ID, &p.Name, &p.Description, &p.AgencyURN, &p.AgencyName, &p.Seq, &c, &u)
	p.CreatedAt, p.UpdatedAt = tm(c), tm(u)
	return p, err
}

func scanVersion(r scanner) (state.PrivateProviderVersion, error) {
	var v state.PrivateProviderVersion
	var c int64
	err := r.Scan(&v.Tenant, &v.ProviderID, &v.Version, &v.Description, &v.FunctionURN, &v.Seq, &c)
	v.CreatedAt = tm(c)
	return v, err
}
