package state

import (
	"context"
	"errors"
	"time"
)

// PrivateProvider is one private provider of the registry (internal/registry). Names are
// unique per tenant at any one time; ID is fresh on every create.
type PrivateProvider struct {
	Tenant      string
	ID          string
	Name        string
	Description string
	AgencyURN   string
	AgencyName  string
	Seq         int64 // assigned by CreatePrivateProvider, increasing: the tie-break of equal CreatedAt
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// PrivateProviderVersion is one immutable version of a private provider.
type PrivateProviderVersion struct {
	Tenant      string
	ProviderID  string
	Version     string
	Description string
	FunctionURN string
	Seq         int64 // assigned by the store, as PrivateProvider.Seq
	CreatedAt   time.Time
}

// Page selects a slice of a list ordered by (CreatedAt, Seq): ascending, or descending with
// Desc. With After set, only rows strictly past After in that order come back. Limit > 0
// bounds the rows returned.
type Page struct {
	Desc  bool
	After *Cursor
	Limit int
}

// Cursor is a position in a list ordered by (CreatedAt, Seq).
type Cursor struct {
	CreatedAt time.Time
	Seq       int64
}

var (
	// ErrExists is returned when a row's key is taken: a provider name in its tenant, a
	// version of a provider.
	ErrExists = errors.New("already exists")
	// ErrQuota is returned when a create would exceed the limit it was given.
	ErrQuota = errors.New("quota exceeded")
)

// Registry stores the private-provider registry. It is not part of Store: backends that keep
// the registry implement it besides. Every method is scoped to one tenant: a row of another
// tenant is never seen, and is ErrNotFound.
type Registry interface {
	PrivateProviders
	PrivateProviderVersions
}

// PrivateProviders stores providers.
type PrivateProviders interface {
	// CreatePrivateProvider inserts p (and first, a version of it, when not nil) in one
	// transaction and returns p with its Seq. A name taken in p.Tenant is ErrExists; when
	// maxProviders > 0 and p.Tenant has that many providers already, ErrQuota.
	CreatePrivateProvider(ctx context.Context, p PrivateProvider, first *PrivateProviderVersion, maxProviders int) (PrivateProvider, error)
	// GetPrivateProvider returns tenant's provider called name, or ErrNotFound.
	GetPrivateProvider(ctx context.Context, tenant, name string) (PrivateProvider, error)
	// ListPrivateProviders returns a page of tenant's providers.
	ListPrivateProviders(ctx context.Context, tenant string, page Page) ([]PrivateProvider, error)
	// UpdatePrivateProvider sets the description and UpdatedAt of tenant's provider id, or
	// returns ErrNotFound.
	UpdatePrivateProvider(ctx context.Context, tenant, id, description string, at time.Time) error
	// DeletePrivateProvider removes tenant's provider id with all its versions, or returns
	// ErrNotFound.
	DeletePrivateProvider(ctx context.Context, tenant, id string) error
}

// PrivateProviderVersions stores the versions of providers, addressed by provider id.
type PrivateProviderVersions interface {
	// CreatePrivateProviderVersion inserts v. A provider v.ProviderID that tenant v.Tenant
	// does not have is ErrNotFound; a version it has already, ErrExists; when maxVersions > 0
	// and the provider has that many versions already, ErrQuota.
	CreatePrivateProviderVersion(ctx context.Context, v PrivateProviderVersion, maxVersions int) error
	// GetPrivateProviderVersion returns one version, or ErrNotFound.
	GetPrivateProviderVersion(ctx context.Context, tenant, providerID, version string) (PrivateProviderVersion, error)
	// ListPrivateProviderVersions returns a page of a provider's versions (none for an
	// unknown provider).
	ListPrivateProviderVersions(ctx context.Context, tenant, providerID string, page Page) ([]PrivateProviderVersion, error)
	// DeletePrivateProviderVersion removes one version, or returns ErrNotFound.
	DeletePrivateProviderVersion(ctx context.Context, tenant, providerID, version string) error
}
