package registry

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

const testURN = "urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-fn:latest"

func newService(t *testing.T) *Service {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(Options{Store: st})
}

func TestParseSource(t *testing.T) {
	cases := map[string]struct {
		src, want string
		ok        bool
	}{
		"Lower":       {"huawei.com/private-provider/acme", "acme", true},
		"MixedName":   {"huawei.com/private-provider/AcmeWidgets", "acmewidgets", true},
		"MixedHost":   {"Huawei.com/Private-Provider/acme", "acme", true},
		"Public":      {"hashicorp/time", "", false},
		"OtherHost":   {"registry.terraform.io/private-provider/acme", "", false},
		"NoName":      {"huawei.com/private-provider/", "", false},
		"HuaweiCloud": {"huaweicloud/huaweicloud", "", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseSource(tc.src)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseSource(%q) = %q, %v; want %q, %v", tc.src, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestExactVersion(t *testing.T) {
	cases := map[string]struct {
		in, want string
		exact    bool
	}{
		"Bare":     {"1.0.0", "1.0.0", true},
		"Equals":   {"= 1.0.0", "1.0.0", true},
		"EqualsNS": {"=1.0.0", "1.0.0", true},
		"Spaces":   {" 1.0.0 ", "1.0.0", true},
		"GE":       {">= 1.0.0", "", false},
		"Pessim":   {"~> 1.0", "", false},
		"LT":       {"< 2.0.0", "", false},
		"NE":       {"!= 1.0.0", "", false},
		"Two":      {"1.0.0, 1.1.0", "", false},
		"Partial":  {"1.0", "", false},
		"Empty":    {"", "", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ExactVersion(tc.in)
			if tc.exact != (err == nil) || got != tc.want {
				t.Errorf("ExactVersion(%q) = %q, %v; want %q, exact %v", tc.in, got, err, tc.want, tc.exact)
			}
			if err != nil && !errors.Is(err, ErrNotExact) {
				t.Errorf("ExactVersion(%q): %v does not wrap ErrNotExact", tc.in, err)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	created, err := s.CreateProvider(ctx, "a", api.CreatePrivateProviderRequest{ProviderName: "acmewidgets",
		ProviderVersion: "1.0.0", FunctionGraphURN: testURN})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateVersion(ctx, "a", "acmewidgets", api.CreatePrivateProviderVersionRequest{ProviderVersion: "1.1.0",
		FunctionGraphURN: strings.Replace(testURN, ":latest", ":v2", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateProvider(ctx, "a", api.CreatePrivateProviderRequest{ProviderName: "empty"}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason, tenant, name, version string
		want                          Resolved
		err                           error
		msg                           string
	}{
		"Exact": {reason: "An exact version resolves to its function.", tenant: "a", name: "acmewidgets", version: "1.0.0",
			want: Resolved{ProviderID: created.ProviderID, Name: "acmewidgets", Source: "huawei.com/private-provider/acmewidgets",
				Version: "1.0.0", FunctionURN: testURN}},
		"Upper": {reason: "An upper-case name matches the registered lower-case one.", tenant: "a", name: "AcmeWidgets", version: "= 1.1.0",
			want: Resolved{ProviderID: created.ProviderID, Name: "acmewidgets", Source: "huawei.com/private-provider/acmewidgets",
				Version: "1.1.0", FunctionURN: strings.Replace(testURN, ":latest", ":v2", 1)}},
		"Range":       {reason: "Only exact versions.", tenant: "a", name: "acmewidgets", version: "~> 1.0", err: ErrNotExact, msg: "only exact versions"},
		"NoVersion":   {reason: "An unknown version lists those there are.", tenant: "a", name: "acmewidgets", version: "2.0.0", err: ErrUnknownVersion, msg: "(it has 1.1.0, 1.0.0)"},
		"NoVersions":  {reason: "A provider without versions says so.", tenant: "a", name: "empty", version: "1.0.0", err: ErrUnknownVersion, msg: "it has no versions"},
		"NoProvider":  {reason: "An unknown provider.", tenant: "a", name: "nope", version: "1.0.0", err: ErrUnknownProvider, msg: "huawei.com/private-provider/nope"},
		"OtherTenant": {reason: "Another tenant's provider is unknown.", tenant: "b", name: "acmewidgets", version: "1.0.0", err: ErrUnknownProvider},
		"InvalidName": {reason: "A name that cannot be registered is unknown.", tenant: "a", name: "acme_widgets", version: "1.0.0", err: ErrUnknownProvider},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := s.Resolve(ctx, tc.tenant, tc.name, tc.version)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("%s\nResolve: %v, want %v containing %q", tc.reason, err, tc.err, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nResolve: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nResolve: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}
