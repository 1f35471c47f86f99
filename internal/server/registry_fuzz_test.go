package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/registry"
)

// registryBodies are the routes of /v1/private-providers that take a body, with a fresh value
// of the type decodeRFS reads it into.
var registryBodies = []struct {
	method, path string
	body         func() any
}{
	{"POST", "/v1/private-providers", func() any { return new(api.CreatePrivateProviderRequest) }},
	{"PATCH", "/v1/private-providers/acme/metadata", func() any { return new(api.UpdatePrivateProviderRequest) }},
	{"POST", "/v1/private-providers/acme/versions", func() any { return new(api.CreatePrivateProviderVersionRequest) }},
}

// registryAnswers are the statuses the registry may answer a request of a known tenant with
// a well-formed Client-Request-Id: success, the caller's mistakes (400, 404, 409, quotas 403,
// a body over the limit 413). A 500 is a bug.
var registryAnswers = map[int]bool{200: true, 201: true, 204: true, 400: true, 403: true, 404: true, 409: true, 413: true}

// FuzzRegistryDecode decodes arbitrary bodies as each request body type of the registry
// (route picks which), then sends the body and the query to that route of a real registry
// on SQLite. decodeRFS must never panic and fail only with a 400 *registry.Error (or 413 over
// the size limit); the route must answer only registryAnswers, errors in RFS's format.
// Seeds are in testdata/fuzz/FuzzRegistryDecode.
func FuzzRegistryDecode(f *testing.F) {
	f.Add(uint8(0), []byte(`{"provider_name":"acme","provider_version":"1.0.0","function_graph_urn":"`+urn+`"}`), "")
	f.Add(uint8(1), []byte(`{"provider_description":"x"}`), "provider_id=x")
	f.Add(uint8(2), []byte(`{"provider_version":"2.0.0","function_graph_urn":"`+urn+`"}`), "")
	h := registryServer(f, 0, 0)
	createAcme(f, h)
	f.Fuzz(func(t *testing.T, route uint8, body []byte, query string) {
		rt := registryBodies[int(route)%len(registryBodies)]

		w := httptest.NewRecorder()
		r := httptest.NewRequest(rt.method, rt.path, bytes.NewReader(body))
		err := decodeRFS(w, r, rt.body())
		var (
			re  *registry.Error
			big *http.MaxBytesError
		)
		switch {
		case err == nil, errors.As(err, &big):
		case !errors.As(err, &re) || re.Status != http.StatusBadRequest:
			t.Fatalf("decodeRFS(%q): %v, want nil or a 400 *registry.Error", body, err)
		}

		req := &http.Request{Method: rt.method, URL: &url.URL{Path: rt.path, RawQuery: query}, Host: "cairn.test",
			Header: http.Header{"Authorization": {"Bearer " + tokA}, "Client-Request-Id": {reqID}},
			Body:   io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		w = httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !registryAnswers[w.Code] {
			t.Fatalf("%s %s?%s with %q: status %d (%s)", rt.method, rt.path, query, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var e api.RFSError
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.ErrorCode == "" || e.ErrorMsg == "" {
				t.Fatalf("status %d with a body that is not an RFS error: %s", w.Code, w.Body)
			}
		}
	})
}
