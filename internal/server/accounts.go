package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// accountRoutes registers the tokens, grants and audit log: an admin's, of its own tenant
// (the server's admin: of any tenant).
func (s *Server) accountRoutes(as func(role, method, path string, h http.HandlerFunc)) {
	admin := func(method, path string, h http.HandlerFunc) { as(tenant.Admin, method, path, s.withAccounts(h)) }
	admin("POST", "/v1/tokens", s.createToken)
	admin("GET", "/v1/tokens", s.listTokens)
	admin("DELETE", "/v1/tokens/{id}", s.revokeToken)
	admin("POST", "/v1/grants", s.putGrant)
	admin("GET", "/v1/grants", s.listGrants)
	admin("DELETE", "/v1/grants", s.deleteGrant)
	admin("GET", "/v1/audit", s.listAudit)
}

// withAccounts answers 404 for h's route on a server that keeps no accounts.
func (s *Server) withAccounts(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.accounts == nil {
			s.fail(w, r, errNoAccounts)
			return
		}
		h(w, r)
	}
}

var errNoAccounts = &requestError{status: http.StatusNotFound, code: api.CodeNotFound,
	msg: "this server keeps no accounts"}

// tenantFor is the tenant an admin's request acts on: the one it names, or the caller's own.
// Only the server's admin may name another; for it, all says "" means every tenant.
func tenantFor(c tenant.Caller, named string, all bool) (string, error) {
	switch {
	case named == "" && all && c.ServerAdmin():
		return "", nil
	case named == "":
		return c.Tenant, nil
	case !tenant.ValidName(named):
		return "", &requestError{msg: fmt.Sprintf("invalid tenant name %q", named)}
	case named != c.Tenant && !c.ServerAdmin():
		return "", &requestError{status: http.StatusForbidden, code: api.CodeForbidden,
			msg: "only the server's admin may act on another tenant's accounts"}
	}
	return named, nil
}

// queryOf returns r's query, refusing any parameter not named.
func queryOf(r *http.Request, names ...string) (url.Values, error) {
	q := r.URL.Query()
	for k := range q {
		if !slices.Contains(names, k) {
			return nil, &requestError{msg: fmt.Sprintf("unknown query parameter %q", k)}
		}
	}
	return q, nil
}

func checkGrant(g api.Grant) error {
	if !tenant.ValidRole(g.Role) {
		return &requestError{msg: fmt.Sprintf("invalid role %q: want viewer, deployer or admin", g.Role)}
	}
	if _, err := path.Match(g.Stack, ""); err != nil || g.Stack == "" || len(g.Stack) > 128 {
		return &requestError{msg: fmt.Sprintf("invalid stack pattern %q: want a stack name or a glob such as web-*", g.Stack)}
	}
	if len(g.Subject) > 256 {
		return &requestError{msg: "subject is longer than 256 characters"}
	}
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	var req api.TokenCreateRequest
	if err := decode(w, r, &req, false); err != nil {
		s.fail(w, r, err)
		return
	}
	c := tenant.CallerFrom(r.Context())
	name, err := tenantFor(c, req.Tenant, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !tenant.ValidRole(req.Role) {
		s.fail(w, r, &requestError{msg: fmt.Sprintf("invalid role %q: want viewer, deployer or admin", req.Role)})
		return
	}
	if len(req.Name) > 200 {
		s.fail(w, r, &requestError{msg: "name is longer than 200 characters"})
		return
	}
	now := time.Now()
	var expires time.Time
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			s.fail(w, r, &requestError{msg: fmt.Sprintf("invalid expiresIn %q: want a positive duration such as 720h", req.ExpiresIn)})
			return
		}
		expires = now.Add(d)
	}
	for _, g := range req.Grants {
		if err := checkGrant(g); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	m, err := auth.Mint(r.Context(), s.accounts, name, req.Role, req.Name, c.Subject, now, expires)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := apiToken(m.Token)
	out.Secret = m.Secret
	note := fmt.Sprintf("%s (tenant %s, role %s", m.Token.ID, name, req.Role)
	for _, g := range req.Grants {
		note += fmt.Sprintf(", %s on %s", g.Role, g.Stack)
	}
	noteAudit(r, note+")")
	for _, g := range req.Grants {
		sg := state.Grant{Tenant: name, Subject: m.Token.ID, Stack: g.Stack, Role: g.Role, CreatedAt: now.UTC()}
		if err := s.accounts.PutGrant(r.Context(), sg); err != nil {
			s.fail(w, r, err)
			return
		}
		out.Grants = append(out.Grants, api.Grant{Tenant: name, Subject: sg.Subject, Stack: g.Stack, Role: g.Role})
	}
	writeJSON(w, http.StatusCreated, out)
}

func apiToken(t state.Token) api.Token {
	return api.Token{ID: t.ID, Tenant: t.Tenant, Role: t.Role, Name: t.Name, CreatedBy: t.CreatedBy,
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt}
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	q, err := queryOf(r, "tenant")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name, err := tenantFor(tenant.CallerFrom(r.Context()), q.Get("tenant"), true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ts, err := s.accounts.ListTokens(r.Context(), name)
	out := make([]api.Token, 0, len(ts))
	for _, t := range ts {
		out = append(out, apiToken(t))
	}
	s.reply(w, r, http.StatusOK, out, err)
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	name, _ := tenantFor(tenant.CallerFrom(r.Context()), "", true)
	err := s.accounts.RevokeToken(r.Context(), name, r.PathValue("id"), time.Now())
	if errors.Is(err, state.ErrNotFound) {
		err = &requestError{status: http.StatusNotFound, code: api.CodeNotFound, msg: fmt.Sprintf("no token %s", r.PathValue("id"))}
	}
	s.reply(w, r, http.StatusOK, map[string]string{"id": r.PathValue("id"), "status": "revoked"}, err)
}

func (s *Server) putGrant(w http.ResponseWriter, r *http.Request) {
	var g api.Grant
	if err := decode(w, r, &g, false); err != nil {
		s.fail(w, r, err)
		return
	}
	name, err := tenantFor(tenant.CallerFrom(r.Context()), g.Tenant, false)
	if err == nil {
		err = checkGrant(g)
	}
	if err == nil && g.Subject == "" {
		err = &requestError{msg: "name the subject: a token's ID or oidc:SUBJECT"}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	g.Tenant = name
	noteAudit(r, fmt.Sprintf("%s: %s on %s (tenant %s)", g.Subject, g.Role, g.Stack, name))
	err = s.accounts.PutGrant(r.Context(), state.Grant{Tenant: name, Subject: g.Subject, Stack: g.Stack, Role: g.Role, CreatedAt: time.Now().UTC()})
	s.reply(w, r, http.StatusOK, g, err)
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) {
	q, err := queryOf(r, "tenant", "subject")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name, err := tenantFor(tenant.CallerFrom(r.Context()), q.Get("tenant"), false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	gs, err := s.accounts.Grants(r.Context(), name, q.Get("subject"))
	out := make([]api.Grant, 0, len(gs))
	for _, g := range gs {
		out = append(out, api.Grant{Tenant: g.Tenant, Subject: g.Subject, Stack: g.Stack, Role: g.Role})
	}
	s.reply(w, r, http.StatusOK, out, err)
}

func (s *Server) deleteGrant(w http.ResponseWriter, r *http.Request) {
	q, err := queryOf(r, "tenant", "subject", "stack")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name, err := tenantFor(tenant.CallerFrom(r.Context()), q.Get("tenant"), false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	noteAudit(r, fmt.Sprintf("%s on %s (tenant %s)", q.Get("subject"), q.Get("stack"), name))
	err = s.accounts.DeleteGrant(r.Context(), name, q.Get("subject"), q.Get("stack"))
	if errors.Is(err, state.ErrNotFound) {
		err = &requestError{status: http.StatusNotFound, code: api.CodeNotFound, msg: "no such grant"}
	}
	s.reply(w, r, http.StatusOK, map[string]string{"status": "deleted"}, err)
}

// maxAudit bounds one page of the audit log.
const maxAudit = 1000

func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) {
	q, err := queryOf(r, "tenant", "after", "limit")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := state.AuditFilter{Limit: maxAudit}
	if f.Tenant, err = tenantFor(tenant.CallerFrom(r.Context()), q.Get("tenant"), true); err != nil {
		s.fail(w, r, err)
		return
	}
	for k, dst := range map[string]*int64{"after": &f.After} {
		if v := q.Get(k); v != "" {
			if *dst, err = strconv.ParseInt(v, 10, 64); err != nil || *dst < 0 {
				s.fail(w, r, &requestError{msg: fmt.Sprintf("invalid %s %q: want a number", k, v)})
				return
			}
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAudit {
			s.fail(w, r, &requestError{msg: fmt.Sprintf("invalid limit %q: want 1..%d", v, maxAudit)})
			return
		}
		f.Limit = n
	}
	es, err := s.accounts.ListAudit(r.Context(), f)
	out := make([]api.AuditEntry, 0, len(es))
	for _, e := range es {
		out = append(out, api.AuditEntry(e))
	}
	s.reply(w, r, http.StatusOK, out, err)
}
