package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/egress"
	"github.com/cairn-dev/cairn/internal/function"
	"github.com/cairn-dev/cairn/internal/provider/customresource"
	"github.com/cairn-dev/cairn/internal/provider/lambda"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// newFunctions starts the function manager on the state store, with code and logs in
// Dir/functions. Processes trust cairn's own CA (caFile) when TLS uses it; url functions
// reach only what policy allows.
func newFunctions(cfg Config, store state.Functions, caFile string, policy *egress.Policy) (*function.Manager, error) {
	var env []string
	if caFile != "" {
		env = append(env, "NODE_EXTRA_CA_CERTS="+caFile, "SSL_CERT_FILE="+caFile)
	}
	m, err := function.New(function.Config{Store: fnStore{store}, Dir: filepath.Join(cfg.Dir, "functions"),
		Region: cfg.Region, AccountID: cfg.AccountID, Env: env, Policy: policy, RunCode: tenantCode(cfg)})
	if err != nil {
		return nil, fmt.Errorf("cannot start functions: %w", err)
	}
	return m, nil
}

// tenantCode says which requests may run code on the server (functions with code,
// provisioners): every one with --allow-tenant-code; otherwise only the server's admin's (its
// own token, or an admin token of tenant default), never a deployer's or another tenant's.
// Inside an operation, the right of the request that started it (tenant.RunCodeFrom). Nil:
// every request.
func tenantCode(cfg Config) func(context.Context) bool {
	if cfg.AllowTenantCode {
		return nil
	}
	return func(ctx context.Context) bool {
		if ok, known := tenant.RunCodeFrom(ctx); known {
			return ok
		}
		return tenant.CallerFrom(ctx).ServerAdmin()
	}
}

// fnStore adapts state.Functions to function.Store.
type fnStore struct{ s state.Functions }

var _ function.Store = fnStore{}

func (f fnStore) PutFunction(ctx context.Context, d function.Definition) error {
	err := f.s.PutFunction(ctx, stored(d))
	if errors.Is(err, state.ErrFunctionExists) {
		return fmt.Errorf("%w: %s", function.ErrExists, d.Name)
	}
	return err
}

func (f fnStore) ReplaceFunction(ctx context.Context, d function.Definition) error {
	err := f.s.ReplaceFunction(ctx, stored(d))
	if errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("%w: %s", function.ErrNotFound, d.Name)
	}
	return err
}

func stored(d function.Definition) state.Function {
	return state.Function{Tenant: d.Tenant, Name: d.Name, Kind: string(d.Kind), URL: d.URL, Handler: d.Handler,
		CodeDir: d.CodeDir, Timeout: d.Timeout, MemoryMB: d.MemoryMB, Concurrency: d.Concurrency, Env: d.Env, CreatedAt: d.CreatedAt,
		Code: d.Code}
}

func (f fnStore) GetFunction(ctx context.Context, tenant, name string) (function.Definition, error) {
	got, err := f.s.GetFunction(ctx, tenant, name)
	if errors.Is(err, state.ErrNotFound) {
		return function.Definition{}, fmt.Errorf("%w: %s", function.ErrNotFound, name)
	}
	return definition(got), err
}

func (f fnStore) ListFunctions(ctx context.Context, tenant string) ([]function.Definition, error) {
	all, err := f.s.ListFunctions(ctx, tenant)
	out := make([]function.Definition, 0, len(all))
	for _, g := range all {
		out = append(out, definition(g))
	}
	return out, err
}

func (f fnStore) DeleteFunction(ctx context.Context, tenant, name string) error {
	err := f.s.DeleteFunction(ctx, tenant, name)
	if errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("%w: %s", function.ErrNotFound, name)
	}
	return err
}

func (f fnStore) FunctionCode(ctx context.Context, tenant, name string) ([]byte, error) {
	code, err := f.s.FunctionCode(ctx, tenant, name)
	if errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", function.ErrNotFound, name)
	}
	return code, err
}

func definition(f state.Function) function.Definition {
	return function.Definition{Tenant: f.Tenant, Name: f.Name, Kind: function.Kind(f.Kind), URL: f.URL, Handler: f.Handler, CodeDir: f.CodeDir,
		Timeout: f.Timeout, MemoryMB: f.MemoryMB, Concurrency: f.Concurrency, Env: f.Env, CreatedAt: f.CreatedAt}
}

// stackFunctions lets the function resources of templates (internal/provider/lambda) keep
// their functions in the manager.
type stackFunctions struct{ m *function.Manager }

var _ lambda.Functions = stackFunctions{}

func (s stackFunctions) definition(f lambda.Function) function.Definition {
	return function.Definition{Name: f.Name, Kind: function.KindOfRuntime(f.Runtime), Handler: f.Handler, Timeout: f.Timeout,
		MemoryMB: f.MemoryMB, Env: f.Env}
}

func (s stackFunctions) CreateFunction(ctx context.Context, f lambda.Function) error {
	_, err := s.m.Create(ctx, s.definition(f), f.Code)
	return functionErr(err)
}

func (s stackFunctions) UpdateFunction(ctx context.Context, f lambda.Function) error {
	_, err := s.m.Update(ctx, s.definition(f), f.Code)
	return functionErr(err)
}

func (s stackFunctions) DeleteFunction(ctx context.Context, name string) error {
	return functionErr(s.m.Delete(ctx, name))
}

// functionErr says in lambda's terms what the manager's sentinel errors mean.
func functionErr(err error) error {
	switch {
	case errors.Is(err, function.ErrExists):
		return fmt.Errorf("%w: %v", lambda.ErrExists, err)
	case errors.Is(err, function.ErrNotFound):
		return fmt.Errorf("%w: %v", lambda.ErrNotFound, err)
	}
	return err
}

// crInvoker lets the custom-resource provider deliver requests to functions.
type crInvoker struct{ m *function.Manager }

var _ customresource.Invoker = crInvoker{}

func (c crInvoker) Resolve(ctx context.Context, token string) (customresource.Func, error) {
	d, err := c.m.Resolve(ctx, token)
	if err != nil {
		return nil, err
	}
	return crFunc{m: c.m, name: d.Name}, nil
}

type crFunc struct {
	m    *function.Manager
	name string
}

func (f crFunc) InvokeAsync(ctx context.Context, payload []byte, ended func(error)) error {
	var done func(function.Result)
	if ended != nil {
		done = func(r function.Result) { ended(r.Err()) }
	}
	_, err := f.m.InvokeAsync(ctx, f.name, payload, done)
	return err
}
