package pulumirpc

import (
	"context"
	"encoding/base64"
	"fmt"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
)

// Parameterization turns a base plugin (`parameterized` 1.2.3) into the provider of another
// package (`goodbye` 2.0.0), as a package declaration's `parameterization:` asks: Pulumi's engine
// launches the base plugin, calls Parameterize with the declaration's value, and from then on
// the instance serves the new package's tokens (`goodbye:index:Goodbye`,
// `pulumi:providers:goodbye`). One process serves one parameterization: two packages of one
// base plugin are two instances.
type Parameterization struct {
	Name    string // the package it becomes: the namespace of its type tokens
	Version string // that package's version: the "version" configuration key
	Value   []byte // the declaration's value (base64 in the file), opaque to cairn
	Plugin  string // the base plugin's package ("parameterized"), kept in the provider's state
}

// internalKey is where Pulumi keeps the engine's own settings of a provider among its inputs
// (providers.FilterProviderConfig takes it out before CheckConfig, and puts it back after).
const internalKey = "__internal"

// parameterize sends the declaration's value to a freshly launched plugin.
func (p *Provider) parameterize(ctx context.Context, pz *Parameterization) error {
	r, err := p.proc.client.Parameterize(ctx, &pulumirpc.ParameterizeRequest{
		Parameters: &pulumirpc.ParameterizeRequest_Value{Value: &pulumirpc.ParameterizeRequest_ParametersValue{
			Name: pz.Name, Version: pz.Version, Value: pz.Value,
		}},
	})
	if err != nil {
		return p.rpcErr("Parameterize", err)
	}
	if r.GetName() != pz.Name {
		return fmt.Errorf("provider %s: Parameterize made package %q, not %q", p.opts.Package, r.GetName(), pz.Name)
	}
	return nil
}

// schemaRequest asks for the schema of the package this instance serves: the parameterized
// package's, by name and version, once Parameterize made it.
func (p *Provider) schemaRequest() *pulumirpc.GetSchemaRequest {
	if pz := p.opts.Parameterization; pz != nil {
		return &pulumirpc.GetSchemaRequest{SubpackageName: pz.Name, SubpackageVersion: pz.Version}
	}
	return &pulumirpc.GetSchemaRequest{}
}

// schemaKeyPackage names the package of a schema cache entry: a parameterization is its own
// package, whatever binary serves it.
func schemaKeyPackage(opts Options) string {
	if pz := opts.Parameterization; pz != nil {
		return opts.Package + "\x00" + pz.Name + "\x00" + pz.Version + "\x00" + base64.StdEncoding.EncodeToString(pz.Value)
	}
	return opts.Package
}

// withoutInternal takes the engine's own settings out of a provider configuration before the
// plugin sees it, as Pulumi's registry does.
func withoutInternal(config cty.Value) cty.Value {
	if config == cty.NilVal || config.IsNull() || !config.Type().IsObjectType() || !config.Type().HasAttribute(internalKey) {
		return config
	}
	plain, marks := config.Unmark() // a secret configuration as a whole stays one
	attrs := plain.AsValueMap()
	delete(attrs, internalKey)
	return cty.ObjectVal(attrs).WithMarks(marks)
}

// withInternalOf puts back into checked the engine settings sent holds, so that the stored
// inputs of a provider resource carry them as Pulumi's state does.
func withInternalOf(checked, sent cty.Value) cty.Value {
	if sent == cty.NilVal || sent.IsNull() || !sent.Type().IsObjectType() || !sent.Type().HasAttribute(internalKey) ||
		checked == cty.NilVal || checked.IsNull() || !checked.Type().IsObjectType() {
		return checked
	}
	plain, marks := checked.Unmark()
	attrs := plain.AsValueMap()
	if attrs == nil {
		attrs = map[string]cty.Value{}
	}
	attrs[internalKey] = sent.GetAttr(internalKey)
	return cty.ObjectVal(attrs).WithMarks(marks)
}

// withSettings is a provider resource's configuration as Pulumi stores it: the "version" key,
// and for a parameterized package the base plugin, its version and the parameter under
// __internal (providers.SetProviderParameterization), beside what the program put there.
func (p *Provider) withSettings(config cty.Value) cty.Value {
	config = p.withVersion(config)
	pz := p.opts.Parameterization
	if pz == nil || !config.Type().IsObjectType() {
		return config
	}
	config, marks := config.Unmark() // a secret configuration as a whole stays one
	attrs := config.AsValueMap()
	if attrs == nil {
		attrs = map[string]cty.Value{}
	}
	internal := map[string]cty.Value{}
	if in, ok := attrs[internalKey]; ok && !in.IsMarked() && !in.IsNull() && in.IsKnown() && (in.Type().IsObjectType() || in.Type().IsMapType()) {
		internal = in.AsValueMap()
		if internal == nil {
			internal = map[string]cty.Value{}
		}
	}
	version := p.version
	if version == "" {
		version = p.opts.Version
	}
	internal["name"] = cty.StringVal(pz.Plugin)
	internal["version"] = cty.StringVal(version)
	internal["parameterization"] = cty.StringVal(base64.StdEncoding.EncodeToString(pz.Value))
	attrs[internalKey] = cty.ObjectVal(internal)
	return cty.ObjectVal(attrs).WithMarks(marks)
}
