package tfplugin

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/diag"
	tf5 "github.com/cairn-dev/cairn/internal/tfplugin5"
)

// conn5 speaks tfplugin5 (terraform 0.12 and later; every provider built with
// terraform-plugin-sdk v2 or terraform-plugin-framework serves it).
type conn5 struct {
	c tf5.ProviderClient
}

func newConn5(cc grpc.ClientConnInterface) *conn5 { return &conn5{c: tf5.NewProviderClient(cc)} }

func (c *conn5) version() int { return 5 }

// callOpts raise gRPC's 4 MiB default to terraform's limit on every call, whatever the
// connection's own defaults: one large state is one message.
var callOpts = []grpc.CallOption{grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage)}

// clientCaps5 is what cairn tells providers it can do: no deferred actions; write-only
// attributes are fine (cairn sends them in config and never stores what the provider nulls).
func clientCaps5() *tf5.ClientCapabilities {
	return &tf5.ClientCapabilities{WriteOnlyAttributesAllowed: true}
}

func dv5(b []byte) *tf5.DynamicValue {
	if b == nil {
		return nil
	}
	return &tf5.DynamicValue{Msgpack: b}
}

func fromDV5(d *tf5.DynamicValue) dynValue {
	if d == nil {
		return dynValue{}
	}
	return dynValue{msgpack: d.Msgpack, json: d.Json}
}

func (c *conn5) getMetadata(ctx context.Context) (metadata, error) {
	r, err := c.c.GetMetadata(ctx, new(tf5.GetMetadata_Request), callOpts...)
	if err != nil {
		return metadata{}, err
	}
	m := metadata{caps: caps5(r.ServerCapabilities), diags: diags5(r.Diagnostics)}
	for _, x := range r.Resources {
		m.resources = append(m.resources, x.TypeName)
	}
	for _, x := range r.DataSources {
		m.data = append(m.data, x.TypeName)
	}
	return m, nil
}

func caps5(c *tf5.ServerCapabilities) serverCaps {
	if c == nil {
		return serverCaps{}
	}
	return serverCaps{planDestroy: c.PlanDestroy, schemaOptional: c.GetProviderSchemaOptional, moveResourceState: c.MoveResourceState}
}

func (c *conn5) getSchemas(ctx context.Context) (*schemas, []byte, error) {
	r, err := c.c.GetSchema(ctx, new(tf5.GetProviderSchema_Request), callOpts...)
	if err != nil {
		return nil, nil, err
	}
	s, err := schemas5(r)
	if err != nil {
		return nil, nil, err
	}
	raw, _ := proto.Marshal(r) // only for the disk cache: nil skips it
	return s, raw, nil
}

// schemas5 converts a GetProviderSchema answer (from the plugin or the disk cache).
func schemas5(r *tf5.GetProviderSchema_Response) (*schemas, error) {
	var err error
	s := &schemas{resources: map[string]*schema{}, data: map[string]*schema{}, caps: caps5(r.ServerCapabilities), diags: diags5(r.Diagnostics)}
	if s.provider, err = schema5(r.Provider); err != nil {
		return nil, fmt.Errorf("provider schema: %w", err)
	}
	if r.ProviderMeta != nil && r.ProviderMeta.Block != nil {
		if s.providerMeta, err = schema5(r.ProviderMeta); err != nil {
			return nil, fmt.Errorf("provider_meta schema: %w", err)
		}
	}
	for name, x := range r.ResourceSchemas {
		if s.resources[name], err = schema5(x); err != nil {
			return nil, fmt.Errorf("resource type %s: %w", name, err)
		}
	}
	for name, x := range r.DataSourceSchemas {
		if s.data[name], err = schema5(x); err != nil {
			return nil, fmt.Errorf("data source %s: %w", name, err)
		}
	}
	if err := addEphemeral(s, r.EphemeralResourceSchemas, schema5); err != nil {
		return nil, err
	}
	return s, nil
}

func schema5(x *tf5.Schema) (*schema, error) {
	if x == nil {
		return newSchema(0, nil), nil
	}
	b, err := block5(x.Block)
	if err != nil {
		return nil, err
	}
	return newSchema(x.Version, b), nil
}

func block5(x *tf5.Schema_Block) (*block, error) {
	b := newBlock()
	if x == nil {
		return b, nil
	}
	for _, a := range x.Attributes {
		ty, err := ctyjson.UnmarshalType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: invalid type %s: %w", a.Name, a.Type, err)
		}
		b.attrs[a.Name] = &attribute{ty: ty, required: a.Required, optional: a.Optional, computed: a.Computed,
			sensitive: a.Sensitive, writeOnly: a.WriteOnly}
	}
	for _, nb := range x.BlockTypes {
		inner, err := block5(nb.Block)
		if err != nil {
			return nil, fmt.Errorf("block %s: %w", nb.TypeName, err)
		}
		n := nesting(nb.Nesting)
		if n < nestSingle || n > nestGroup {
			return nil, fmt.Errorf("block %s: invalid nesting mode %d", nb.TypeName, nb.Nesting)
		}
		b.blocks[nb.TypeName] = &nestedBlock{block: inner, nesting: n, min: int(nb.MinItems), max: int(nb.MaxItems)}
	}
	return b, nil
}

func diags5(in []*tf5.Diagnostic) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range in {
		sev := diag.Error
		if d.Severity == tf5.Diagnostic_WARNING {
			sev = diag.Warning
		}
		out = append(out, diag.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Path: pathString(path5(d.Attribute))})
	}
	return out
}

func path5(p *tf5.AttributePath) cty.Path {
	if p == nil {
		return nil
	}
	var out cty.Path
	for _, s := range p.Steps {
		switch sel := s.Selector.(type) {
		case *tf5.AttributePath_Step_AttributeName:
			out = out.GetAttr(sel.AttributeName)
		case *tf5.AttributePath_Step_ElementKeyString:
			out = out.Index(cty.StringVal(sel.ElementKeyString))
		case *tf5.AttributePath_Step_ElementKeyInt:
			out = out.Index(cty.NumberIntVal(sel.ElementKeyInt))
		}
	}
	return out
}

func (c *conn5) validateProviderConfig(ctx context.Context, config []byte) (diag.Diagnostics, error) {
	// PrepareProviderConfig's prepared_config is ignored, as terraform has since 0.15: providers
	// may no longer change their configuration here.
	r, err := c.c.PrepareProviderConfig(ctx, &tf5.PrepareProviderConfig_Request{Config: dv5(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn5) configureProvider(ctx context.Context, tfVersion string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.Configure(ctx, &tf5.Configure_Request{TerraformVersion: tfVersion, Config: dv5(config), ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn5) validateResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateResourceTypeConfig(ctx, &tf5.ValidateResourceTypeConfig_Request{TypeName: typ, Config: dv5(config),
		ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn5) validateDataResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateDataSourceConfig(ctx, &tf5.ValidateDataSourceConfig_Request{TypeName: typ, Config: dv5(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags5(r.Diagnostics), nil
}

func (c *conn5) upgradeResourceState(ctx context.Context, typ string, version int64, raw []byte) (dynValue, diag.Diagnostics, error) {
	r, err := c.c.UpgradeResourceState(ctx, &tf5.UpgradeResourceState_Request{TypeName: typ, Version: version,
		RawState: &tf5.RawState{Json: raw}}, callOpts...)
	if err != nil {
		return dynValue{}, nil, err
	}
	return fromDV5(r.UpgradedState), diags5(r.Diagnostics), nil
}

func (c *conn5) readResource(ctx context.Context, req readRequest) (readResult, error) {
	r, err := c.c.ReadResource(ctx, &tf5.ReadResource_Request{TypeName: req.typ, CurrentState: dv5(req.state), Private: req.private,
		ProviderMeta: dv5(req.providerMeta), ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return readResult{}, err
	}
	return readResult{state: fromDV5(r.NewState), private: r.Private, diags: diags5(r.Diagnostics)}, nil
}

func (c *conn5) planResourceChange(ctx context.Context, req planRequest) (planResult, error) {
	r, err := c.c.PlanResourceChange(ctx, &tf5.PlanResourceChange_Request{TypeName: req.typ, PriorState: dv5(req.prior),
		ProposedNewState: dv5(req.proposed), Config: dv5(req.config), PriorPrivate: req.priorPrivate,
		ProviderMeta: dv5(req.providerMeta), ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return planResult{}, err
	}
	out := planResult{planned: fromDV5(r.PlannedState), private: r.PlannedPrivate, legacy: r.LegacyTypeSystem, diags: diags5(r.Diagnostics)}
	for _, p := range r.RequiresReplace {
		out.requiresReplace = append(out.requiresReplace, path5(p))
	}
	return out, nil
}

func (c *conn5) applyResourceChange(ctx context.Context, req applyRequest) (applyResult, error) {
	r, err := c.c.ApplyResourceChange(ctx, &tf5.ApplyResourceChange_Request{TypeName: req.typ, PriorState: dv5(req.prior),
		PlannedState: dv5(req.planned), Config: dv5(req.config), PlannedPrivate: req.plannedPrivate,
		ProviderMeta: dv5(req.providerMeta)}, callOpts...)
	if err != nil {
		return applyResult{}, err
	}
	return applyResult{state: fromDV5(r.NewState), private: r.Private, legacy: r.LegacyTypeSystem, diags: diags5(r.Diagnostics)}, nil
}

func (c *conn5) importResourceState(ctx context.Context, typ, id string) ([]importedResource, diag.Diagnostics, error) {
	r, err := c.c.ImportResourceState(ctx, &tf5.ImportResourceState_Request{TypeName: typ, Id: id, ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return nil, nil, err
	}
	var out []importedResource
	for _, ir := range r.ImportedResources {
		out = append(out, importedResource{typ: ir.TypeName, state: fromDV5(ir.State), private: ir.Private})
	}
	return out, diags5(r.Diagnostics), nil
}

func (c *conn5) readDataSource(ctx context.Context, typ string, config, meta []byte) (dynValue, diag.Diagnostics, error) {
	r, err := c.c.ReadDataSource(ctx, &tf5.ReadDataSource_Request{TypeName: typ, Config: dv5(config), ProviderMeta: dv5(meta),
		ClientCapabilities: clientCaps5()}, callOpts...)
	if err != nil {
		return dynValue{}, nil, err
	}
	return fromDV5(r.State), diags5(r.Diagnostics), nil
}

func (c *conn5) stopProvider(ctx context.Context) (string, error) {
	r, err := c.c.Stop(ctx, new(tf5.Stop_Request), callOpts...)
	if err != nil {
		return "", err
	}
	return r.Error, nil
}
