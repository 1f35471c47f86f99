package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/auth"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// needFor is the role a route asks by default: reading is a viewer's, changing a deployer's.
func needFor(method string) string {
	if method == http.MethodGet || method == http.MethodHead {
		return tenant.Viewer
	}
	return tenant.Deployer
}

// authed requires a caller whose role covers need (on the stack the route names, when it
// names one), passes the caller in the request's context (tenant.CallerFrom) and writes every
// change, or refusal, to the audit log.
func (s *Server) authed(need string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.callerOf(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		note := new(string)
		r = r.WithContext(context.WithValue(tenant.WithCaller(r.Context(), c), auditNoteKey{}, note))
		defer func() {
			if p := recover(); p != nil {
				s.auditStatus(r, c, http.StatusInternalServerError, *note)
				panic(p) // observe answers it
			}
			s.audit(w, r, c, *note)
		}()
		if !allowed(c, need, r) {
			s.fail(w, r, forbidden(c, need, r))
			return
		}
		h(w, r)
	})
}

// callerOf authenticates the token r carries ("Authorization: Bearer T", or "X-Auth-Token: T"
// as Huawei Cloud clients send it).
func (s *Server) callerOf(r *http.Request) (tenant.Caller, error) {
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		got = r.Header.Get("X-Auth-Token")
	}
	c, err := s.auth.Authenticate(r.Context(), got)
	if errors.Is(err, auth.ErrUnauthorized) {
		return c, errUnauthorized
	}
	return c, err
}

// bearerToken returns the token of an "Authorization: Bearer T" header. The scheme is
// case-insensitive (RFC 7235 section 2.1), so "bearer T" and "BEARER T" are accepted.
func bearerToken(h string) (string, bool) {
	f := strings.Fields(h)
	if len(f) != 2 || !strings.EqualFold(f[0], "Bearer") {
		return "", false
	}
	return f[1], true
}

// allowed reports whether c may do what need allows on r's stack (its role there) or, for
// routes naming none, in its tenant.
func allowed(c tenant.Caller, need string, r *http.Request) bool {
	if name := stackOf(r); name != "" {
		return tenant.Covers(c.RoleOn(name), need)
	}
	return tenant.Covers(c.Role, need)
}

// can reports whether the caller ctx carries may do what need allows on stack name.
func can(ctx context.Context, need, name string) bool {
	return tenant.Covers(tenant.CallerFrom(ctx).RoleOn(name), need)
}

func stackOf(r *http.Request) string {
	if strings.Contains(r.Pattern, " /v1/stacks/{name}") {
		return r.PathValue("name")
	}
	return ""
}

func forbidden(c tenant.Caller, need string, r *http.Request) error {
	msg := "a " + c.Role + " may not do this: it needs the role " + need
	if name := stackOf(r); name != "" {
		msg = "a " + c.RoleOn(name) + " of stack " + name + " may not do this: it needs the role " + need
	}
	return &requestError{status: http.StatusForbidden, code: api.CodeForbidden, msg: msg}
}

type auditNoteKey struct{}

// noteAudit adds to the target the audit log records for r: what a handler changed that the
// path does not name (the token made, the grant given, the tenant acted on).
func noteAudit(r *http.Request, note string) {
	if p, ok := r.Context().Value(auditNoteKey{}).(*string); ok {
		*p = clip(note)
	}
}

// audit records a change (any method but GET and HEAD) once answered: who, what, on what,
// from where, and how it ended. A failure to record is logged; the answer stands.
func (s *Server) audit(w http.ResponseWriter, r *http.Request, c tenant.Caller, note string) {
	status := http.StatusOK
	if rec, ok := w.(*recorder); ok && rec.status != 0 {
		status = rec.status
	}
	s.auditStatus(r, c, status, note)
}

func (s *Server) auditStatus(r *http.Request, c tenant.Caller, status int, note string) {
	if s.accounts == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return
	}
	target := targetOf(r)
	if note != "" {
		target = clip(strings.TrimSpace(target + " " + note))
	}
	e := state.AuditEntry{At: time.Now().UTC(), Tenant: c.Tenant, Subject: c.Subject, Role: c.Role,
		Action: r.Method + " " + routePath(r), Target: target, Remote: remoteOf(r), Status: status}
	if _, err := s.accounts.AppendAudit(context.WithoutCancel(r.Context()), e); err != nil {
		s.log.ErrorContext(r.Context(), "cannot write the audit log", "action", e.Action, "err", err)
	}
}

// routePath is the route's path pattern without its method.
func routePath(r *http.Request) string {
	p := routeOf(r)
	if i := strings.IndexByte(p, ' '); i >= 0 {
		return p[i+1:]
	}
	return p
}

// targetOf names what a request acts on: the stack, function, token or provider of its path.
func targetOf(r *http.Request) string {
	for _, k := range []string{"name", "id", "provider_name"} {
		if v := r.PathValue(k); v != "" {
			return clip(v)
		}
	}
	return ""
}

// remoteOf is the client's address, with the X-Forwarded-For a load balancer adds.
func remoteOf(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		return clip(r.RemoteAddr + " (X-Forwarded-For: " + xff + ")")
	}
	return r.RemoteAddr
}

func clip(s string) string {
	if len(s) > 256 {
		return s[:256]
	}
	return s
}
