package tfplugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// privateEnvelope is what cairn stores as a resource's opaque Private bytes: the provider's
// own private data, and the schema version the resource's state was written with, which
// terraform keeps in its state file and cairn's state has no other place for.
type privateEnvelope struct {
	Version int64  `json:"v"`
	Private []byte `json:"p,omitempty"`
}

func wrapPrivate(version int64, b []byte) []byte {
	out, _ := json.Marshal(privateEnvelope{Version: version, Private: b})
	return out
}

// unwrapPrivate reads an envelope; ok is false when there is none (state from elsewhere), and
// then the bytes are taken as the provider's own.
func unwrapPrivate(b []byte) (privateEnvelope, bool) {
	var env privateEnvelope
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &env) != nil {
		return privateEnvelope{Private: b}, false
	}
	return env, true
}

// priorState turns a stored state into a value of the provider's current schema, the way
// terraform loads state:
//
//   - written with the current schema version (per the envelope): converted locally — stored
//     JSON loses only collection kinds, which the schema restores — with no RPC;
//   - written with another version, without an envelope, or not convertible (e.g. an attribute
//     the schema no longer has): UpgradeResourceState with the state as RawState JSON and the
//     stored version (the current one when unknown), so the provider migrates it.
//
// Terraform calls UpgradeResourceState for every state it loads; cairn skips the call when
// nothing needs upgrading, which saves one RPC per resource and operation and keeps
// dynamically-typed attributes exact (their JSON form would lose the type).
func (p *Provider) priorState(ctx context.Context, typ string, sc *schema, state cty.Value, private []byte) (cty.Value, []byte, diag.Diagnostics, error) {
	env, ok := unwrapPrivate(private)
	if state == cty.NilVal || state.IsNull() {
		return cty.NullVal(sc.ty), env.Private, nil, nil
	}
	plain := unmark(state)
	if !plain.IsWhollyKnown() {
		return cty.NilVal, nil, nil, fmt.Errorf("provider %s: the stored state of %s is not wholly known", p.name, typ)
	}
	if ok && env.Version == sc.version {
		if v, err := sc.block.fit(plain, nil); err == nil {
			return v, env.Private, nil, nil
		}
	}
	version := sc.version
	if ok {
		version = env.Version
	}
	raw, err := ctyjson.Marshal(plain, plain.Type())
	if err != nil {
		return cty.NilVal, nil, nil, fmt.Errorf("provider %s: cannot encode the stored state of %s: %w", p.name, typ, err)
	}
	var up dynValue
	var ds diag.Diagnostics
	err = p.call(ctx, "UpgradeResourceState", func(ctx context.Context) (err error) {
		up, ds, err = p.proto.upgradeResourceState(ctx, typ, version, raw)
		return err
	})
	if err != nil {
		return cty.NilVal, nil, nil, err
	}
	if ds.HasErrors() {
		return cty.NilVal, nil, ds, nil
	}
	v, err := decode(up, sc.ty)
	if err != nil {
		return cty.NilVal, nil, nil, fmt.Errorf("provider %s: UpgradeResourceState: %w", p.name, err)
	}
	return v, env.Private, ds, nil
}

var _ provider.PrivateState = (*Provider)(nil)

// SplitPrivate implements provider.PrivateState: the envelope's version and data, or the
// current schema version of typ for bytes stored without an envelope.
func (p *Provider) SplitPrivate(ctx context.Context, typ string, private []byte) (int64, []byte, error) {
	env, ok := unwrapPrivate(private)
	if ok {
		return env.Version, env.Private, nil
	}
	s, err := p.known(ctx)
	if err != nil {
		return 0, nil, err
	}
	sc, err := s.lookup("", provider.SchemaResource, typ)
	if err != nil {
		return 0, nil, err
	}
	return sc.version, env.Private, nil
}

// JoinPrivate implements provider.PrivateState.
func (p *Provider) JoinPrivate(schemaVersion int64, own []byte) []byte {
	return wrapPrivate(schemaVersion, own)
}
