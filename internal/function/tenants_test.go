package function

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/tenant"
)

// TestTenantsAreABoundary: a tenant's functions are invisible to another tenant, which can
// create its own of the same name without touching them; a token resolves inside the caller's
// tenant only (the private-provider hijack of issue 11: B deleting A's function and creating
// one of the same name must not capture A's calls).
func TestTenantsAreABoundary(t *testing.T) {
	m := newManager(t)
	a, b := tenant.With(context.Background(), "team-a"), tenant.With(context.Background(), "team-b")
	if _, err := m.Create(a, Definition{Name: "provider", Kind: KindURL, URL: "https://a.example/provider"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(b, "provider"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get from another tenant: %v, want ErrNotFound", err)
	}
	if list, _ := m.List(b); len(list) != 0 {
		t.Errorf("List of another tenant shows %+v", list)
	}
	if err := m.Delete(b, "provider"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete from another tenant: %v, want ErrNotFound", err)
	}
	if _, err := m.Logs(b, "provider", "", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Logs from another tenant: %v, want ErrNotFound", err)
	}
	if _, err := m.Invoke(b, "provider", []byte(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Invoke from another tenant: %v, want ErrNotFound", err)
	}
	if _, err := m.Create(b, Definition{Name: "provider", Kind: KindURL, URL: "https://b.example/steal"}, nil); err != nil {
		t.Fatalf("another tenant cannot create a function of the same name: %v", err)
	}
	arn := "arn:aws:lambda:us-east-1:123456789012:function:provider"
	got, err := m.Resolve(a, arn)
	if err != nil || got.URL != "https://a.example/provider" {
		t.Errorf("team-a's token resolves to %+v, %v; want its own function", got, err)
	}
	got, err = m.Resolve(b, arn)
	if err != nil || got.URL != "https://b.example/steal" {
		t.Errorf("team-b's token resolves to %+v, %v; want its own function", got, err)
	}
	if _, err := m.Resolve(tenant.With(context.Background(), "team-c"), arn); err == nil {
		t.Errorf("a tenant without the function resolves another's")
	}
}

// TestRunCodeIsTheOperatorsOnly: on a server whose tenants may not run code, only the allowed
// tenant creates functions that run code; url functions stay open to all.
func TestRunCodeIsTheOperatorsOnly(t *testing.T) {
	m, err := New(Config{Store: &memStore{m: map[string]Definition{}}, Dir: t.TempDir(),
		RunCode: func(ctx context.Context) bool { return tenant.From(ctx) == tenant.Default }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := tenant.With(context.Background(), "team-b")
	_, err = m.Create(b, Definition{Name: "evil", Kind: KindProvided, Handler: "bootstrap"}, testBootstrap(t))
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "--allow-tenant-code") {
		t.Errorf("a tenant's provided function: %v, want an InvalidError naming --allow-tenant-code", err)
	}
	if _, err := m.Create(b, Definition{Name: "hook", Kind: KindURL, URL: "https://b.example/hook"}, nil); err != nil {
		t.Errorf("a tenant's url function: %v", err)
	}
	if _, err := m.Create(context.Background(), Definition{Name: "ops", Kind: KindProvided, Handler: "bootstrap"}, testBootstrap(t)); err != nil {
		t.Errorf("the operator's provided function: %v", err)
	}
}
