// Package engine runs operations on stacks: Validate, Preview, Deploy (create or update, with
// rollback) and Delete, writing a journal entry before and after every provider call so that
// an operation interrupted by a crash resumes where it stopped. It emits CloudFormation-style
// events. It imports template, plan, dag, provider and state, never server or cli.
package engine

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
)

// Options configure an Engine. Zero values are documented per field.
type Options struct {
	Store     state.Store
	Providers *provider.Registry
	// Region and AccountID fill AWS::Region / ALIYUN::Region and friends; defaults
	// "us-east-1" and "123456789012".
	Region    string
	AccountID string
	// Parallelism bounds concurrent provider calls per operation; default 64.
	Parallelism int
	// Owner names this engine instance in operation leases; default a random id.
	Owner string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// ValidationError carries the diagnostics that stopped a request.
type ValidationError struct{ Diagnostics diag.Diagnostics }

func (e *ValidationError) Error() string { return e.Diagnostics.Err().Error() }

// ErrNotFound is returned (wrapped) when a stack or operation does not exist; it is
// state.ErrNotFound so callers need to know only one.
var ErrNotFound = state.ErrNotFound

var errTodo = errors.New("engine: not implemented yet")

// Engine runs operations. It is safe for concurrent use.
type Engine struct {
	o Options
}

// New returns an engine over o.Store and o.Providers.
func New(o Options) (*Engine, error) { return &Engine{o: o}, nil }

// Validate parses the template and checks every resource with its provider, reporting all
// problems at once. Parameters without a value are treated as unknown.
func (e *Engine) Validate(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error) {
	return api.ValidateResponse{}, errTodo
}

// Preview returns the change set a Deploy of req would apply to stack; it calls providers'
// Check and Diff only. Template problems come back as a *ValidationError.
func (e *Engine) Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
	return api.PreviewResponse{}, errTodo
}

// Deploy starts creating or updating stack and returns the running operation. Template
// problems come back as a *ValidationError, a busy stack as a *state.BusyError.
func (e *Engine) Deploy(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
	return api.Operation{}, errTodo
}

// Delete starts deleting stack and returns the running operation.
func (e *Engine) Delete(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error) {
	return api.Operation{}, errTodo
}

// Operation returns an operation by id.
func (e *Engine) Operation(ctx context.Context, id string) (api.Operation, error) {
	return api.Operation{}, errTodo
}

// Wait blocks until operation id has finished or ctx is done, and returns it.
func (e *Engine) Wait(ctx context.Context, id string) (api.Operation, error) {
	return api.Operation{}, errTodo
}

// Stack describes a stack with its resources, parameters (NoEcho masked) and outputs.
func (e *Engine) Stack(ctx context.Context, name string) (api.Stack, error) {
	return api.Stack{}, errTodo
}

// Stacks lists stack summaries.
func (e *Engine) Stacks(ctx context.Context) ([]api.Stack, error) { return nil, errTodo }

// Events returns the stack's events after seq, oldest first, at most limit (0: all).
func (e *Engine) Events(ctx context.Context, stack string, after int64, limit int) ([]api.Event, error) {
	return nil, errTodo
}

// Notify returns a channel that is closed at the next event of any stack, for long polls.
func (e *Engine) Notify() <-chan struct{} { return nil }

// Resume continues every operation left running by an earlier process, in the background.
func (e *Engine) Resume(ctx context.Context) error { return errTodo }

// Shutdown stops starting provider calls and waits (until ctx is done) for the calls in
// flight; unfinished operations stay running in the store and Resume continues them.
func (e *Engine) Shutdown(ctx context.Context) error { return nil }
