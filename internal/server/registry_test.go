package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/registry"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// The contract of /v1/private-providers (shared/spec/rfs-private-providers.md §9), over HTTP.

const (
	tokA  = "token-of-tenant-a"
	tokB  = "token-of-tenant-b"
	reqID = "3f9c2a70-5d1e-4b8e-9a61-0c7d2e4f1b22"
	urn   = "urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-widgets-fn:latest"
	urn2  = "urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-widgets-fn:!prod"
)

// registryServer serves a registry on a new SQLite file with tenants a (tokA) and b (tokB), in
// region cn-north-4, with a clock that ticks one second per read and the given quotas.
func registryServer(t testing.TB, maxProviders, maxVersions int) http.Handler {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	ticks := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		ticks++
		return t0.Add(time.Duration(ticks)*time.Second + 123*time.Millisecond + 456*time.Microsecond)
	}
	reg := registry.New(registry.Options{Store: st, Region: "cn-north-4", Now: clock,
		MaxProviders: maxProviders, MaxVersions: maxVersions})
	return New(Config{Engine: &fakeEngine{}, Registry: reg, Tenants: map[string]string{tokA: "a", tokB: "b"}}).Handler()
}

// rfs is a registry call as tenant a with a Client-Request-Id.
func rfs(method, path, body string) call {
	return call{method: method, path: path, body: body,
		header: map[string]string{"Authorization": "Bearer " + tokA, "Client-Request-Id": reqID}}
}

// as is c made by the holder of token tok.
func as(tok string, c call) call {
	c.header = map[string]string{"Authorization": "Bearer " + tok, "Client-Request-Id": reqID}
	return c
}

// with is c with header k set to v ("" removes it).
func with(c call, k, v string) call {
	h := map[string]string{}
	for hk, hv := range c.header {
		if hk != k {
			h[hk] = hv
		}
	}
	if v != "" {
		h[k] = v
	}
	c.header = h
	return c
}

// createAcme registers acme (with version 1.0.0) as tenant a and returns its id.
func createAcme(t testing.TB, h http.Handler) string {
	t.Helper()
	got, _ := do(t, h, rfs("POST", "/v1/private-providers", `{"provider_name":"acme","provider_description":"d",
		"provider_version":"1.0.0","version_description":"first","function_graph_urn":"`+urn+`"}`))
	if got.Status != http.StatusCreated {
		t.Fatalf("create acme: %d %v", got.Status, got.Body)
	}
	return got.Body.(map[string]any)["provider_id"].(string)
}

// wantRFSError fails unless body is an RFS error body with code: error_code (11 characters),
// error_msg, encoded_authorization_message and details, and nothing else.
func wantRFSError(t *testing.T, what string, body any, code string) {
	t.Helper()
	m, ok := body.(map[string]any)
	if !ok {
		t.Errorf("%s: body %v is not an RFS error", what, body)
		return
	}
	if got, _ := m["error_code"].(string); got != code || len(got) != 11 {
		t.Errorf("%s: error_code %q, want %q", what, got, code)
	}
	if msg, _ := m["error_msg"].(string); msg == "" {
		t.Errorf("%s: empty error_msg", what)
	}
	if got, ok := m["encoded_authorization_message"].(string); !ok || got != "" {
		t.Errorf("%s: encoded_authorization_message = %v, want \"\"", what, m["encoded_authorization_message"])
	}
	if d, ok := m["details"].([]any); !ok || len(d) != 0 {
		t.Errorf("%s: details = %v, want []", what, m["details"])
	}
	if len(m) != 4 {
		t.Errorf("%s: error body has %d fields, want 4: %v", what, len(m), m)
	}
}

// routes is one call of each of the nine operations on acme (ID is its id).
func routes() map[string]call {
	return map[string]call{
		"CreateProvider": rfs("POST", "/v1/private-providers", `{"provider_name":"other"}`),
		"ListProviders":  rfs("GET", "/v1/private-providers", ""),
		"CreateVersion":  rfs("POST", "/v1/private-providers/acme/versions", `{"provider_version":"2.0.0","function_graph_urn":"`+urn+`"}`),
		"ListVersions":   rfs("GET", "/v1/private-providers/acme/versions", ""),
		"DeleteProvider": rfs("DELETE", "/v1/private-providers/acme", ""),
		"ShowProvider":   rfs("GET", "/v1/private-providers/acme/metadata", ""),
		"UpdateProvider": rfs("PATCH", "/v1/private-providers/acme/metadata", `{"provider_description":"x"}`),
		"DeleteVersion":  rfs("DELETE", "/v1/private-providers/acme/versions/1.0.0", ""),
		"ShowVersion":    rfs("GET", "/v1/private-providers/acme/versions/1.0.0/metadata", ""),
	}
}

// TestRegistryHeaderAndAuth: every operation needs a known token (401) and a well-formed
// Client-Request-Id (400), and with both succeeds.
func TestRegistryHeaderAndAuth(t *testing.T) {
	for op, c := range routes() {
		cases := map[string]struct {
			c      call
			status int
			code   string
		}{
			"NoToken":        {with(c, "Authorization", ""), 401, registry.CodeUnauthorized},
			"WrongToken":     {with(c, "Authorization", "Bearer nope"), 401, registry.CodeUnauthorized},
			"NoRequestID":    {with(c, "Client-Request-Id", ""), 400, registry.CodeMissingParameter},
			"ShortID":        {with(c, "Client-Request-Id", strings.Repeat("a", 35)), 400, registry.CodeInvalidParameter},
			"LongID":         {with(c, "Client-Request-Id", strings.Repeat("a", 129)), 400, registry.CodeInvalidParameter},
			"LeadingHyphen":  {with(c, "Client-Request-Id", "-"+reqID), 400, registry.CodeInvalidParameter},
			"Underscore":     {with(c, "Client-Request-Id", strings.ReplaceAll(reqID, "-", "_")), 400, registry.CodeInvalidParameter},
			"NotAUUIDButOK":  {with(c, "Client-Request-Id", strings.Repeat("Ab9", 12)), 0, ""},
			"LongestOK":      {with(c, "Client-Request-Id", strings.Repeat("a", 128)), 0, ""},
			"XAuthTokenOK":   {with(with(c, "Authorization", ""), "X-Auth-Token", tokA), 0, ""},
			"BearerOK":       {c, 0, ""},
			"OtherAuthIsNot": {with(with(c, "Authorization", "Basic "+tokA), "X-Auth-Token", ""), 401, registry.CodeUnauthorized},
		}
		shared := registryServer(t, 0, 0) // refused calls change nothing: they share a server
		createAcme(t, shared)
		for name, tc := range cases {
			t.Run(op+"/"+name, func(t *testing.T) {
				t.Parallel()
				h := shared
				if tc.status == 0 {
					h = registryServer(t, 0, 0)
					createAcme(t, h)
				}
				got, hdr := do(t, h, tc.c)
				if tc.status == 0 {
					if got.Status >= 300 {
						t.Fatalf("%s %s: %d %v, want success", tc.c.method, tc.c.path, got.Status, got.Body)
					}
					return
				}
				if got.Status != tc.status {
					t.Fatalf("%s %s: status %d, want %d (%v)", tc.c.method, tc.c.path, got.Status, tc.status, got.Body)
				}
				wantRFSError(t, op, got.Body, tc.code)
				if tc.status == 401 && hdr.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without WWW-Authenticate")
				}
			})
		}
	}
}

// step is one call of a contract case and what must come back. A wantBody of "" is not
// compared; "-" is an empty body. {id} in a path or body is acme's id.
type step struct {
	c        call
	status   int
	code     string // error_code when status >= 400
	wantBody string
}

func TestRegistryContract(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	create := func(body string) call { return rfs("POST", "/v1/private-providers", body) }
	version := func(body string) call { return rfs("POST", "/v1/private-providers/acme/versions", body) }
	get := func(path string) call { return rfs("GET", path, "") }
	del := func(path string) call { return rfs("DELETE", path, "") }
	patch := func(body string) call { return rfs("PATCH", "/v1/private-providers/acme/metadata", body) }
	const (
		bad     = http.StatusBadRequest
		showA   = "/v1/private-providers/acme/metadata"
		showV   = "/v1/private-providers/acme/versions/1.0.0/metadata"
		acmeDoc = `{"provider_id":"{id}","provider_name":"acme","provider_description":"d",
			"provider_source":"huawei.com/private-provider/acme","create_time":"2026-01-02T03:04:06.123Z",
			"update_time":"2026-01-02T03:04:06.123Z"}`
	)
	cases := map[string]struct {
		reason string
		steps  []step
	}{
		"CreateEmpty": {"A provider needs no version; the answer is its id and source.", []step{
			{c: create(`{"provider_name":"widgets"}`), status: 201},
			{c: get("/v1/private-providers/widgets/versions"), status: 200,
				wantBody: `{"versions":[],"page_info":{"current_count":0}}`}}},
		"CreateDuplicate": {"A name taken in the tenant is a conflict.", []step{
			{c: create(`{"provider_name":"acme"}`), status: 409, code: registry.CodeProviderExists}}},
		"CreateVersionWithoutURN": {"provider_version needs function_graph_urn.", []step{
			{c: create(`{"provider_name":"w","provider_version":"1.0.0"}`), status: bad, code: registry.CodeMissingParameter}}},
		"CreateURNWithoutVersion": {"function_graph_urn needs provider_version.", []step{
			{c: create(`{"provider_name":"w","function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeMissingParameter}}},
		"CreateVersionDescriptionAlone": {"version_description without a version has nothing to describe.", []step{
			{c: create(`{"provider_name":"w","version_description":"x"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateWithVersion": {"With version and URN the first version exists at once.", []step{
			{c: get(showV), status: 200, wantBody: `{"provider_id":"{id}","provider_name":"acme","provider_version":"1.0.0",
				"version_description":"first","function_graph_urn":"` + urn + `","create_time":"2026-01-02T03:04:06.123Z",
				"provider_source":"huawei.com/private-provider/acme"}`}}},
		"CreateNoName":       {"provider_name is required.", []step{{c: create(`{}`), status: bad, code: registry.CodeMissingParameter}}},
		"CreateEmptyBody":    {"An empty body lacks provider_name.", []step{{c: create(""), status: bad, code: registry.CodeMissingParameter}}},
		"CreateUpper":        {"Names are lowercase.", []step{{c: create(`{"provider_name":"Acme2"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateTrailingDash": {"A name ends with a letter or digit.", []step{{c: create(`{"provider_name":"w-"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateLeadingDash":  {"A name begins with a letter or digit.", []step{{c: create(`{"provider_name":"-w"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateUnderscore":   {"Only letters, digits and '-'.", []step{{c: create(`{"provider_name":"a_b"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateName64":       {"64 characters are allowed.", []step{{c: create(`{"provider_name":"` + long(64) + `"}`), status: 201}}},
		"CreateName65":       {"65 are not.", []step{{c: create(`{"provider_name":"` + long(65) + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateOneChar":      {"One character is a name.", []step{{c: create(`{"provider_name":"a"}`), status: 201}}},
		"CreateDesc1024":     {"1024 characters of description are allowed.", []step{{c: create(`{"provider_name":"w","provider_description":"` + strings.Repeat("é", 1024) + `"}`), status: 201}}},
		"CreateDesc1025":     {"1025 are not.", []step{{c: create(`{"provider_name":"w","provider_description":"` + long(1025) + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateUnknownField": {"Unknown fields are refused.", []step{{c: create(`{"provider_name":"w","colour":"red"}`), status: bad, code: registry.CodeUnknownParameter}}},
		"CreateUnknownQuery": {"Unknown query parameters are refused.", []step{{c: rfs("POST", "/v1/private-providers?x=1", `{"provider_name":"w"}`), status: bad, code: registry.CodeUnknownParameter}}},
		"CreateMalformed":    {"A body that is not JSON.", []step{{c: create(`{"provider_name":`), status: bad, code: registry.CodeMalformedBody}}},
		"CreateWrongType":    {"A field of the wrong type.", []step{{c: create(`{"provider_name":5}`), status: bad, code: registry.CodeMalformedBody}}},
		"CreateTrailing":     {"One JSON object only.", []step{{c: create(`{"provider_name":"w"} {}`), status: bad, code: registry.CodeMalformedBody}}},
		"CreateTooLarge":     {"Bodies are bounded.", []step{{c: create(`{"provider_name":"` + long(70000) + `"}`), status: 413, code: registry.CodeBodyTooLarge}}},
		"CreateBothAgencies": {"At most one agency field.", []step{{c: create(`{"provider_name":"w","provider_agency_urn":"iam::abc:agency:x","provider_agency_name":"x"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateBadAgencyURN": {"An agency URN has its pattern.", []step{{c: create(`{"provider_name":"w","provider_agency_urn":"agency:x"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"CreateAgency": {"An agency URN is kept and shown.", []step{
			{c: create(`{"provider_name":"w","provider_agency_urn":"iam::abc:agency:rfs"}`), status: 201},
			{c: get("/v1/private-providers/w/metadata"), status: 200}}},
		"URNOtherRegion": {"The function must be in the registry's region.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + strings.Replace(urn, "cn-north-4", "cn-south-1", 1) + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"URNNoQualifier": {"The version or alias of the function is required.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"urn:fss:cn-north-4:0a1b2c3d4e5f60718293a4b5c6d7e8f9:function:default:acme-widgets-fn"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"URNPackage": {"The package is default.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + strings.Replace(urn, ":default:", ":mine:", 1) + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"URNTooShort": {"32 characters at least.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"urn:fss:r:abc:function:default:f:1a"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"URNAlias":   {"An alias qualifier is allowed.", []step{{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + urn2 + `"}`), status: 201, wantBody: "-"}}},
		"Version1.0": {"A version has three parts.", []step{{c: version(`{"provider_version":"1.0","function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"VersionLeadingZero": {"Semantic versions have no leading zeros.", []step{
			{c: version(`{"provider_version":"01.0.0","function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"VersionFourParts": {"Not four parts.", []step{{c: version(`{"provider_version":"1.0.0.0","function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"VersionOverUint64": {"Each part fits an unsigned 64-bit integer.", []step{
			{c: version(`{"provider_version":"18446744073709551616.0.0","function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeInvalidParameter},
			{c: version(`{"provider_version":"18446744073709551615.0.0","function_graph_urn":"` + urn + `"}`), status: 201}}},
		"VersionPrerelease": {"Pre-release and build suffixes are semantic versions.", []step{
			{c: version(`{"provider_version":"1.0.0-beta.1+b7","function_graph_urn":"` + urn + `"}`), status: 201},
			{c: get("/v1/private-providers/acme/versions/1.0.0-beta.1+b7/metadata"), status: 200}}},
		"VersionMissing": {"provider_version is required.", []step{{c: version(`{"function_graph_urn":"` + urn + `"}`), status: bad, code: registry.CodeMissingParameter}}},
		"VersionNoURN":   {"function_graph_urn is required.", []step{{c: version(`{"provider_version":"2.0.0"}`), status: bad, code: registry.CodeMissingParameter}}},
		"VersionCreated": {"201 with an empty body; the version is listed.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + urn2 + `","provider_id":"{id}"}`), status: 201, wantBody: "-"},
			{c: get("/v1/private-providers/acme/versions?sort_key=create_time&sort_dir=asc"), status: 200, wantBody: `{"versions":[
				{"provider_id":"{id}","provider_name":"acme","provider_version":"1.0.0","version_description":"first","function_graph_urn":"` + urn + `","create_time":"2026-01-02T03:04:06.123Z"},
				{"provider_id":"{id}","provider_name":"acme","provider_version":"2.0.0","version_description":"","function_graph_urn":"` + urn2 + `","create_time":"2026-01-02T03:04:07.123Z"}],
				"page_info":{"current_count":2}}`}}},
		"VersionDuplicate": {"A version exists once.", []step{
			{c: version(`{"provider_version":"1.0.0","function_graph_urn":"` + urn + `"}`), status: 409, code: registry.CodeVersionExists}}},
		"VersionNoProvider": {"The provider must exist.", []step{
			{c: rfs("POST", "/v1/private-providers/nope/versions", `{"provider_version":"1.0.0","function_graph_urn":"`+urn+`"}`), status: 404, code: registry.CodeProviderNotFound}}},
		"VersionIDMismatch": {"provider_id must be the provider's.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + urn + `","provider_id":"00000000-0000-4000-8000-000000000000"}`), status: bad, code: registry.CodeProviderIDMismatch}}},
		"VersionBadID": {"A provider_id has 36 characters.", []step{
			{c: version(`{"provider_version":"2.0.0","function_graph_urn":"` + urn + `","provider_id":"abc"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"Show": {"Metadata has the fields of §3.6 with millisecond UTC times.", []step{
			{c: get(showA), status: 200, wantBody: acmeDoc},
			{c: get(showA + "?provider_id={id}"), status: 200, wantBody: acmeDoc}}},
		"ShowHead":       {"HEAD works where GET does.", []step{{c: rfs("HEAD", showA, ""), status: 200}}},
		"ShowMissing":    {"An unknown provider is 404.", []step{{c: get("/v1/private-providers/nope/metadata"), status: 404, code: registry.CodeProviderNotFound}}},
		"ShowBadName":    {"A path name breaks the name rule.", []step{{c: get("/v1/private-providers/Acme/metadata"), status: bad, code: registry.CodeInvalidParameter}}},
		"ShowIDMismatch": {"The name/id guard.", []step{{c: get(showA + "?provider_id=00000000-0000-4000-8000-000000000000"), status: bad, code: registry.CodeProviderIDMismatch}}},
		"ShowIDTwice":    {"provider_id once.", []step{{c: get(showA + "?provider_id={id}&provider_id={id}"), status: bad, code: registry.CodeInvalidParameter}}},
		"ShowUnknownQuery": {"Unknown query parameters are refused.", []step{
			{c: get(showA + "?limit=10"), status: bad, code: registry.CodeUnknownParameter}}},
		"Patch": {"PATCH sets the description only, bumps update_time and answers 204.", []step{
			{c: patch(`{"provider_description":"new","provider_id":"{id}"}`), status: 204, wantBody: "-"},
			{c: get(showA), status: 200, wantBody: strings.Replace(strings.Replace(acmeDoc, `"d"`, `"new"`, 1),
				`"update_time":"2026-01-02T03:04:06.123Z"`, `"update_time":"2026-01-02T03:04:07.123Z"`, 1)}}},
		"PatchSameValue": {"The same value again is an update too.", []step{
			{c: patch(`{"provider_description":"d"}`), status: 204}}},
		"PatchClear": {`"" clears the description.`, []step{
			{c: patch(`{"provider_description":""}`), status: 204},
			{c: get(showA), status: 200, wantBody: strings.Replace(strings.Replace(acmeDoc, `"d"`, `""`, 1),
				`"update_time":"2026-01-02T03:04:06.123Z"`, `"update_time":"2026-01-02T03:04:07.123Z"`, 1)}}},
		"PatchNothing":  {"Nothing updatable is 400.", []step{{c: patch(`{}`), status: bad, code: registry.CodeMissingParameter}}},
		"PatchIDOnly":   {"provider_id alone updates nothing.", []step{{c: patch(`{"provider_id":"{id}"}`), status: bad, code: registry.CodeMissingParameter}}},
		"PatchNull":     {"null is as if absent.", []step{{c: patch(`{"provider_description":null}`), status: bad, code: registry.CodeMissingParameter}}},
		"PatchVersion":  {"Only the description can change.", []step{{c: patch(`{"provider_name":"x","provider_description":"y"}`), status: bad, code: registry.CodeUnknownParameter}}},
		"PatchLong":     {"The description rule holds.", []step{{c: patch(`{"provider_description":"` + long(1025) + `"}`), status: bad, code: registry.CodeInvalidParameter}}},
		"PatchMissing":  {"An unknown provider is 404.", []step{{c: rfs("PATCH", "/v1/private-providers/nope/metadata", `{"provider_description":"y"}`), status: 404, code: registry.CodeProviderNotFound}}},
		"PatchMismatch": {"The guard.", []step{{c: patch(`{"provider_description":"y","provider_id":"00000000-0000-4000-8000-000000000000"}`), status: bad, code: registry.CodeProviderIDMismatch}}},
		"DeleteCascades": {"DELETE removes the provider and its versions; the name is free again with a new id.", []step{
			{c: del("/v1/private-providers/acme?provider_id={id}"), status: 204, wantBody: "-"},
			{c: get(showA), status: 404, code: registry.CodeProviderNotFound},
			{c: del("/v1/private-providers/acme"), status: 404, code: registry.CodeProviderNotFound},
			{c: create(`{"provider_name":"acme"}`), status: 201},
			{c: get(showA + "?provider_id={id}"), status: bad, code: registry.CodeProviderIDMismatch},
			{c: get(showV), status: 404, code: registry.CodeVersionNotFound}}},
		"DeleteMismatch": {"The guard.", []step{{c: del("/v1/private-providers/acme?provider_id=00000000-0000-4000-8000-000000000000"), status: bad, code: registry.CodeProviderIDMismatch}}},
		"DeleteVersion": {"DELETE of a version is 204 and leaves the provider.", []step{
			{c: del("/v1/private-providers/acme/versions/1.0.0?provider_id={id}"), status: 204, wantBody: "-"},
			{c: get(showV), status: 404, code: registry.CodeVersionNotFound},
			{c: del("/v1/private-providers/acme/versions/1.0.0"), status: 404, code: registry.CodeVersionNotFound},
			{c: get(showA), status: 200}}},
		"DeleteVersionNoProvider": {"404 when the provider is missing.", []step{
			{c: del("/v1/private-providers/nope/versions/1.0.0"), status: 404, code: registry.CodeProviderNotFound}}},
		"DeleteVersionMismatch": {"The guard.", []step{
			{c: del("/v1/private-providers/acme/versions/1.0.0?provider_id=00000000-0000-4000-8000-000000000000"), status: bad, code: registry.CodeProviderIDMismatch}}},
		"ShowVersionBad": {"The path version follows the version rule.", []step{
			{c: get("/v1/private-providers/acme/versions/1.0/metadata"), status: bad, code: registry.CodeInvalidParameter}}},
		"ShowVersionMismatch": {"The guard.", []step{
			{c: get(showV + "?provider_id=00000000-0000-4000-8000-000000000000"), status: bad, code: registry.CodeProviderIDMismatch}}},
		"ListVersionsMissing": {"404 for an unknown provider.", []step{
			{c: get("/v1/private-providers/nope/versions"), status: 404, code: registry.CodeProviderNotFound}}},
		"ListVersionsMismatch": {"The guard.", []step{
			{c: get("/v1/private-providers/acme/versions?provider_id=00000000-0000-4000-8000-000000000000"), status: bad, code: registry.CodeProviderIDMismatch}}},
		"MethodNotAllowed": {"A wrong method is 405 with Allow, in RFS format.", []step{
			{c: rfs("PUT", showA, ""), status: 405, code: registry.CodeMethodNotAllowed}}},
		"NoRoute": {"An unknown path below the prefix is 404 in RFS format.", []step{
			{c: get("/v1/private-providers/acme/nothing/here"), status: 404, code: registry.CodeRouteNotFound}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := registryServer(t, 0, 0)
			id := createAcme(t, h)
			for i, s := range tc.steps {
				c := s.c
				c.path = strings.ReplaceAll(c.path, "{id}", id)
				c.body = strings.ReplaceAll(c.body, "{id}", id)
				got, _ := do(t, h, c)
				what := fmt.Sprintf("%s\nstep %d: %s %s", tc.reason, i, c.method, c.path)
				if got.Status != s.status {
					t.Fatalf("%s: status %d, want %d (%v)", what, got.Status, s.status, got.Body)
				}
				if s.status >= 400 {
					wantRFSError(t, what, got.Body, s.code)
					continue
				}
				switch s.wantBody {
				case "":
				case "-":
					if got.Body != "" {
						t.Errorf("%s: body %v, want none", what, got.Body)
					}
				default:
					if diff := cmp.Diff(js(t, strings.ReplaceAll(s.wantBody, "{id}", id)), got.Body); diff != "" {
						t.Errorf("%s: -want +got\n%s", what, diff)
					}
				}
			}
		})
	}
}

// TestRegistryCreateAnswer: 201 with exactly provider_id (a fresh lowercase UUID) and
// provider_source.
func TestRegistryCreateAnswer(t *testing.T) {
	h := registryServer(t, 0, 0)
	ids := map[string]bool{}
	for range 2 {
		got, _ := do(t, h, rfs("POST", "/v1/private-providers", `{"provider_name":"acme-widgets"}`))
		if got.Status != 201 {
			t.Fatalf("create: %d %v", got.Status, got.Body)
		}
		m := got.Body.(map[string]any)
		id, _ := m["provider_id"].(string)
		if err := registry.CheckProviderID(id); err != nil || strings.Count(id, "-") != 4 {
			t.Errorf("provider_id %q is not a lowercase UUID", id)
		}
		ids[id] = true
		want := map[string]any{"provider_id": id, "provider_source": "huawei.com/private-provider/acme-widgets"}
		if diff := cmp.Diff(want, m); diff != "" {
			t.Errorf("create answer: -want +got\n%s", diff)
		}
		if got, _ := do(t, h, rfs("DELETE", "/v1/private-providers/acme-widgets", "")); got.Status != 204 {
			t.Fatalf("delete: %d", got.Status)
		}
	}
	if len(ids) != 2 {
		t.Errorf("a re-created provider got the same id")
	}
}

// TestRegistryQuotas: 403 past the quotas of providers per tenant and versions per provider.
func TestRegistryQuotas(t *testing.T) {
	h := registryServer(t, 2, 2)
	createAcme(t, h)
	steps := []step{
		{c: rfs("POST", "/v1/private-providers", `{"provider_name":"b"}`), status: 201},
		{c: rfs("POST", "/v1/private-providers", `{"provider_name":"c"}`), status: 403, code: registry.CodeProviderQuota},
		{c: as(tokB, rfs("POST", "/v1/private-providers", `{"provider_name":"c"}`)), status: 201},
		{c: rfs("POST", "/v1/private-providers/acme/versions", `{"provider_version":"2.0.0","function_graph_urn":"`+urn+`"}`), status: 201},
		{c: rfs("POST", "/v1/private-providers/acme/versions", `{"provider_version":"3.0.0","function_graph_urn":"`+urn+`"}`), status: 403, code: registry.CodeVersionQuota},
	}
	for i, s := range steps {
		got, _ := do(t, h, s.c)
		if got.Status != s.status {
			t.Fatalf("step %d %s %s: %d, want %d (%v)", i, s.c.method, s.c.path, got.Status, s.status, got.Body)
		}
		if s.status >= 400 {
			wantRFSError(t, fmt.Sprint("step ", i), got.Body, s.code)
		}
	}
}

// decodeInto re-encodes a generic body into v.
func decodeInto(t *testing.T, body any, v any) {
	t.Helper()
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("cannot decode %s: %v", b, err)
	}
}
