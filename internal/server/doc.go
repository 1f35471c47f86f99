// Package server is cairn's HTTP API: net/http handlers that decode a request, call the
// engine and encode the answer, plus bearer-token auth, the access log, Prometheus metrics and
// the long polls behind `cairn events --follow` and `cairn deploy` waiting for an operation.
// One function, statusOf, maps errors to HTTP statuses and api error codes.
//
// The custom-resource response endpoint (PUT /v1/responses/...) is mounted from a handler the
// caller supplies; it is served without bearer auth (its URL is pre-signed) and its query
// string is never logged.
//
// Tokens stand for tenants (internal/tenant); the tenant of a request is in its context. The
// private-provider registry (/v1/private-providers, registry.go) answers in Huawei RFS's
// format, errors included, rather than api.Error.
//
// The package imports api, engine (for its error types), registry, tenant and state (for its
// sentinel errors), never cli or a storage backend (its tests use state/sqlite).
package server
