package pulumirpc

import (
	"context"
	"sync"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/proto"
)

// cairn's engine checks every resource when it loads a deploy (to report every invalid
// property at once) and again just before applying it; Pulumi's engine checks each once. The
// second Check of the same inputs gets the first one's answer here instead of a round trip,
// so a create costs the plugin Check + Create as under `pulumi up`. It is also the more
// faithful answer: every Check carries a fresh random seed, and a provider that derives
// auto-names from it would name the object differently on a second call.

// checkMemo holds a plugin's Check answers by request (seed left out).
type checkMemo struct{ m sync.Map }

// check is client.Check, answered from the memo when the same request was answered before.
func (p *Provider) check(ctx context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	seed := req.RandomSeed
	req.RandomSeed = nil
	key, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	req.RandomSeed = seed
	if err != nil {
		return p.proc.client.Check(ctx, req)
	}
	if r, ok := p.checks.m.Load(string(key)); ok {
		return r.(*pulumirpc.CheckResponse), nil
	}
	r, err := p.proc.client.Check(ctx, req)
	if err == nil {
		p.checks.m.Store(string(key), r)
	}
	return r, err
}

// reset forgets every answer: the plugin was configured anew.
func (c *checkMemo) reset() { c.m.Clear() }

// configuredWithLocked reports whether the plugin was configured with config already: the
// engine may ask again for a provider a check started with the same configuration, and a
// Pulumi provider is configured once.
func (p *Provider) configuredWithLocked(config cty.Value) bool {
	if config == cty.NilVal || config.IsNull() {
		config = cty.EmptyObjectVal
	}
	return p.configured && !p.unconfigured && p.configuredAs != cty.NilVal && config.IsWhollyKnown() && p.configuredAs.RawEquals(config)
}
