package tfplugin

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/cairn-dev/cairn/internal/diag"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// conn6 speaks tfplugin6 (terraform 1.0 and later): the same lifecycle as tfplugin5 with
// renamed RPCs, plus nested attribute types in schemas.
type conn6 struct {
	c tf6.ProviderClient
}

func newConn6(cc grpc.ClientConnInterface) *conn6 { return &conn6{c: tf6.NewProviderClient(cc)} }

func (c *conn6) version() int { return 6 }

// clientCaps6: see clientCaps5.
func clientCaps6() *tf6.ClientCapabilities {
	return &tf6.ClientCapabilities{WriteOnlyAttributesAllowed: true}
}

func dv6(b []byte) *tf6.DynamicValue {
	if b == nil {
		return nil
	}
	return &tf6.DynamicValue{Msgpack: b}
}

func fromDV6(d *tf6.DynamicValue) dynValue {
	if d == nil {
		return dynValue{}
	}
	return dynValue{msgpack: d.Msgpack, json: d.Json}
}

func (c *conn6) getMetadata(ctx context.Context) (metadata, error) {
	r, err := c.c.GetMetadata(ctx, new(tf6.GetMetadata_Request), callOpts...)
	if err != nil {
		return metadata{}, err
	}
	m := metadata{caps: caps6(r.ServerCapabilities), diags: diags6(r.Diagnostics)}
	for _, x := range r.Resources {
		m.resources = append(m.resources, x.TypeName)
	}
	for _, x := range r.DataSources {
		m.data = append(m.data, x.TypeName)
	}
	return m, nil
}

func caps6(c *tf6.ServerCapabilities) serverCaps {
	if c == nil {
		return serverCaps{}
	}
	return serverCaps{planDestroy: c.PlanDestroy, schemaOptional: c.GetProviderSchemaOptional, moveResourceState: c.MoveResourceState}
}

func (c *conn6) getSchemas(ctx context.Context) (*schemas, []byte, error) {
	r, err := c.c.GetProviderSchema(ctx, new(tf6.GetProviderSchema_Request), callOpts...)
	if err != nil {
		return nil, nil, err
	}
	s, err := schemas6(r)
	if err != nil {
		return nil, nil, err
	}
	raw, _ := proto.Marshal(r) // only for the disk cache: nil skips it
	return s, raw, nil
}

// schemas6 converts a GetProviderSchema answer (from the plugin or the disk cache).
func schemas6(r *tf6.GetProviderSchema_Response) (*schemas, error) {
	var err error
	s := &schemas{resources: map[string]*schema{}, data: map[string]*schema{}, caps: caps6(r.ServerCapabilities), diags: diags6(r.Diagnostics)}
	if s.provider, err = schema6(r.Provider); err != nil {
		return nil, fmt.Errorf("provider schema: %w", err)
	}
	if r.ProviderMeta != nil && r.ProviderMeta.Block != nil {
		if s.providerMeta, err = schema6(r.ProviderMeta); err != nil {
			return nil, fmt.Errorf("provider_meta schema: %w", err)
		}
	}
	for name, x := range r.ResourceSchemas {
		if s.resources[name], err = schema6(x); err != nil {
			return nil, fmt.Errorf("resource type %s: %w", name, err)
		}
	}
	for name, x := range r.DataSourceSchemas {
		if s.data[name], err = schema6(x); err != nil {
			return nil, fmt.Errorf("data source %s: %w", name, err)
		}
	}
	if err := addEphemeral(s, r.EphemeralResourceSchemas, schema6); err != nil {
		return nil, err
	}
	return s, nil
}

func schema6(x *tf6.Schema) (*schema, error) {
	if x == nil {
		return newSchema(0, nil), nil
	}
	b, err := block6(x.Block)
	if err != nil {
		return nil, err
	}
	return newSchema(x.Version, b), nil
}

func block6(x *tf6.Schema_Block) (*block, error) {
	b := newBlock()
	if x == nil {
		return b, nil
	}
	for _, a := range x.Attributes {
		attr, err := attribute6(a)
		if err != nil {
			return nil, err
		}
		b.attrs[a.Name] = attr
	}
	for _, nb := range x.BlockTypes {
		inner, err := block6(nb.Block)
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

func diags6(in []*tf6.Diagnostic) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range in {
		sev := diag.Error
		if d.Severity == tf6.Diagnostic_WARNING {
			sev = diag.Warning
		}
		out = append(out, diag.Diagnostic{Severity: sev, Summary: d.Summary, Detail: d.Detail, Path: pathString(path6(d.Attribute))})
	}
	return out
}

func path6(p *tf6.AttributePath) cty.Path {
	if p == nil {
		return nil
	}
	var out cty.Path
	for _, s := range p.Steps {
		switch sel := s.Selector.(type) {
		case *tf6.AttributePath_Step_AttributeName:
			out = out.GetAttr(sel.AttributeName)
		case *tf6.AttributePath_Step_ElementKeyString:
			out = out.Index(cty.StringVal(sel.ElementKeyString))
		case *tf6.AttributePath_Step_ElementKeyInt:
			out = out.Index(cty.NumberIntVal(sel.ElementKeyInt))
		}
	}
	return out
}

func (c *conn6) validateProviderConfig(ctx context.Context, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateProviderConfig(ctx, &tf6.ValidateProviderConfig_Request{Config: dv6(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

func (c *conn6) configureProvider(ctx context.Context, tfVersion string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ConfigureProvider(ctx, &tf6.ConfigureProvider_Request{TerraformVersion: tfVersion, Config: dv6(config), ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

func (c *conn6) validateResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateResourceConfig(ctx, &tf6.ValidateResourceConfig_Request{TypeName: typ, Config: dv6(config),
		ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

func (c *conn6) validateDataResourceConfig(ctx context.Context, typ string, config []byte) (diag.Diagnostics, error) {
	r, err := c.c.ValidateDataResourceConfig(ctx, &tf6.ValidateDataResourceConfig_Request{TypeName: typ, Config: dv6(config)}, callOpts...)
	if err != nil {
		return nil, err
	}
	return diags6(r.Diagnostics), nil
}

func (c *conn6) upgradeResourceState(ctx context.Context, typ string, version int64, raw []byte) (dynValue, diag.Diagnostics, error) {
	r, err := c.c.UpgradeResourceState(ctx, &tf6.UpgradeResourceState_Request{TypeName: typ, Version: version,
		RawState: &tf6.RawState{Json: raw}}, callOpts...)
	if err != nil {
		return dynValue{}, nil, err
	}
	return fromDV6(r.UpgradedState), diags6(r.Diagnostics), nil
}

func (c *conn6) readResource(ctx context.Context, req readRequest) (readResult, error) {
	r, err := c.c.ReadResource(ctx, &tf6.ReadResource_Request{TypeName: req.typ, CurrentState: dv6(req.state), Private: req.private,
		ProviderMeta: dv6(req.providerMeta), ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return readResult{}, err
	}
	return readResult{state: fromDV6(r.NewState), private: r.Private, diags: diags6(r.Diagnostics)}, nil
}

func (c *conn6) planResourceChange(ctx context.Context, req planRequest) (planResult, error) {
	r, err := c.c.PlanResourceChange(ctx, &tf6.PlanResourceChange_Request{TypeName: req.typ, PriorState: dv6(req.prior),
		ProposedNewState: dv6(req.proposed), Config: dv6(req.config), PriorPrivate: req.priorPrivate,
		ProviderMeta: dv6(req.providerMeta), ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return planResult{}, err
	}
	out := planResult{planned: fromDV6(r.PlannedState), private: r.PlannedPrivate, legacy: r.LegacyTypeSystem, diags: diags6(r.Diagnostics)}
	for _, p := range r.RequiresReplace {
		out.requiresReplace = append(out.requiresReplace, path6(p))
	}
	return out, nil
}

func (c *conn6) applyResourceChange(ctx context.Context, req applyRequest) (applyResult, error) {
	r, err := c.c.ApplyResourceChange(ctx, &tf6.ApplyResourceChange_Request{TypeName: req.typ, PriorState: dv6(req.prior),
		PlannedState: dv6(req.planned), Config: dv6(req.config), PlannedPrivate: req.plannedPrivate,
		ProviderMeta: dv6(req.providerMeta)}, callOpts...)
	if err != nil {
		return applyResult{}, err
	}
	return applyResult{state: fromDV6(r.NewState), private: r.Private, legacy: r.LegacyTypeSystem, diags: diags6(r.Diagnostics)}, nil
}

func (c *conn6) importResourceState(ctx context.Context, typ, id string) ([]importedResource, diag.Diagnostics, error) {
	r, err := c.c.ImportResourceState(ctx, &tf6.ImportResourceState_Request{TypeName: typ, Id: id, ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return nil, nil, err
	}
	var out []importedResource
	for _, ir := range r.ImportedResources {
		out = append(out, importedResource{typ: ir.TypeName, state: fromDV6(ir.State), private: ir.Private})
	}
	return out, diags6(r.Diagnostics), nil
}

func (c *conn6) readDataSource(ctx context.Context, typ string, config, meta []byte) (dynValue, diag.Diagnostics, error) {
	r, err := c.c.ReadDataSource(ctx, &tf6.ReadDataSource_Request{TypeName: typ, Config: dv6(config), ProviderMeta: dv6(meta),
		ClientCapabilities: clientCaps6()}, callOpts...)
	if err != nil {
		return dynValue{}, nil, err
	}
	return fromDV6(r.State), diags6(r.Diagnostics), nil
}

func (c *conn6) stopProvider(ctx context.Context) (string, error) {
	r, err := c.c.StopProvider(ctx, new(tf6.StopProvider_Request), callOpts...)
	if err != nil {
		return "", err
	}
	return r.Error, nil
}

// attribute6 converts an attribute; one with a nested_type is an object (or a list, set or map
// of objects) whose attributes have their own required/optional/computed/sensitive flags.
func attribute6(a *tf6.Schema_Attribute) (*attribute, error) {
	out := &attribute{required: a.Required, optional: a.Optional, computed: a.Computed, sensitive: a.Sensitive, writeOnly: a.WriteOnly}
	if a.NestedType == nil {
		ty, err := ctyjson.UnmarshalType(a.Type)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: invalid type %s: %w", a.Name, a.Type, err)
		}
		out.ty = ty
		return out, nil
	}
	o := &object{attrs: map[string]*attribute{}, nesting: nesting(a.NestedType.Nesting)}
	if o.nesting < nestSingle || o.nesting > nestMap {
		return nil, fmt.Errorf("attribute %s: invalid nesting mode %d", a.Name, a.NestedType.Nesting)
	}
	for _, na := range a.NestedType.Attributes {
		inner, err := attribute6(na)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", a.Name, err)
		}
		o.attrs[na.Name] = inner
	}
	out.nested = o
	out.ty = o.specType().WithoutOptionalAttributesDeep()
	return out, nil
}
