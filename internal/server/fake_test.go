package server

import (
	"context"
	"errors"
	"sync"

	"github.com/cairn-dev/cairn/api"
)

// fakeEngine implements Engine with function fields; a nil field answers errNotImplemented.
type fakeEngine struct {
	ValidateFn    func(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error)
	PreviewFn     func(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error)
	DeployFn      func(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error)
	DeleteFn      func(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error)
	CancelFn      func(ctx context.Context, stack string) (api.Operation, error)
	ForceUnlockFn func(ctx context.Context, stack, by string) (api.Operation, error)
	ImportFn      func(ctx context.Context, stack string, req api.ImportRequest) (api.Resource, error)
	RefreshFn     func(ctx context.Context, stack string, req api.RefreshRequest) (api.RefreshResponse, error)
	StacksFn      func(ctx context.Context) ([]api.Stack, error)
	StackFn       func(ctx context.Context, name string) (api.Stack, error)
	OutputsFn     func(ctx context.Context, name string, showSecrets bool) ([]api.Output, error)
	EventsFn      func(ctx context.Context, stack string, after int64, limit int) ([]api.Event, error)
	OperationFn   func(ctx context.Context, id string) (api.Operation, error)
	WaitFn        func(ctx context.Context, id string) (api.Operation, error)

	mu     sync.Mutex
	notify chan struct{}
}

var _ Engine = (*fakeEngine)(nil)

var errNotImplemented = errors.New("fake: not implemented")

func (f *fakeEngine) Validate(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error) {
	if f.ValidateFn == nil {
		return api.ValidateResponse{}, errNotImplemented
	}
	return f.ValidateFn(ctx, req)
}

func (f *fakeEngine) Preview(ctx context.Context, stack string, req api.DeployRequest) (api.PreviewResponse, error) {
	if f.PreviewFn == nil {
		return api.PreviewResponse{}, errNotImplemented
	}
	return f.PreviewFn(ctx, stack, req)
}

func (f *fakeEngine) Deploy(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
	if f.DeployFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.DeployFn(ctx, stack, req)
}

func (f *fakeEngine) Delete(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error) {
	if f.DeleteFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.DeleteFn(ctx, stack, req)
}

func (f *fakeEngine) Cancel(ctx context.Context, stack string) (api.Operation, error) {
	if f.CancelFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.CancelFn(ctx, stack)
}

func (f *fakeEngine) ForceUnlock(ctx context.Context, stack, by string) (api.Operation, error) {
	if f.ForceUnlockFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.ForceUnlockFn(ctx, stack, by)
}

func (f *fakeEngine) Import(ctx context.Context, stack string, req api.ImportRequest) (api.Resource, error) {
	if f.ImportFn == nil {
		return api.Resource{}, errNotImplemented
	}
	return f.ImportFn(ctx, stack, req)
}

func (f *fakeEngine) Stacks(ctx context.Context) ([]api.Stack, error) {
	if f.StacksFn == nil {
		return nil, errNotImplemented
	}
	return f.StacksFn(ctx)
}

func (f *fakeEngine) Stack(ctx context.Context, name string) (api.Stack, error) {
	if f.StackFn == nil {
		return api.Stack{}, errNotImplemented
	}
	return f.StackFn(ctx, name)
}

// Outputs falls back to the outputs of StackFn's stack.
func (f *fakeEngine) Outputs(ctx context.Context, name string, showSecrets bool) ([]api.Output, error) {
	if f.OutputsFn != nil {
		return f.OutputsFn(ctx, name, showSecrets)
	}
	st, err := f.Stack(ctx, name)
	return st.Outputs, err
}

func (f *fakeEngine) Events(ctx context.Context, stack string, after int64, limit int) ([]api.Event, error) {
	if f.EventsFn == nil {
		return nil, errNotImplemented
	}
	return f.EventsFn(ctx, stack, after, limit)
}

func (f *fakeEngine) StackBrief(ctx context.Context, name string) (api.Stack, error) {
	st, err := f.Stack(ctx, name)
	for i := range st.Resources {
		st.Resources[i].Attributes = nil
	}
	return st, err
}

func (f *fakeEngine) LastEvent(ctx context.Context, stack string) (api.Event, bool, error) {
	evs, err := f.Events(ctx, stack, 0, 0)
	if err != nil || len(evs) == 0 {
		return api.Event{}, false, err
	}
	return evs[len(evs)-1], true, nil
}

func (f *fakeEngine) Operation(ctx context.Context, id string) (api.Operation, error) {
	if f.OperationFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.OperationFn(ctx, id)
}

func (f *fakeEngine) Wait(ctx context.Context, id string) (api.Operation, error) {
	if f.WaitFn == nil {
		return api.Operation{}, errNotImplemented
	}
	return f.WaitFn(ctx, id)
}

func (f *fakeEngine) Notify() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.notify == nil {
		f.notify = make(chan struct{})
	}
	return f.notify
}

// fire closes the current Notify channel, as the engine does at every event.
func (f *fakeEngine) fire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.notify != nil {
		close(f.notify)
	}
	f.notify = make(chan struct{})
}

func (f *fakeEngine) Refresh(ctx context.Context, stack string, req api.RefreshRequest) (api.RefreshResponse, error) {
	if f.RefreshFn == nil {
		return api.RefreshResponse{}, errNotImplemented
	}
	return f.RefreshFn(ctx, stack, req)
}

func (f *fakeEngine) PullState(context.Context, string, api.StatePullOptions) ([]byte, error) {
	return nil, errors.New("fake: PullState not set")
}

func (f *fakeEngine) PushState(context.Context, string, api.StatePushRequest) (api.StatePushResponse, error) {
	return api.StatePushResponse{}, errors.New("fake: PushState not set")
}
