package engine

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
)

// priorSuffix keys, in providerSet.inst, the instance configured with the configuration a
// provider had before it was replaced in this run.
const priorSuffix = " (prior configuration)"

// forDelete returns the provider that deletes t. An object made before this run whose provider
// configuration was replaced in it (provider.ConfigReplacer) is deleted through a second
// instance of the same plugin configured with the earlier configuration, as Pulumi deletes the
// old objects through the old provider; anything else through the run's configured instance.
func (ps *providerSet) forDelete(ctx context.Context, sc template.Scope, t target) (provider.Provider, error) {
	p, err := ps.configured(ctx, sc, t.typ, t.provider)
	if err != nil || t.provider == "" || t.made {
		return p, err
	}
	cr, ok := p.(provider.ConfigReplacer)
	if !ok {
		return p, nil
	}
	prior, ok := cr.PriorConfig()
	if !ok {
		return p, nil
	}
	in, err := ps.priorInstance(t.provider)
	if err != nil {
		return nil, err
	}
	in.once.Do(func() {
		resp, err := in.p.Configure(ctx, prior)
		in.diag, in.err = resp.Diagnostics, err
	})
	switch {
	case in.err != nil:
		return nil, in.err
	case in.diag.HasErrors():
		return nil, fmt.Errorf("cannot configure %s with its configuration before the replacement: %s", t.provider, reasonOf(in.diag.Err()))
	}
	return in.p, nil
}

// priorInstance opens, once, a second instance of the plugin serving addr.
func (ps *providerSet) priorInstance(addr string) (*instance, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if in, ok := ps.inst[addr+priorSuffix]; ok {
		return in, nil
	}
	p, err := ps.openLocked(addr, fmt.Sprintf("provider configuration %s is not present in the template", addr)) // providers.go
	if err != nil {
		return nil, err
	}
	in := &instance{p: p}
	ps.inst[addr+priorSuffix] = in
	return in, nil
}
