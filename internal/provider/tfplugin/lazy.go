package tfplugin

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/internal/provider"
)

// A provider starts its plugin only for a call that needs it. Schemas come from the running
// plugin, else from the disk cache (schemacache.go); a configuration handed over with
// ConfigureLazily is sent just before the first call that needs the plugin. An operation with
// nothing for the provider to do therefore starts no process.

var _ provider.LazyConfigurer = (*Provider)(nil)

// known returns the provider's schemas without starting the plugin when the disk cache has
// them: for decoding and schema versions, which need no call.
func (p *Provider) known(ctx context.Context) (*schemas, error) {
	if s := p.loaded.Load(); s != nil && !p.closed.Load() {
		return s, nil
	}
	if s := p.diskSchemas(0); s != nil && !p.closed.Load() {
		return s, nil
	}
	return p.start(ctx) // schemas need no configuration
}

// diskSchemas is the disk cache's entry, read once; with version > 0, only if the entry was
// read with that protocol version.
func (p *Provider) diskSchemas(version int) *schemas {
	if p.diskPath == "" {
		return nil
	}
	p.diskOnce.Do(func() {
		if s, v := readDiskSchemas(p.diskPath); s != nil {
			p.diskVersion = v
			p.disk.Store(s)
		}
	})
	s := p.disk.Load()
	if s == nil || (version > 0 && p.diskVersion != version) {
		return nil
	}
	return s
}

// storeDisk writes s to the disk cache unless it has a usable entry.
func (p *Provider) storeDisk(s *schemas) {
	if p.diskPath != "" && s.raw != nil && p.diskSchemas(p.proto.version()) == nil {
		writeDiskSchemas(p.diskPath, p.proto.version(), s.raw)
	}
}

// ConfigureLazily implements provider.LazyConfigurer: req is validated and sent (as
// Configure does) before the first call that needs the plugin; its failure fails that call
// and every later one.
func (p *Provider) ConfigureLazily(req provider.ConfigureRequest) {
	p.pending.Store(&req)
}

// ready is start, then the pending configuration if there is one.
func (p *Provider) ready(ctx context.Context) (*schemas, error) {
	s, err := p.start(ctx)
	if err != nil || (p.pending.Load() == nil && !p.cfgFailed.Load()) {
		return s, err
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.sem }()
	if req := p.pending.Load(); req != nil {
		resp, err := p.configure(ctx, s, *req)
		if err != nil && ctx.Err() != nil {
			// The call did not complete: not the configuration's fault, and the plugin never
			// processed it, so the next call sends it again. One the plugin answered stands,
			// whatever happened to ctx since: ConfigureProvider is sent once per process.
			return nil, ctx.Err()
		}
		switch {
		case err != nil:
			p.cfgErr = err
		case resp.Diagnostics.HasErrors():
			p.cfgErr = fmt.Errorf("provider %s: cannot configure: %w", p.name, resp.Diagnostics.Err())
		}
		// The failure is recorded before the pending request is cleared, so that the fast
		// path above never sees "nothing pending, nothing failed" while it is being recorded.
		p.cfgFailed.Store(p.cfgErr != nil)
		p.pending.Store(nil)
	}
	if p.cfgErr != nil {
		return nil, p.cfgErr
	}
	return s, nil
}
