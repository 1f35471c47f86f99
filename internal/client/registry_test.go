package client

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/server"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// TestPrivateProviders runs every registry method against a real server and registry.
func TestPrivateProviders(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := struct{ server.Engine }{} // the registry routes never reach the engine
	srv := httptest.NewServer(server.New(server.Config{Engine: eng, Token: "tok",
		Registry: registry.New(registry.Options{Store: st})}).Handler())
	defer srv.Close()
	c := New(srv.URL, "tok", nil)
	const urn = "urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-fn:latest"

	created, err := c.CreatePrivateProvider(ctx, api.CreatePrivateProviderRequest{ProviderName: "acme", ProviderDescription: "d",
		ProviderVersion: "1.0.0", FunctionGraphURN: urn})
	if err != nil || created.ProviderSource != "huawei.com/private-provider/acme" {
		t.Fatalf("CreatePrivateProvider = %+v, %v", created, err)
	}
	_, err = c.CreatePrivateProvider(ctx, api.CreatePrivateProviderRequest{ProviderName: "acme"})
	var re *api.RFSError
	if !errors.As(err, &re) || re.Status != 409 || re.ErrorCode != registry.CodeProviderExists {
		t.Errorf("CreatePrivateProvider twice: %v, want an RFSError 409 %s", err, registry.CodeProviderExists)
	}
	desc := "new"
	if err := c.UpdatePrivateProvider(ctx, "acme", api.UpdatePrivateProviderRequest{ProviderDescription: &desc, ProviderID: created.ProviderID}); err != nil {
		t.Fatalf("UpdatePrivateProvider: %v", err)
	}
	p, err := c.PrivateProvider(ctx, "acme", created.ProviderID)
	if err != nil || p.ProviderDescription != "new" || p.ProviderID != created.ProviderID {
		t.Errorf("PrivateProvider = %+v, %v", p, err)
	}
	if err := c.CreatePrivateProviderVersion(ctx, "acme", api.CreatePrivateProviderVersionRequest{ProviderVersion: "1.1.0+b1", FunctionGraphURN: urn}); err != nil {
		t.Fatalf("CreatePrivateProviderVersion: %v", err)
	}
	v, err := c.PrivateProviderVersion(ctx, "acme", "1.1.0+b1", "")
	if err != nil || v.ProviderVersion != "1.1.0+b1" || v.ProviderSource != created.ProviderSource {
		t.Errorf("PrivateProviderVersion = %+v, %v", v, err)
	}
	vs, err := c.AllPrivateProviderVersions(ctx, "acme")
	var names []string
	for _, v := range vs {
		names = append(names, v.ProviderVersion)
	}
	if diff := cmp.Diff([]string{"1.1.0+b1", "1.0.0"}, names); err != nil || diff != "" {
		t.Errorf("AllPrivateProviderVersions: %v, -want +got\n%s", err, diff)
	}
	if err := c.DeletePrivateProviderVersion(ctx, "acme", "1.1.0+b1", created.ProviderID); err != nil {
		t.Errorf("DeletePrivateProviderVersion: %v", err)
	}
	for i := range 11 {
		if _, err := c.CreatePrivateProvider(ctx, api.CreatePrivateProviderRequest{ProviderName: fmt.Sprint("p", i)}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := c.PrivateProviders(ctx, api.ListPrivateProvidersQuery{Limit: 10, SortKey: []string{"create_time"}, SortDir: []string{"asc"}})
	if err != nil || len(page.Providers) != 10 || page.Providers[0].ProviderName != "acme" || page.PageInfo.NextMarker == nil {
		t.Fatalf("PrivateProviders(limit 10) = %+v, %v", page, err)
	}
	all, err := c.AllPrivateProviders(ctx)
	if err != nil || len(all) != 12 || all[0].ProviderName != "p10" {
		t.Errorf("AllPrivateProviders = %d providers (first %+v), %v", len(all), all, err)
	}
	if err := c.DeletePrivateProvider(ctx, "acme", ""); err != nil {
		t.Errorf("DeletePrivateProvider: %v", err)
	}
	_, err = c.PrivateProvider(ctx, "acme", "")
	if !errors.As(err, &re) || re.Status != 404 || re.ErrorCode != registry.CodeProviderNotFound {
		t.Errorf("PrivateProvider after delete: %v, want an RFSError 404", err)
	}
	if _, err := New(srv.URL, "wrong", nil).AllPrivateProviders(ctx); !errors.As(err, &re) || re.Status != 401 {
		t.Errorf("a wrong token: %v, want an RFSError 401", err)
	}
}
