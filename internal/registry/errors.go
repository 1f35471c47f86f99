package registry

import (
	"fmt"
	"net/http"
)

// RFS error codes: "RF." and 8 digits. RF.10011001, RF.10011002 and RF.10010001 are RFS's own;
// the others are cairn's choice in the same shape (RFS's full table is not public).
const (
	CodeInternal           = "RF.10010001" // 500
	CodeMissingParameter   = "RF.10011001" // 400: a required parameter (or header) is missing
	CodeUnknownParameter   = "RF.10011002" // 400: an unrecognized body field or query parameter
	CodeInvalidParameter   = "RF.10011003" // 400: a parameter breaks its rule (length, pattern, range)
	CodeProviderIDMismatch = "RF.10011004" // 400: provider_id is not the id of the named provider
	CodeInvalidMarker      = "RF.10011005" // 400: marker is malformed or belongs to other parameters
	CodeMalformedBody      = "RF.10011006" // 400: the body is not one JSON object of the right types
	CodeBodyTooLarge       = "RF.10011007" // 413
	CodeUnauthorized       = "RF.10012001" // 401: missing or unknown token
	CodeForbidden          = "RF.10013003" // 403: the caller's role may not do this
	CodeProviderQuota      = "RF.10013001" // 403: the tenant has as many providers as it may
	CodeVersionQuota       = "RF.10013002" // 403: the provider has as many versions as it may
	CodeProviderNotFound   = "RF.10014001" // 404
	CodeVersionNotFound    = "RF.10014002" // 404
	CodeRouteNotFound      = "RF.10014003" // 404: no such route under /v1/private-providers
	CodeMethodNotAllowed   = "RF.10015001" // 405
	CodeProviderExists     = "RF.10019001" // 409: the name is taken in the tenant
	CodeVersionExists      = "RF.10019002" // 409: the provider has that version
)

// Error is a refused request: an HTTP status, an RFS error code and a message for people.
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func newError(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *Error {
	return newError(http.StatusBadRequest, CodeInvalidParameter, format, args...)
}

func missing(what string) *Error {
	return newError(http.StatusBadRequest, CodeMissingParameter, "missing required parameter(s): %s", what)
}

// Unknown is the error of an unrecognized parameter.
func Unknown(what string) *Error {
	return newError(http.StatusBadRequest, CodeUnknownParameter, "unrecognized parameter(s): %s", what)
}

// Malformed is the error of a body that cannot be decoded.
func Malformed(detail string) *Error {
	return newError(http.StatusBadRequest, CodeMalformedBody, "cannot decode the request body: %s", detail)
}

func providerNotFound(name string) *Error {
	return newError(http.StatusNotFound, CodeProviderNotFound, "private provider %s does not exist", name)
}

func versionNotFound(name, version string) *Error {
	return newError(http.StatusNotFound, CodeVersionNotFound, "private provider %s has no version %s", name, version)
}
