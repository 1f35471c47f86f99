package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// maxRegistryBody bounds the bodies of /v1/private-providers (descriptions are at most 1024
// characters, URNs 256).
const maxRegistryBody = 64 << 10

// rfsHandler serves one registry route for the caller's tenant.
type rfsHandler func(w http.ResponseWriter, r *http.Request, tenant string) error

// registryRoutes registers the nine RFS private-provider operations under
// /v1/private-providers. Unlike the rest of the API, every answer here, errors included, is in
// RFS's format (api.RFSError), so that RFS clients work unchanged: a wrong method is a 405, an
// unknown path below the prefix a 404, both with an RFS body.
func (s *Server) registryRoutes(mux *http.ServeMux) {
	const (
		base    = "/v1/private-providers"
		one     = base + "/{provider_name}"
		meta    = one + "/metadata"
		vers    = one + "/versions"
		ver     = vers + "/{provider_version}"
		verMeta = ver + "/metadata"
	)
	allowed := map[string][]string{}
	handle := func(method, path string, h rfsHandler) {
		mux.Handle(method+" "+path, s.rfs(h))
		allowed[path] = append(allowed[path], method)
	}
	handle("POST", base, s.createPrivateProvider)
	handle("GET", base, s.listPrivateProviders)
	handle("POST", vers, s.createPrivateProviderVersion)
	handle("GET", vers, s.listPrivateProviderVersions)
	handle("DELETE", one, s.deletePrivateProvider)
	handle("GET", meta, s.showPrivateProvider)
	handle("PATCH", meta, s.updatePrivateProvider)
	handle("DELETE", ver, s.deletePrivateProviderVersion)
	handle("GET", verMeta, s.showPrivateProviderVersion)
	for path, methods := range allowed {
		if slices.Contains(methods, "GET") {
			methods = append(methods, "HEAD")
		}
		sort.Strings(methods)
		allow := strings.Join(methods, ", ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.rfsFail(w, r, &registry.Error{Status: http.StatusMethodNotAllowed, Code: registry.CodeMethodNotAllowed,
				Msg: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow)})
		})
	}
	mux.HandleFunc(base+"/", func(w http.ResponseWriter, r *http.Request) {
		s.rfsFail(w, r, &registry.Error{Status: http.StatusNotFound, Code: registry.CodeRouteNotFound,
			Msg: fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)})
	})
}

// rfs wraps a registry handler: auth (401), the Client-Request-Id header (400), the registry
// being configured (404), and RFS error bodies for whatever h returns.
func (s *Server) rfs(h rfsHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.callerOf(r)
		if errors.Is(err, errUnauthorized) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			s.rfsFail(w, r, &registry.Error{Status: http.StatusUnauthorized, Code: registry.CodeUnauthorized,
				Msg: "missing or unknown token (send Authorization: Bearer TOKEN or X-Auth-Token: TOKEN)"})
			return
		}
		if err != nil {
			s.rfsFail(w, r, err)
			return
		}
		r = r.WithContext(tenant.WithCaller(r.Context(), c))
		defer s.audit(w, r, c, "")
		if need := needFor(r.Method); !tenant.Covers(c.Role, need) {
			s.rfsFail(w, r, &registry.Error{Status: http.StatusForbidden, Code: registry.CodeForbidden,
				Msg: "a " + c.Role + " may not do this: it needs the role " + need})
			return
		}
		name := c.Tenant
		if err := registry.CheckRequestID(r.Header.Get(api.ClientRequestIDHeader)); err != nil {
			s.rfsFail(w, r, err)
			return
		}
		if s.reg == nil {
			s.rfsFail(w, r, &registry.Error{Status: http.StatusNotFound, Code: registry.CodeRouteNotFound,
				Msg: "this server has no private-provider registry"})
			return
		}
		if err := h(w, r, name); err != nil {
			s.rfsFail(w, r, err)
		}
	})
}

// rfsFail answers err as an RFS error body; anything but a *registry.Error or a too-large
// body is a 500 whose detail stays in the log.
func (s *Server) rfsFail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		re  *registry.Error
		big *http.MaxBytesError
	)
	body := api.RFSError{Details: []api.RFSErrorDetail{}}
	status := http.StatusInternalServerError
	switch {
	case errors.As(err, &re):
		status, body.ErrorCode, body.ErrorMsg = re.Status, re.Code, re.Msg
	case errors.As(err, &big):
		status, body.ErrorCode = http.StatusRequestEntityTooLarge, registry.CodeBodyTooLarge
		body.ErrorMsg = "request body is larger than the limit of " + humanBytes(big.Limit)
	default:
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", routeOf(r), "err", err)
		body.ErrorCode, body.ErrorMsg = registry.CodeInternal, "internal error; the server log has the detail"
	}
	writeJSON(w, status, body)
}

// decodeRFS reads one JSON object into v. An empty body leaves v as it is (the operation then
// says what is missing); unknown fields are RF.10011002, anything else malformed RF.10011006.
func decodeRFS(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistryBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, err = dec.Token(); errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			return registry.Malformed("unexpected data after the JSON object")
		}
	}
	var big *http.MaxBytesError
	switch {
	case errors.As(err, &big):
		return err
	case errors.Is(err, io.EOF):
		return nil
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return registry.Unknown(strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return registry.Malformed(err.Error())
	}
}

// idQuery parses the query of the routes that take only provider_id.
func idQuery(r *http.Request) (string, error) {
	q, err := registry.ParseQuery(r.URL.Query(), false, true)
	return q.ProviderID, err
}

func (s *Server) createPrivateProvider(w http.ResponseWriter, r *http.Request, tenant string) error {
	if _, err := registry.ParseQuery(r.URL.Query(), false, false); err != nil {
		return err
	}
	var req api.CreatePrivateProviderRequest
	if err := decodeRFS(w, r, &req); err != nil {
		return err
	}
	resp, err := s.reg.CreateProvider(r.Context(), tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, resp)
	return nil
}

func (s *Server) listPrivateProviders(w http.ResponseWriter, r *http.Request, tenant string) error {
	q, err := registry.ParseQuery(r.URL.Query(), true, false)
	if err != nil {
		return err
	}
	resp, err := s.reg.ListProviders(r.Context(), tenant, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) showPrivateProvider(w http.ResponseWriter, r *http.Request, tenant string) error {
	id, err := idQuery(r)
	if err != nil {
		return err
	}
	resp, err := s.reg.ShowProvider(r.Context(), tenant, r.PathValue("provider_name"), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) updatePrivateProvider(w http.ResponseWriter, r *http.Request, tenant string) error {
	if _, err := registry.ParseQuery(r.URL.Query(), false, false); err != nil {
		return err
	}
	var req api.UpdatePrivateProviderRequest
	if err := decodeRFS(w, r, &req); err != nil {
		return err
	}
	if err := s.reg.UpdateProvider(r.Context(), tenant, r.PathValue("provider_name"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deletePrivateProvider(w http.ResponseWriter, r *http.Request, tenant string) error {
	id, err := idQuery(r)
	if err != nil {
		return err
	}
	if err := s.reg.DeleteProvider(r.Context(), tenant, r.PathValue("provider_name"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createPrivateProviderVersion(w http.ResponseWriter, r *http.Request, tenant string) error {
	if _, err := registry.ParseQuery(r.URL.Query(), false, false); err != nil {
		return err
	}
	var req api.CreatePrivateProviderVersionRequest
	if err := decodeRFS(w, r, &req); err != nil {
		return err
	}
	if err := s.reg.CreateVersion(r.Context(), tenant, r.PathValue("provider_name"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Server) listPrivateProviderVersions(w http.ResponseWriter, r *http.Request, tenant string) error {
	q, err := registry.ParseQuery(r.URL.Query(), true, true)
	if err != nil {
		return err
	}
	resp, err := s.reg.ListVersions(r.Context(), tenant, r.PathValue("provider_name"), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) showPrivateProviderVersion(w http.ResponseWriter, r *http.Request, tenant string) error {
	id, err := idQuery(r)
	if err != nil {
		return err
	}
	resp, err := s.reg.ShowVersion(r.Context(), tenant, r.PathValue("provider_name"), r.PathValue("provider_version"), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) deletePrivateProviderVersion(w http.ResponseWriter, r *http.Request, tenant string) error {
	id, err := idQuery(r)
	if err != nil {
		return err
	}
	if err := s.reg.DeleteVersion(r.Context(), tenant, r.PathValue("provider_name"), r.PathValue("provider_version"), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
