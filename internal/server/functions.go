package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Functions is what the function routes need (function.Service).
type Functions interface {
	CreateFunction(ctx context.Context, req api.CreateFunctionRequest) (api.Function, error)
	ListFunctions(ctx context.Context) ([]api.Function, error)
	GetFunction(ctx context.Context, name string) (api.Function, error)
	DeleteFunction(ctx context.Context, name string) error
	InvokeFunction(ctx context.Context, name string, req api.InvokeRequest) (api.InvokeResponse, error)
	FunctionLogs(ctx context.Context, name, requestID string, limit int) ([]api.LogEntry, error)
}

var _ Functions = function.Service{}

// maxCodeBody bounds POST /v1/functions, whose body carries the zipped code (Lambda takes
// 50 MB zipped in a direct upload; base64 adds a third).
const maxCodeBody = 70 << 20

// functionRoutes registers /v1/functions/...; without Functions they answer 404.
func (s *Server) functionRoutes(api func(method, path string, h http.HandlerFunc), as func(role, method, path string, h http.HandlerFunc)) {
	api("POST", "/v1/functions", s.createFunction)
	api("GET", "/v1/functions", s.listFunctions)
	api("GET", "/v1/functions/{name}", s.getFunction)
	api("DELETE", "/v1/functions/{name}", s.deleteFunction)
	api("POST", "/v1/functions/{name}/invoke", s.invokeFunction)
	as(tenant.Deployer, "GET", "/v1/functions/{name}/logs", s.functionLogs) // what a function prints may be secret
}

func (s *Server) createFunction(w http.ResponseWriter, r *http.Request) {
	var req api.CreateFunctionRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCodeBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			s.fail(w, r, err)
			return
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("request body is empty; expected a JSON object")
		}
		s.fail(w, r, &requestError{msg: "cannot decode request body: " + err.Error()})
		return
	}
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	f, err := s.fns.CreateFunction(r.Context(), req)
	s.reply(w, r, http.StatusCreated, f, functionError(err))
}

func (s *Server) listFunctions(w http.ResponseWriter, r *http.Request) {
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	fs, err := s.fns.ListFunctions(r.Context())
	s.reply(w, r, http.StatusOK, map[string][]api.Function{"functions": fs}, functionError(err))
}

func (s *Server) getFunction(w http.ResponseWriter, r *http.Request) {
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	f, err := s.fns.GetFunction(r.Context(), r.PathValue("name"))
	s.reply(w, r, http.StatusOK, f, functionError(err))
}

func (s *Server) deleteFunction(w http.ResponseWriter, r *http.Request) {
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	if err := s.fns.DeleteFunction(r.Context(), r.PathValue("name")); err != nil {
		s.fail(w, r, functionError(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) invokeFunction(w http.ResponseWriter, r *http.Request) {
	var req api.InvokeRequest
	if err := decode(w, r, &req, true); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	resp, err := s.fns.InvokeFunction(r.Context(), r.PathValue("name"), req)
	status := http.StatusOK
	if req.Async {
		status = http.StatusAccepted
	}
	s.reply(w, r, status, resp, functionError(err))
}

func (s *Server) functionLogs(w http.ResponseWriter, r *http.Request) {
	if s.fns == nil {
		s.fail(w, r, errNoFunctions)
		return
	}
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			s.fail(w, r, &requestError{msg: fmt.Sprintf("query parameter limit must be a number of entries, not %q", v)})
			return
		}
		limit = n
	}
	logs, err := s.fns.FunctionLogs(r.Context(), r.PathValue("name"), q.Get("requestId"), limit)
	s.reply(w, r, http.StatusOK, map[string][]api.LogEntry{"logs": logs}, functionError(err))
}

var errNoFunctions = &requestError{status: http.StatusNotFound, code: api.CodeNotFound, msg: "this server runs no functions"}

// functionError maps the function package's errors to API errors.
func functionError(err error) error {
	var (
		invalid *function.InvalidError
		unknown *function.UnknownError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &invalid):
		return &requestError{msg: invalid.Msg}
	case errors.As(err, &unknown), errors.Is(err, function.ErrNotFound):
		return &requestError{status: http.StatusNotFound, code: api.CodeNotFound, msg: err.Error()}
	case errors.Is(err, function.ErrExists):
		return &requestError{status: http.StatusConflict, code: api.CodeFunctionExists, msg: err.Error() + "; delete it first"}
	}
	return err
}
