package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/registry"
)

// createN registers providers p00..p(n-1) as tenant a, one clock tick apart.
func createN(t *testing.T, h http.Handler, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		if got, _ := do(t, h, rfs("POST", "/v1/private-providers", `{"provider_name":"`+name+`"}`)); got.Status != 201 {
			t.Fatalf("create %s: %d %v", name, got.Status, got.Body)
		}
		names = append(names, name)
	}
	return names
}

// listAll follows next_marker from path (with query) and returns the names of every page.
func listAll(t *testing.T, h http.Handler, tok, path string) [][]string {
	t.Helper()
	var pages [][]string
	marker := ""
	for range 100 {
		p := path
		if marker != "" {
			p += "&marker=" + url.QueryEscape(marker)
		}
		got, _ := do(t, h, as(tok, rfs("GET", p, "")))
		if got.Status != 200 {
			t.Fatalf("GET %s: %d %v", p, got.Status, got.Body)
		}
		var body api.ListPrivateProvidersResponse
		decodeInto(t, got.Body, &body)
		var names []string
		for _, pr := range body.Providers {
			names = append(names, pr.ProviderName)
		}
		if body.PageInfo.CurrentCount != len(names) {
			t.Errorf("current_count %d, page has %d", body.PageInfo.CurrentCount, len(names))
		}
		pages = append(pages, names)
		if body.PageInfo.NextMarker == nil {
			return pages
		}
		marker = *body.PageInfo.NextMarker
		if marker == "" || len(marker) > 512 {
			t.Fatalf("next_marker %q: want 1..512 characters", marker)
		}
	}
	t.Fatalf("more than 100 pages")
	return nil
}

func TestRegistryPaging(t *testing.T) {
	h := registryServer(t, 0, 0)
	names := createN(t, h, 25)
	newest := slices.Clone(names)
	slices.Reverse(newest)
	cases := map[string]struct {
		reason, path string
		want         [][]string
	}{
		"DefaultDesc": {"Newest first, by default; limit 1000 by default.", "/v1/private-providers?", [][]string{newest}},
		"Asc":         {"sort_dir asc.", "/v1/private-providers?sort_key=create_time&sort_dir=asc", [][]string{names}},
		"Desc":        {"sort_dir desc.", "/v1/private-providers?sort_key=create_time&sort_dir=desc", [][]string{newest}},
		"Pages":       {"next_marker until exhausted.", "/v1/private-providers?limit=10", [][]string{newest[:10], newest[10:20], newest[20:]}},
		"PagesAsc":    {"Paging ascending.", "/v1/private-providers?limit=10&sort_key=create_time&sort_dir=asc", [][]string{names[:10], names[10:20], names[20:]}},
		"ExactPages":  {"No marker after a last page that is full.", "/v1/private-providers?limit=25", [][]string{newest}},
		"LimitBounds": {"1000 is the most.", "/v1/private-providers?limit=1000", [][]string{newest}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, listAll(t, h, tokA, tc.path)); diff != "" {
				t.Errorf("%s\n-want +got\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("OtherTenantEmpty", func(t *testing.T) {
		got, _ := do(t, h, as(tokB, rfs("GET", "/v1/private-providers", "")))
		if diff := cmp.Diff(js(t, `{"providers":[],"page_info":{"current_count":0}}`), got.Body); got.Status != 200 || diff != "" {
			t.Errorf("tenant b's list: %d -want +got\n%s", got.Status, diff)
		}
	})

	first, _ := do(t, h, rfs("GET", "/v1/private-providers?limit=10", ""))
	var page api.ListPrivateProvidersResponse
	decodeInto(t, first.Body, &page)
	m := url.QueryEscape(*page.PageInfo.NextMarker)
	bad := map[string]struct {
		tok, path, code string
	}{
		"Limit9":          {tokA, "?limit=9", registry.CodeInvalidParameter},
		"Limit1001":       {tokA, "?limit=1001", registry.CodeInvalidParameter},
		"LimitText":       {tokA, "?limit=ten", registry.CodeInvalidParameter},
		"LimitTwice":      {tokA, "?limit=10&limit=20", registry.CodeInvalidParameter},
		"SortKeyName":     {tokA, "?sort_key=name&sort_dir=asc", registry.CodeInvalidParameter},
		"SortDirUp":       {tokA, "?sort_key=create_time&sort_dir=up", registry.CodeInvalidParameter},
		"KeyWithoutDir":   {tokA, "?sort_key=create_time", registry.CodeInvalidParameter},
		"DirWithoutKey":   {tokA, "?sort_dir=asc", registry.CodeInvalidParameter},
		"Lengths":         {tokA, "?sort_key=create_time&sort_dir=asc&sort_dir=desc", registry.CodeInvalidParameter},
		"KeyTwice":        {tokA, "?sort_key=create_time&sort_key=create_time&sort_dir=asc&sort_dir=asc", registry.CodeInvalidParameter},
		"EmptyMarker":     {tokA, "?marker=", registry.CodeInvalidMarker},
		"LongMarker":      {tokA, "?marker=" + strings.Repeat("a", 513), registry.CodeInvalidMarker},
		"GarbageMarker":   {tokA, "?limit=10&marker=not-a-marker", registry.CodeInvalidMarker},
		"MarkerNewLimit":  {tokA, "?limit=20&marker=" + m, registry.CodeInvalidMarker},
		"MarkerNewSort":   {tokA, "?limit=10&sort_key=create_time&sort_dir=asc&marker=" + m, registry.CodeInvalidMarker},
		"MarkerOtherUser": {tokB, "?limit=10&marker=" + m, registry.CodeInvalidMarker},
		"ProviderID":      {tokA, "?provider_id=00000000-0000-4000-8000-000000000000", registry.CodeUnknownParameter},
		"Unknown":         {tokA, "?page=2", registry.CodeUnknownParameter},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			got, _ := do(t, h, as(tc.tok, rfs("GET", "/v1/private-providers"+tc.path, "")))
			if got.Status != 400 {
				t.Fatalf("GET %s: %d, want 400 (%v)", tc.path, got.Status, got.Body)
			}
			wantRFSError(t, name, got.Body, tc.code)
		})
	}
	t.Run("MarkerSameQuery", func(t *testing.T) {
		got, _ := do(t, h, rfs("GET", "/v1/private-providers?limit=10&marker="+m, ""))
		if got.Status != 200 {
			t.Errorf("the marker with its own query: %d %v", got.Status, got.Body)
		}
	})
}

func TestRegistryVersionPaging(t *testing.T) {
	h := registryServer(t, 0, 0)
	id := createAcme(t, h) // 1.0.0
	var want []string
	for i := 1; i <= 11; i++ {
		v := fmt.Sprintf("1.%d.0", i)
		if got, _ := do(t, h, rfs("POST", "/v1/private-providers/acme/versions", `{"provider_version":"`+v+`","function_graph_urn":"`+urn+`"}`)); got.Status != 201 {
			t.Fatalf("create %s: %d %v", v, got.Status, got.Body)
		}
		want = append([]string{v}, want...)
	}
	want = append(want, "1.0.0")
	var got []string
	var pages []int
	path := "/v1/private-providers/acme/versions?limit=10&provider_id=" + id
	marker := ""
	for range 5 {
		p := path
		if marker != "" {
			p += "&marker=" + url.QueryEscape(marker)
		}
		ans, _ := do(t, h, rfs("GET", p, ""))
		if ans.Status != 200 {
			t.Fatalf("GET %s: %d %v", p, ans.Status, ans.Body)
		}
		var body api.ListPrivateProviderVersionsResponse
		decodeInto(t, ans.Body, &body)
		for _, v := range body.Versions {
			got = append(got, v.ProviderVersion)
			if v.ProviderSource != "" {
				t.Errorf("list item has provider_source %q; the list has none", v.ProviderSource)
			}
		}
		pages = append(pages, len(body.Versions))
		if body.PageInfo.NextMarker == nil {
			break
		}
		marker = *body.PageInfo.NextMarker
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("versions newest first: -want +got\n%s", diff)
	}
	if diff := cmp.Diff([]int{10, 2}, pages); diff != "" {
		t.Errorf("page sizes: -want +got\n%s", diff)
	}
	// A versions marker means nothing to the providers list, nor without the provider_id.
	for _, p := range []string{"/v1/private-providers?limit=10&marker=", "/v1/private-providers/acme/versions?limit=10&marker="} {
		ans, _ := do(t, h, rfs("GET", p+url.QueryEscape(marker), ""))
		if ans.Status != 400 {
			t.Errorf("GET %s with another list's marker: %d, want 400", p, ans.Status)
		}
	}
}

// TestRegistryTenancy: a provider is its tenant's alone. Another tenant's token sees 404 on
// every operation, lists only its own, and may use the same name.
func TestRegistryTenancy(t *testing.T) {
	h := registryServer(t, 0, 0)
	idA := createAcme(t, h)
	for op, c := range routes() {
		if op == "CreateProvider" || op == "ListProviders" {
			continue
		}
		t.Run(op, func(t *testing.T) {
			got, _ := do(t, h, as(tokB, c))
			if got.Status != 404 {
				t.Fatalf("tenant b: %s %s: %d, want 404 (%v)", c.method, c.path, got.Status, got.Body)
			}
			wantRFSError(t, op, got.Body, registry.CodeProviderNotFound)
		})
	}
	got, _ := do(t, h, as(tokB, rfs("GET", "/v1/private-providers/acme/metadata?provider_id="+idA, "")))
	if got.Status != 404 {
		t.Errorf("tenant b with tenant a's id: %d, want 404", got.Status)
	}
	created, _ := do(t, h, as(tokB, rfs("POST", "/v1/private-providers", `{"provider_name":"acme","provider_description":"b's"}`)))
	if created.Status != 201 {
		t.Fatalf("tenant b creating its own acme: %d %v", created.Status, created.Body)
	}
	idB := created.Body.(map[string]any)["provider_id"].(string)
	if idA == idB {
		t.Fatalf("two tenants' providers share id %s", idA)
	}
	for _, tc := range []struct {
		tok, id, desc string
	}{{tokA, idA, "d"}, {tokB, idB, "b's"}} {
		got, _ := do(t, h, as(tc.tok, rfs("GET", "/v1/private-providers", "")))
		var body api.ListPrivateProvidersResponse
		decodeInto(t, got.Body, &body)
		if len(body.Providers) != 1 || body.Providers[0].ProviderID != tc.id || body.Providers[0].ProviderDescription != tc.desc {
			t.Errorf("list of the tenant of %s: %+v, want only its acme (%s)", tc.tok, body.Providers, tc.id)
		}
	}
	// X-Auth-Token names the tenant as Authorization does.
	x, _ := do(t, h, with(with(rfs("GET", "/v1/private-providers/acme/versions", ""), "Authorization", ""), "X-Auth-Token", tokB))
	if diff := cmp.Diff(js(t, `{"versions":[],"page_info":{"current_count":0}}`), x.Body); x.Status != 200 || diff != "" {
		t.Errorf("tenant b's acme versions: %d -want +got\n%s", x.Status, diff)
	}
	if got, _ := do(t, h, as(tokB, rfs("DELETE", "/v1/private-providers/acme", ""))); got.Status != 204 {
		t.Fatalf("tenant b deleting its acme: %d", got.Status)
	}
	if got, _ := do(t, h, rfs("GET", "/v1/private-providers/acme/versions/1.0.0/metadata", "")); got.Status != 200 {
		t.Errorf("tenant a's acme after tenant b deleted its own: %d %v", got.Status, got.Body)
	}
}
