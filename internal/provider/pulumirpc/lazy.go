package pulumirpc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairn-dev/cairn/internal/provider"
)

// Lazy is a plugin started on its first call, so that opening the providers of a stack whose
// resources need no call starts no process. A launch that failed fails every call the same way.
type Lazy struct {
	opts Options

	once    sync.Once
	p       *Provider
	err     error
	started atomic.Pointer[Provider] // p once launched, for PriorConfig (which never launches)
}

var _ provider.Provider = (*Lazy)(nil)

// Open returns a plugin that Launch starts on first use.
func Open(opts Options) *Lazy { return &Lazy{opts: opts} }

func (l *Lazy) get(ctx context.Context) (*Provider, error) {
	// The launch outlives the first caller's context: a call cancelled while the plugin starts must
	// not leave a failed launch for every later call (the Handshake has its own bound).
	l.once.Do(func() {
		l.p, l.err = Launch(context.WithoutCancel(ctx), l.opts)
		l.started.Store(l.p)
	})
	if l.p == nil && l.err == nil {
		return nil, fmt.Errorf("provider %s: closed", l.opts.Package)
	}
	return l.p, l.err
}

func (l *Lazy) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

func (l *Lazy) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	return p.Check(ctx, req)
}

func (l *Lazy) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.DiffResponse{}, err
	}
	return p.Diff(ctx, req)
}

func (l *Lazy) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.CreateResponse{}, err
	}
	return p.Create(ctx, req)
}

func (l *Lazy) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	return p.Read(ctx, req)
}

func (l *Lazy) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	return p.Update(ctx, req)
}

func (l *Lazy) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.DeleteResponse{}, err
	}
	return p.Delete(ctx, req)
}

// Schema needs no process: Pulumi schemas do not decode blocks (Provider.Schema).
func (l *Lazy) Schema(context.Context, provider.SchemaRequest) (provider.Schema, error) {
	return provider.Schema{}, provider.ErrNotSupported
}

func (l *Lazy) Configure(ctx context.Context, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.ConfigureResponse{}, err
	}
	return p.Configure(ctx, req)
}

func (l *Lazy) ReadData(ctx context.Context, req provider.ReadDataRequest) (provider.ReadDataResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	return p.ReadData(ctx, req)
}

func (l *Lazy) Import(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	p, err := l.get(ctx)
	if err != nil {
		return provider.ImportResponse{}, err
	}
	return p.Import(ctx, req)
}

// Close stops the plugin if it was started; one that never started needs nothing.
// PriorConfig is the launched plugin's (provider.ConfigReplacer); a plugin never launched had
// no DiffConfig, so nothing was replaced.
func (l *Lazy) PriorConfig() (provider.ConfigureRequest, bool) {
	if p := l.started.Load(); p != nil {
		return p.PriorConfig()
	}
	return provider.ConfigureRequest{}, false
}

func (l *Lazy) Close() error {
	l.once.Do(func() {}) // no launch after Close
	if l.p == nil {
		return nil
	}
	return l.p.Close()
}
