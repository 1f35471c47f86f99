package server

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/state"
)

// requestError is a problem with the request itself (body, query, route, method, auth).
type requestError struct {
	status int    // default 400
	code   string // default api.CodeInvalidRequest
	msg    string
}

func (e *requestError) Error() string { return e.msg }

var errUnauthorized = &requestError{status: http.StatusUnauthorized, code: api.CodeUnauthorized,
	msg: "missing or wrong bearer token"}

// InvalidError is what a Config callback returns for a request its caller can fix: 400
// invalid_request with Msg, which must hold no secret.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// statusOf is the one mapping from errors to HTTP statuses and api error bodies. Anything it
// does not recognise is a 500 whose detail stays in the log.
func statusOf(err error) (int, api.Error) {
	var (
		req   *requestError
		valid *engine.ValidationError
		busy  *state.BusyError
		stale *plan.StaleError
		none  *engine.NoOperationError
		big   *http.MaxBytesError
		inv   *InvalidError
	)
	switch {
	case errors.As(err, &req):
		status, code := req.status, req.code
		if status == 0 {
			status = http.StatusBadRequest
		}
		if code == "" {
			code = api.CodeInvalidRequest
		}
		return status, api.Error{Code: code, Message: req.msg}
	case errors.As(err, &inv):
		return http.StatusBadRequest, api.Error{Code: api.CodeInvalidRequest, Message: inv.Msg}
	case errors.As(err, &big):
		return http.StatusRequestEntityTooLarge, api.Error{Code: api.CodeInvalidRequest,
			Message: "request body is larger than the limit of " + humanBytes(big.Limit)}
	case errors.As(err, &valid):
		return http.StatusBadRequest, api.Error{Code: api.CodeValidationFailed,
			Message: "the template or its parameters are invalid", Diagnostics: engine.APIDiagnostics(valid.Diagnostics)}
	case errors.As(err, &none):
		return http.StatusConflict, api.Error{Code: api.CodeNoOperation, Message: none.Error()}
	case errors.As(err, &busy):
		return http.StatusConflict, api.Error{Code: api.CodeStackBusy, Message: busy.Error()}
	case errors.As(err, &stale):
		return http.StatusConflict, api.Error{Code: api.CodePlanStale, Message: stale.Error()}
	case errors.Is(err, state.ErrNotFound):
		return http.StatusNotFound, api.Error{Code: api.CodeNotFound, Message: err.Error()}
	default:
		return http.StatusInternalServerError, api.Error{Code: api.CodeInternal,
			Message: "internal error; the server log has the detail"}
	}
}

// reply encodes v with status, or the error if err is not nil.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

// fail answers with the api.Error for err, logging internal errors with their detail.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := statusOf(err)
	if status == http.StatusInternalServerError {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "route", routeOf(r), "err", err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to do
}

func humanBytes(n int64) string {
	if n%(1<<20) == 0 {
		return itoa(n>>20) + " MiB"
	}
	return itoa(n) + " bytes"
}
