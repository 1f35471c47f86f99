package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/state"
)

// Errors of Resolve and ExactVersion; the messages say which provider and version.
var (
	ErrUnknownProvider = errors.New("unknown private provider")
	ErrUnknownVersion  = errors.New("unknown private provider version")
	ErrNotExact        = errors.New("only exact versions are allowed for private providers")
)

// ParseSource reports whether source is a private provider's source address,
// huawei.com/private-provider/NAME, and returns NAME lowercased: RFS lets a template spell a
// provider's name with upper-case letters and registers it in lower case. The host and
// namespace are matched case-insensitively too, as Terraform does.
func ParseSource(source string) (name string, ok bool) {
	parts := strings.Split(strings.TrimSpace(source), "/")
	if len(parts) != 3 || !strings.EqualFold(parts[0], "huawei.com") || !strings.EqualFold(parts[1], "private-provider") {
		return "", false
	}
	return strings.ToLower(parts[2]), parts[2] != ""
}

// ExactVersion returns the version a private provider's version constraint pins: "1.0.0" or
// "= 1.0.0". Anything else (">= 1.0", "~> 1.0", "1.0.0, 1.1.0") is ErrNotExact.
func ExactVersion(constraint string) (string, error) {
	v := strings.TrimSpace(constraint)
	if rest, ok := strings.CutPrefix(v, "="); ok {
		v = strings.TrimSpace(rest)
	}
	if v == "" || strings.ContainsAny(v, "<>=~!^, *") {
		return "", fmt.Errorf("%w: version %q is not one exact version such as 1.0.0", ErrNotExact, constraint)
	}
	if err := CheckVersion(v); err != nil {
		return "", fmt.Errorf("%w: version %q: %s", ErrNotExact, constraint, err)
	}
	return v, nil
}

// Resolved is what a template's private provider at an exact version resolves to.
type Resolved struct {
	ProviderID  string
	Name        string // as registered (lower case)
	Source      string // huawei.com/private-provider/NAME
	Version     string
	FunctionURN string
}

// maxListed bounds the versions an ErrUnknownVersion message lists.
const maxListed = 10

// Resolve looks up tenant's private provider name (any case: it is lowercased) at version,
// which must be exact ("1.0.0" or "= 1.0.0"). It returns ErrUnknownProvider, ErrUnknownVersion
// (naming the versions there are) or ErrNotExact, wrapped with a message for the user.
func (s *Service) Resolve(ctx context.Context, tenant, name, version string) (Resolved, error) {
	exact, err := ExactVersion(version)
	if err != nil {
		return Resolved{}, fmt.Errorf("private provider %s: %w", name, err)
	}
	lower := strings.ToLower(name)
	if CheckName(lower) != nil {
		return Resolved{}, fmt.Errorf("%w %q: a name has lowercase letters, digits and '-' only", ErrUnknownProvider, name)
	}
	p, err := s.store.GetPrivateProvider(ctx, tenant, lower)
	if errors.Is(err, state.ErrNotFound) {
		return Resolved{}, fmt.Errorf("%w %s: register it with `cairn provider create %s`", ErrUnknownProvider, Source(lower), lower)
	}
	if err != nil {
		return Resolved{}, err
	}
	v, err := s.store.GetPrivateProviderVersion(ctx, tenant, p.ID, exact)
	if errors.Is(err, state.ErrNotFound) {
		return Resolved{}, fmt.Errorf("%w: private provider %s has no version %s%s", ErrUnknownVersion, lower, exact, s.known(ctx, tenant, p.ID))
	}
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{ProviderID: p.ID, Name: p.Name, Source: Source(p.Name), Version: v.Version, FunctionURN: v.FunctionURN}, nil
}

// known lists a provider's newest versions for an error message.
func (s *Service) known(ctx context.Context, tenant, providerID string) string {
	vs, err := s.store.ListPrivateProviderVersions(ctx, tenant, providerID, state.Page{Desc: true, Limit: maxListed + 1})
	if err != nil || len(vs) == 0 {
		return " (it has no versions)"
	}
	names := make([]string, 0, len(vs))
	for i, v := range vs {
		if i == maxListed {
			names = append(names, "...")
			break
		}
		names = append(names, v.Version)
	}
	return " (it has " + strings.Join(names, ", ") + ")"
}
