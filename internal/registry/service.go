package registry

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
)

// Default quotas. RFS answers 403 at its quotas but does not document their values.
const (
	DefaultMaxProviders = 100 // per tenant
	DefaultMaxVersions  = 100 // per provider
)

// Options configure a Service. Store is required; the other fields have usable zero values.
type Options struct {
	Store state.Registry
	// Region is the region function URNs must name; "": any region.
	Region string
	// MaxProviders bounds the providers of a tenant and MaxVersions the versions of a
	// provider (403 past them). 0: the defaults; < 0: no bound.
	MaxProviders, MaxVersions int
	// Now is the clock; default time.Now. Times are kept to the millisecond.
	Now func() time.Time
}

// Service runs the nine operations of /v1/private-providers for a tenant. Its errors are
// *Error for refused requests and plain errors for failures (500).
type Service struct {
	store                     state.Registry
	region                    string
	maxProviders, maxVersions int
	now                       func() time.Time
}

// New returns the service of o. It panics when o.Store is nil (a programming error).
func New(o Options) *Service {
	if o.Store == nil {
		panic("registry: Options.Store is required")
	}
	s := &Service{store: o.Store, region: o.Region, maxProviders: quota(o.MaxProviders, DefaultMaxProviders),
		maxVersions: quota(o.MaxVersions, DefaultMaxVersions), now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

func quota(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0 // the store's "no bound"
	}
	return v
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// CreateProvider is CreatePrivateProvider: it creates an empty provider, or one with its first
// version when the request has both provider_version and function_graph_urn.
func (s *Service) CreateProvider(ctx context.Context, tenant string, req api.CreatePrivateProviderRequest) (api.CreatePrivateProviderResponse, error) {
	var zero api.CreatePrivateProviderResponse
	if err := s.checkCreate(req); err != nil {
		return zero, err
	}
	now := s.clock()
	p := state.PrivateProvider{Tenant: tenant, ID: newID(), Name: req.ProviderName, Description: req.ProviderDescription,
		AgencyURN: req.ProviderAgencyURN, AgencyName: req.ProviderAgencyName, CreatedAt: now, UpdatedAt: now}
	var first *state.PrivateProviderVersion
	if req.ProviderVersion != "" {
		first = &state.PrivateProviderVersion{Version: req.ProviderVersion, Description: req.VersionDescription,
			FunctionURN: req.FunctionGraphURN, CreatedAt: now}
	}
	_, err := s.store.CreatePrivateProvider(ctx, p, first, s.maxProviders)
	switch {
	case errors.Is(err, state.ErrExists):
		return zero, newError(http.StatusConflict, CodeProviderExists, "private provider %s already exists", req.ProviderName)
	case errors.Is(err, state.ErrQuota):
		return zero, newError(http.StatusForbidden, CodeProviderQuota,
			"cannot create private provider %s: the quota of %d private providers is reached", req.ProviderName, s.maxProviders)
	case err != nil:
		return zero, err
	}
	return api.CreatePrivateProviderResponse{ProviderID: p.ID, ProviderSource: Source(p.Name)}, nil
}

func (s *Service) checkCreate(req api.CreatePrivateProviderRequest) error {
	if err := CheckName(req.ProviderName); err != nil {
		return err
	}
	if err := checkDescription("provider_description", req.ProviderDescription); err != nil {
		return err
	}
	if err := checkAgency(req.ProviderAgencyURN, req.ProviderAgencyName); err != nil {
		return err
	}
	switch {
	case req.ProviderVersion == "" && req.FunctionGraphURN == "":
		if req.VersionDescription != "" {
			return invalid("version_description needs provider_version and function_graph_urn")
		}
		return nil
	case req.ProviderVersion == "":
		return missing("provider_version (function_graph_urn needs it)")
	case req.FunctionGraphURN == "":
		return missing("function_graph_urn (provider_version needs it)")
	}
	return s.checkVersion(req.ProviderVersion, req.VersionDescription, req.FunctionGraphURN)
}

func (s *Service) checkVersion(version, description, urn string) error {
	if err := CheckVersion(version); err != nil {
		return err
	}
	if err := checkDescription("version_description", description); err != nil {
		return err
	}
	return CheckURN(urn, s.region)
}

// provider returns tenant's provider name after the name/id guard: 404 when absent, 400 when
// id is not "" and not its id.
func (s *Service) provider(ctx context.Context, tenant, name, id string) (state.PrivateProvider, error) {
	if err := CheckName(name); err != nil {
		return state.PrivateProvider{}, err
	}
	if id != "" {
		if err := CheckProviderID(id); err != nil {
			return state.PrivateProvider{}, err
		}
	}
	p, err := s.store.GetPrivateProvider(ctx, tenant, name)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return p, providerNotFound(name)
	case err != nil:
		return p, err
	case id != "" && id != p.ID:
		return p, newError(http.StatusBadRequest, CodeProviderIDMismatch,
			"provider_id %s is not the id of private provider %s", id, name)
	}
	return p, nil
}

// gone maps the store's ErrNotFound (the provider went away meanwhile) to 404.
func gone(err error, notFound *Error) error {
	if errors.Is(err, state.ErrNotFound) {
		return notFound
	}
	return err
}

// ListProviders is ListPrivateProviders.
func (s *Service) ListProviders(ctx context.Context, tenant string, q Query) (api.ListPrivateProvidersResponse, error) {
	scope := "providers\x00" + tenant
	page, err := q.page(scope)
	if err != nil {
		return api.ListPrivateProvidersResponse{}, err
	}
	ps, err := s.store.ListPrivateProviders(ctx, tenant, page)
	if err != nil {
		return api.ListPrivateProvidersResponse{}, err
	}
	more := len(ps) > q.Limit
	ps = ps[:min(len(ps), q.Limit)]
	out := api.ListPrivateProvidersResponse{Providers: make([]api.PrivateProvider, 0, len(ps))}
	for _, p := range ps {
		out.Providers = append(out.Providers, providerOut(p))
	}
	out.PageInfo.CurrentCount = len(ps)
	if more {
		last := ps[len(ps)-1]
		out.PageInfo.NextMarker = q.next(scope, more, last.CreatedAt, last.Seq)
	}
	return out, nil
}

// ShowProvider is ShowPrivateProviderMetadata.
func (s *Service) ShowProvider(ctx context.Context, tenant, name, id string) (api.PrivateProvider, error) {
	p, err := s.provider(ctx, tenant, name, id)
	if err != nil {
		return api.PrivateProvider{}, err
	}
	return providerOut(p), nil
}

// UpdateProvider is UpdatePrivateProviderMetadata: the description only, bumping update_time.
func (s *Service) UpdateProvider(ctx context.Context, tenant, name string, req api.UpdatePrivateProviderRequest) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if req.ProviderDescription == nil {
		return missing("provider_description (nothing to update)")
	}
	if err := checkDescription("provider_description", *req.ProviderDescription); err != nil {
		return err
	}
	p, err := s.provider(ctx, tenant, name, req.ProviderID)
	if err != nil {
		return err
	}
	err = s.store.UpdatePrivateProvider(ctx, tenant, p.ID, *req.ProviderDescription, s.clock())
	return gone(err, providerNotFound(name))
}

// DeleteProvider is DeletePrivateProvider: the provider and all its versions.
func (s *Service) DeleteProvider(ctx context.Context, tenant, name, id string) error {
	p, err := s.provider(ctx, tenant, name, id)
	if err != nil {
		return err
	}
	return gone(s.store.DeletePrivateProvider(ctx, tenant, p.ID), providerNotFound(name))
}

// CreateVersion is CreatePrivateProviderVersion.
func (s *Service) CreateVersion(ctx context.Context, tenant, name string, req api.CreatePrivateProviderVersionRequest) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := s.checkVersion(req.ProviderVersion, req.VersionDescription, req.FunctionGraphURN); err != nil {
		return err
	}
	p, err := s.provider(ctx, tenant, name, req.ProviderID)
	if err != nil {
		return err
	}
	v := state.PrivateProviderVersion{Tenant: tenant, ProviderID: p.ID, Version: req.ProviderVersion,
		Description: req.VersionDescription, FunctionURN: req.FunctionGraphURN, CreatedAt: s.clock()}
	err = s.store.CreatePrivateProviderVersion(ctx, v, s.maxVersions)
	switch {
	case errors.Is(err, state.ErrExists):
		return newError(http.StatusConflict, CodeVersionExists, "private provider %s already has version %s", name, req.ProviderVersion)
	case errors.Is(err, state.ErrQuota):
		return newError(http.StatusForbidden, CodeVersionQuota,
			"cannot create version %s: private provider %s has the most versions allowed, %d", req.ProviderVersion, name, s.maxVersions)
	}
	return gone(err, providerNotFound(name))
}

// ListVersions is ListPrivateProviderVersions.
func (s *Service) ListVersions(ctx context.Context, tenant, name string, q Query) (api.ListPrivateProviderVersionsResponse, error) {
	var zero api.ListPrivateProviderVersionsResponse
	p, err := s.provider(ctx, tenant, name, q.ProviderID)
	if err != nil {
		return zero, err
	}
	scope := "versions\x00" + tenant + "\x00" + p.ID + "\x00" + q.ProviderID
	page, err := q.page(scope)
	if err != nil {
		return zero, err
	}
	vs, err := s.store.ListPrivateProviderVersions(ctx, tenant, p.ID, page)
	if err != nil {
		return zero, err
	}
	more := len(vs) > q.Limit
	vs = vs[:min(len(vs), q.Limit)]
	out := api.ListPrivateProviderVersionsResponse{Versions: make([]api.PrivateProviderVersion, 0, len(vs))}
	for _, v := range vs {
		out.Versions = append(out.Versions, versionOut(p, v, false))
	}
	out.PageInfo.CurrentCount = len(vs)
	if more {
		last := vs[len(vs)-1]
		out.PageInfo.NextMarker = q.next(scope, more, last.CreatedAt, last.Seq)
	}
	return out, nil
}

// version returns one version of tenant's provider name after the guard.
func (s *Service) version(ctx context.Context, tenant, name, version, id string) (state.PrivateProvider, state.PrivateProviderVersion, error) {
	if err := CheckName(name); err != nil {
		return state.PrivateProvider{}, state.PrivateProviderVersion{}, err
	}
	if err := CheckVersion(version); err != nil {
		return state.PrivateProvider{}, state.PrivateProviderVersion{}, err
	}
	p, err := s.provider(ctx, tenant, name, id)
	if err != nil {
		return p, state.PrivateProviderVersion{}, err
	}
	v, err := s.store.GetPrivateProviderVersion(ctx, tenant, p.ID, version)
	return p, v, gone(err, versionNotFound(name, version))
}

// ShowVersion is ShowPrivateProviderVersionMetadata.
func (s *Service) ShowVersion(ctx context.Context, tenant, name, version, id string) (api.PrivateProviderVersion, error) {
	p, v, err := s.version(ctx, tenant, name, version, id)
	if err != nil {
		return api.PrivateProviderVersion{}, err
	}
	return versionOut(p, v, true), nil
}

// DeleteVersion is DeletePrivateProviderVersion.
func (s *Service) DeleteVersion(ctx context.Context, tenant, name, version, id string) error {
	p, _, err := s.version(ctx, tenant, name, version, id)
	if err != nil {
		return err
	}
	err = s.store.DeletePrivateProviderVersion(ctx, tenant, p.ID, version)
	return gone(err, versionNotFound(name, version))
}

func providerOut(p state.PrivateProvider) api.PrivateProvider {
	return api.PrivateProvider{ProviderID: p.ID, ProviderName: p.Name, ProviderDescription: p.Description,
		ProviderSource: Source(p.Name), ProviderAgencyURN: p.AgencyURN, ProviderAgencyName: p.AgencyName,
		CreateTime: FormatTime(p.CreatedAt), UpdateTime: FormatTime(p.UpdatedAt)}
}

func versionOut(p state.PrivateProvider, v state.PrivateProviderVersion, withSource bool) api.PrivateProviderVersion {
	out := api.PrivateProviderVersion{ProviderID: p.ID, ProviderName: p.Name, ProviderVersion: v.Version,
		VersionDescription: v.Description, FunctionGraphURN: v.FunctionURN, CreateTime: FormatTime(v.CreatedAt)}
	if withSource {
		out.ProviderSource = Source(p.Name)
	}
	return out
}
