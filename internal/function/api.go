package function

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/cairn-dev/cairn/api"
)

// Service serves the HTTP API's function routes (server.Functions) with a Manager.
type Service struct{ M *Manager }

// CreateFunction creates a function from an API request.
func (s Service) CreateFunction(ctx context.Context, req api.CreateFunctionRequest) (api.Function, error) {
	kind := KindOfRuntime(req.Runtime)
	if req.URL != "" && req.Runtime == "" {
		kind = KindURL
	}
	d, err := s.M.Create(ctx, Definition{Name: req.Name, Kind: kind, URL: req.URL, Handler: req.Handler,
		Timeout: time.Duration(req.TimeoutSeconds) * time.Second, MemoryMB: req.MemoryMB, Concurrency: req.Concurrency,
		Env: req.Environment}, req.Code)
	if err != nil {
		return api.Function{}, err
	}
	return s.wire(d), nil
}

// ListFunctions lists every function.
func (s Service) ListFunctions(ctx context.Context) ([]api.Function, error) {
	ds, err := s.M.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Function, 0, len(ds))
	for _, d := range ds {
		out = append(out, s.wire(d))
	}
	return out, nil
}

// GetFunction describes one function.
func (s Service) GetFunction(ctx context.Context, name string) (api.Function, error) {
	d, err := s.M.Get(ctx, name)
	if err != nil {
		return api.Function{}, err
	}
	return s.wire(d), nil
}

// DeleteFunction deletes one function.
func (s Service) DeleteFunction(ctx context.Context, name string) error { return s.M.Delete(ctx, name) }

// InvokeFunction invokes a function synchronously, or queues it when req.Async.
func (s Service) InvokeFunction(ctx context.Context, name string, req api.InvokeRequest) (api.InvokeResponse, error) {
	if req.Async {
		id, err := s.M.InvokeAsync(ctx, name, req.Payload, nil)
		return api.InvokeResponse{RequestID: id}, err
	}
	r, err := s.M.Invoke(ctx, name, req.Payload)
	if err != nil {
		return api.InvokeResponse{}, err
	}
	resp := api.InvokeResponse{RequestID: r.RequestID, Payload: r.Payload, DurationMs: float64(r.Duration.Microseconds()) / 1000}
	if r.Error != nil {
		resp.Error = &api.FunctionError{Type: r.Error.Type, Message: r.Error.Message}
	}
	if len(resp.Payload) == 0 || !jsonValid(resp.Payload) {
		resp.Payload = marshalString(string(r.Payload)) // a url function may answer anything
	}
	return resp, nil
}

// FunctionLogs returns a function's captured logs.
func (s Service) FunctionLogs(ctx context.Context, name, requestID string, limit int) ([]api.LogEntry, error) {
	es, err := s.M.Logs(ctx, name, requestID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.LogEntry, 0, len(es))
	for _, e := range es {
		out = append(out, api.LogEntry(e))
	}
	return out, nil
}

func (s Service) wire(d Definition) api.Function {
	return api.Function{Name: d.Name, Kind: string(d.Kind), URL: urlOrEmpty(d.URL), Handler: d.Handler,
		TimeoutSeconds: int(d.Timeout / time.Second), MemoryMB: d.MemoryMB, Concurrency: d.Concurrency,
		ARN: d.ARN(s.M.cfg.Region, s.M.cfg.AccountID), EnvironmentKeys: slices.Sorted(maps.Keys(d.Env)), CreatedAt: d.CreatedAt}
}

// urlOrEmpty shows a url function's URL without credentials and query.
func urlOrEmpty(s string) string {
	if s == "" {
		return ""
	}
	return redact(s)
}
