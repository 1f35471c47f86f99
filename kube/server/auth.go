package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Identity is who a token stands for.
type Identity struct {
	Tenant string
	Admin  bool // the server's admin: every namespace, and the cluster-scoped CRDs
	Viewer bool // a viewer of its tenant: reads only
}

// TokenReviewer resolves a bearer token to an identity; ok is false for an unknown token.
type TokenReviewer interface {
	Review(ctx context.Context, token string) (id Identity, ok bool, err error)
}

// CairnTokens reviews tokens by asking the cairn server that issued them (GET /v1/whoami), so
// that tokens, tenants and their changes have one home. Answers are kept for TTL.
type CairnTokens struct {
	URL    string // the cairn API, e.g. http://127.0.0.1:8080
	Client *http.Client
	TTL    time.Duration

	mu    sync.Mutex
	cache map[[32]byte]cachedIdentity
}

type cachedIdentity struct {
	id      Identity
	ok      bool
	expires time.Time
}

// Review implements TokenReviewer.
func (c *CairnTokens) Review(ctx context.Context, token string) (Identity, bool, error) {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	c.mu.Lock()
	if e, hit := c.cache[key]; hit && now.Before(e.expires) {
		c.mu.Unlock()
		return e.id, e.ok, nil
	}
	c.mu.Unlock()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.URL, "/")+"/v1/whoami", nil)
	if err != nil {
		return Identity{}, false, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Identity{}, false, fmt.Errorf("cannot reach cairn to check a token: %w", err)
	}
	defer resp.Body.Close()
	var id Identity
	switch resp.StatusCode {
	case http.StatusOK:
		var body struct {
			Tenant string `json:"tenant"`
			Admin  bool   `json:"admin"`
			Role   string `json:"role"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Tenant == "" {
			return Identity{}, false, fmt.Errorf("cairn answered /v1/whoami with no tenant")
		}
		id = Identity{Tenant: body.Tenant, Admin: body.Admin, Viewer: body.Role == "viewer"}
	case http.StatusUnauthorized:
	default:
		return Identity{}, false, fmt.Errorf("cairn answered /v1/whoami with HTTP %d", resp.StatusCode)
	}
	ok := resp.StatusCode == http.StatusOK
	ttl := c.TTL
	if ttl == 0 {
		ttl = 10 * time.Second
	}
	c.mu.Lock()
	if c.cache == nil || len(c.cache) > 10000 {
		c.cache = map[[32]byte]cachedIdentity{}
	}
	c.cache[key] = cachedIdentity{id: id, ok: ok, expires: now.Add(ttl)}
	c.mu.Unlock()
	return id, ok, nil
}

// Names of users and groups in the kube API.
const (
	tenantUserPrefix = "cairn:tenant:"
	groupTenants     = "cairn:tenants"
	groupViewers     = "cairn:viewers"
)

type tokenAuthenticator struct{ reviewer TokenReviewer }

func (a *tokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	id, ok, err := a.reviewer.Review(ctx, token)
	if err != nil || !ok {
		return nil, false, err
	}
	groups := []string{user.AllAuthenticated, groupTenants}
	if id.Admin {
		groups = append(groups, user.SystemPrivilegedGroup)
	}
	if id.Viewer {
		groups = append(groups, groupViewers)
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: tenantUserPrefix + id.Tenant, Groups: groups}}, true, nil
}

// tenantAuthorizer keeps each tenant to the namespaces it owns. The admin (the server's own
// token, and the apiserver's loopback client) may do anything. A tenant may read discovery,
// OpenAPI and the CRDs (type definitions, not data), and read and write objects in namespaces
// it owns; the first use of an unowned namespace makes it the user's. Everything
// cluster-wide (CRD changes, lists across namespaces) is the admin's.
type tenantAuthorizer struct{ claims *Claims }

func (z *tenantAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionDeny, "no user", nil
	}
	tenant, isTenant := strings.CutPrefix(u.GetName(), tenantUserPrefix)
	impersonating := strings.HasPrefix(a.GetVerb(), "impersonate")
	if slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
		// The admin's checks of an impersonation (impersonate-on:...) name the namespace the
		// impersonated user will act in: they are not the admin's use of it.
		if isTenant && a.IsResourceRequest() && a.GetNamespace() != "" && !impersonating {
			// The admin's use claims an unowned namespace for its tenant too, so that no other
			// tenant can later take it over and read what the admin put there.
			if _, err := z.claims.Claim(ctx, a.GetNamespace(), tenant); err != nil {
				return authorizer.DecisionDeny, "", err
			}
		}
		return authorizer.DecisionAllow, "", nil
	}
	if !isTenant {
		return authorizer.DecisionDeny, "unknown user", nil
	}
	if impersonating {
		return authorizer.DecisionDeny, "only the admin may act as another user", nil
	}
	if slices.Contains(u.GetGroups(), groupViewers) && !a.IsReadOnly() {
		return authorizer.DecisionDeny, fmt.Sprintf("a viewer of tenant %q may only read", tenant), nil
	}
	if !a.IsResourceRequest() {
		if publicPath(a.GetPath()) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, "tenants may read discovery, OpenAPI, /version and health only", nil
	}
	if a.GetNamespace() == "" {
		if a.GetAPIGroup() == "apiextensions.k8s.io" && a.GetResource() == "customresourcedefinitions" && a.IsReadOnly() {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionDeny, fmt.Sprintf("tenant %q may not %s %s across namespaces or of cluster scope; "+
			"name a namespace it owns, or use the server's admin token", tenant, a.GetVerb(), a.GetResource()), nil
	}
	if errs := validation.IsDNS1123Label(a.GetNamespace()); len(errs) > 0 {
		return authorizer.DecisionDeny, fmt.Sprintf("invalid namespace name %q: %s", a.GetNamespace(), strings.Join(errs, "; ")), nil
	}
	// Reads claim too: a watch authorized on an unowned namespace would otherwise go on
	// delivering what another tenant writes there once it claims it.
	owner, err := z.claims.Claim(ctx, a.GetNamespace(), tenant)
	if err != nil {
		return authorizer.DecisionDeny, "", err
	}
	if owner != tenant {
		return authorizer.DecisionDeny, fmt.Sprintf("namespace %q is not tenant %q's", a.GetNamespace(), tenant), nil
	}
	return authorizer.DecisionAllow, "", nil
}

func (z *tenantAuthorizer) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(z.Authorize(ctx, a))
}

func (z *tenantAuthorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// publicPath reports the non-resource paths every tenant may read: discovery, OpenAPI, the
// version and health (not /metrics, which counts every tenant's objects).
func publicPath(p string) bool {
	switch p {
	case "/api", "/apis", "/version", "/healthz", "/readyz", "/livez", "/openapi/v2", "/openapi/v3":
		return true
	}
	for _, prefix := range []string{"/api/", "/apis/", "/openapi/", "/healthz/", "/readyz/", "/livez/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}
