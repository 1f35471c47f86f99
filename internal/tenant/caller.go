package tenant

import (
	"context"
	"path"
)

// Roles, weakest first: a viewer reads (never secrets), a deployer also changes stacks,
// functions and registry entries of its tenant and reads secrets, an admin also manages its
// tenant's tokens and grants and reads its audit log. The admin of tenant Default is the
// server's admin: it acts for every tenant where an API allows it.
const (
	Viewer   = "viewer"
	Deployer = "deployer"
	Admin    = "admin"
)

// Roles lists the roles, weakest first.
var Roles = []string{Viewer, Deployer, Admin}

// rank orders roles; 0 is no role.
func rank(role string) int {
	switch role {
	case Viewer:
		return 1
	case Deployer:
		return 2
	case Admin:
		return 3
	}
	return 0
}

// ValidRole reports whether role names a role.
func ValidRole(role string) bool { return rank(role) > 0 }

// Covers reports whether role may do what need allows.
func Covers(role, need string) bool { return rank(role) >= rank(need) && rank(need) > 0 }

// Grant raises a caller's role on the stacks whose names match Stack (a path.Match pattern).
type Grant struct {
	Stack string
	Role  string
}

// Caller is who is calling: the tenant its credential stands for, what names it in the audit
// log, its role in the tenant and the grants that raise it on some stacks.
type Caller struct {
	Tenant  string
	Subject string // "server" (the server's own token), a token's ID, "oidc:SUBJECT", "tenants-file"
	Role    string
	Grants  []Grant
}

// RoleOn is the caller's role on the stack called name: its role, or a grant's if stronger.
func (c Caller) RoleOn(name string) string {
	role := c.Role
	for _, g := range c.Grants {
		if ok, _ := path.Match(g.Stack, name); ok && rank(g.Role) > rank(role) {
			role = g.Role
		}
	}
	return role
}

// ServerAdmin reports whether the caller is the server's admin.
func (c Caller) ServerAdmin() bool { return c.Tenant == Default && c.Role == Admin }

type callerKey struct{}

// WithCaller returns ctx carrying c, and c's tenant (From).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return With(context.WithValue(ctx, callerKey{}, c), c.Tenant)
}

// CallerFrom returns the caller ctx carries. Without one it is the admin of the tenant ctx
// carries: code that runs on the server's own behalf.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{Tenant: From(ctx), Subject: "server", Role: Admin}
}

type runCodeKey struct{}

// WithRunCode returns ctx saying whether the request it serves may run code on the server
// (provisioners, functions with code): an operation carries the answer given to the request
// that started it, whoever resumes it.
func WithRunCode(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, runCodeKey{}, ok)
}

// RunCodeFrom returns what WithRunCode put in ctx; known is false when nothing was.
func RunCodeFrom(ctx context.Context) (ok, known bool) {
	ok, known = ctx.Value(runCodeKey{}).(bool)
	return ok, known
}
