package client

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn/api"
)

// The private-provider registry speaks RFS's format: these methods send a fresh
// Client-Request-Id with every request, and a refused request comes back as *api.RFSError.

const privateProviders = "/v1/private-providers"

// CreatePrivateProvider registers a private provider (with its first version when req has
// ProviderVersion and FunctionGraphURN).
func (c *Client) CreatePrivateProvider(ctx context.Context, req api.CreatePrivateProviderRequest) (api.CreatePrivateProviderResponse, error) {
	var resp api.CreatePrivateProviderResponse
	err := c.rfs(ctx, http.MethodPost, privateProviders, nil, req, &resp)
	return resp, err
}

// PrivateProviders returns one page of the caller's private providers.
func (c *Client) PrivateProviders(ctx context.Context, q api.ListPrivateProvidersQuery) (api.ListPrivateProvidersResponse, error) {
	var resp api.ListPrivateProvidersResponse
	err := c.rfs(ctx, http.MethodGet, privateProviders, listQuery(q, ""), nil, &resp)
	return resp, err
}

// AllPrivateProviders returns every private provider of the caller, newest first, following
// the pages.
func (c *Client) AllPrivateProviders(ctx context.Context) ([]api.PrivateProvider, error) {
	var all []api.PrivateProvider
	q := api.ListPrivateProvidersQuery{}
	for {
		page, err := c.PrivateProviders(ctx, q)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Providers...)
		if page.PageInfo.NextMarker == nil || *page.PageInfo.NextMarker == "" {
			return all, nil
		}
		q.Marker = *page.PageInfo.NextMarker
	}
}

// PrivateProvider returns the metadata of provider name; id, when not "", must be its id.
func (c *Client) PrivateProvider(ctx context.Context, name, id string) (api.PrivateProvider, error) {
	var resp api.PrivateProvider
	err := c.rfs(ctx, http.MethodGet, providerPath(name)+"/metadata", idQuery(id), nil, &resp)
	return resp, err
}

// UpdatePrivateProvider changes the description of provider name.
func (c *Client) UpdatePrivateProvider(ctx context.Context, name string, req api.UpdatePrivateProviderRequest) error {
	return c.rfs(ctx, http.MethodPatch, providerPath(name)+"/metadata", nil, req, nil)
}

// DeletePrivateProvider deletes provider name with all its versions.
func (c *Client) DeletePrivateProvider(ctx context.Context, name, id string) error {
	return c.rfs(ctx, http.MethodDelete, providerPath(name), idQuery(id), nil, nil)
}

// CreatePrivateProviderVersion adds a version to provider name.
func (c *Client) CreatePrivateProviderVersion(ctx context.Context, name string, req api.CreatePrivateProviderVersionRequest) error {
	return c.rfs(ctx, http.MethodPost, providerPath(name)+"/versions", nil, req, nil)
}

// PrivateProviderVersions returns one page of the versions of provider name.
func (c *Client) PrivateProviderVersions(ctx context.Context, name, id string, q api.ListPrivateProvidersQuery) (api.ListPrivateProviderVersionsResponse, error) {
	var resp api.ListPrivateProviderVersionsResponse
	err := c.rfs(ctx, http.MethodGet, providerPath(name)+"/versions", listQuery(q, id), nil, &resp)
	return resp, err
}

// AllPrivateProviderVersions returns every version of provider name, newest first.
func (c *Client) AllPrivateProviderVersions(ctx context.Context, name string) ([]api.PrivateProviderVersion, error) {
	var all []api.PrivateProviderVersion
	q := api.ListPrivateProvidersQuery{}
	for {
		page, err := c.PrivateProviderVersions(ctx, name, "", q)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Versions...)
		if page.PageInfo.NextMarker == nil || *page.PageInfo.NextMarker == "" {
			return all, nil
		}
		q.Marker = *page.PageInfo.NextMarker
	}
}

// PrivateProviderVersion returns the metadata of one version of provider name.
func (c *Client) PrivateProviderVersion(ctx context.Context, name, version, id string) (api.PrivateProviderVersion, error) {
	var resp api.PrivateProviderVersion
	err := c.rfs(ctx, http.MethodGet, providerPath(name)+"/versions/"+url.PathEscape(version)+"/metadata", idQuery(id), nil, &resp)
	return resp, err
}

// DeletePrivateProviderVersion deletes one version of provider name.
func (c *Client) DeletePrivateProviderVersion(ctx context.Context, name, version, id string) error {
	return c.rfs(ctx, http.MethodDelete, providerPath(name)+"/versions/"+url.PathEscape(version), idQuery(id), nil, nil)
}

func providerPath(name string) string { return privateProviders + "/" + url.PathEscape(name) }

func idQuery(id string) url.Values {
	if id == "" {
		return nil
	}
	return url.Values{"provider_id": {id}}
}

func listQuery(q api.ListPrivateProvidersQuery, id string) url.Values {
	v := url.Values{}
	if id != "" {
		v.Set("provider_id", id)
	}
	for _, k := range q.SortKey {
		v.Add("sort_key", k)
	}
	for _, d := range q.SortDir {
		v.Add("sort_dir", d)
	}
	if q.Marker != "" {
		v.Set("marker", q.Marker)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// rfs is do for the registry: a Client-Request-Id on every request, and RFS error bodies.
func (c *Client) rfs(ctx context.Context, method, path string, q url.Values, body, out any) error {
	h := http.Header{}
	h.Set(api.ClientRequestIDHeader, requestID())
	return c.send(ctx, method, path, q, body, out, h, func(status int, data []byte) error {
		var e api.RFSError
		if err := json.Unmarshal(data, &e); err == nil && e.ErrorCode != "" {
			e.Status = status
			return &e
		}
		return decodeError(status, data)
	})
}

// requestID is a random (version 4) UUID, a valid Client-Request-Id.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
