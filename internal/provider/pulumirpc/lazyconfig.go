package pulumirpc

import (
	"context"
	"sync"

	"github.com/cairn-dev/cairn/internal/provider"
)

// A deploy whose resources are all as their last successful apply left them (the dialect's
// SkipsUnchanged, docs/design/004-pulumi-plan.md) needs nothing from the plugin: the engine
// hands over the configuration those resources were applied with through ConfigureLazily, and
// the plugin is started and configured only if some call needs it. Pulumi has no per-resource
// schema versions to upgrade, so stored state is always current (StateCurrent).

var (
	_ provider.LazyConfigurer = (*Lazy)(nil)
	_ provider.StateVersioner = (*Lazy)(nil)
)

// ConfigureLazily implements provider.LazyConfigurer: req is checked and sent (CheckConfig,
// Configure) before the first call that needs the plugin; if it fails, that call and every
// later one fail.
func (l *Lazy) ConfigureLazily(req provider.ConfigureRequest) {
	l.pending.mu.Lock()
	defer l.pending.mu.Unlock()
	l.pending.req = &req
}

// StateCurrent implements provider.StateVersioner: a Pulumi resource's state has no schema
// version; what it was applied with is the plugin version, which the engine compares itself.
func (l *Lazy) StateCurrent(context.Context, string, []byte) bool { return true }

// pendingConfig is a configuration handed over lazily, and the outcome of sending it.
type pendingConfig struct {
	mu  sync.Mutex
	req *provider.ConfigureRequest
	err error
}

// apply sends the pending configuration to p once; its failure stays.
func (c *pendingConfig) apply(ctx context.Context, p *Provider) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if req := c.req; req != nil {
		c.req = nil
		resp, err := p.Configure(ctx, *req)
		if err == nil && resp.Diagnostics.HasErrors() {
			err = resp.Diagnostics.Err()
		}
		c.err = err
	}
	return c.err
}
