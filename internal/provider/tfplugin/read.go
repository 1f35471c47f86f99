package tfplugin

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// Configure validates the provider configuration (PrepareProviderConfig / ValidateProviderConfig)
// and, when it is valid, configures the provider (Configure / ConfigureProvider). A null or
// absent configuration is an empty provider block; unknowns (a preview) are passed on.
func (p *Provider) Configure(ctx context.Context, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.ConfigureResponse{}, err
	}
	return p.configure(ctx, s, req)
}

func (p *Provider) configure(ctx context.Context, s *schemas, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	sc := s.provider
	cfg, ds := configValue(sc, unmark(req.Config), "the provider configuration")
	if ds.HasErrors() {
		return provider.ConfigureResponse{Diagnostics: ds}, nil
	}
	enc, err := encode(cfg, sc.ty)
	if err != nil {
		return provider.ConfigureResponse{}, err
	}
	if err := p.call(ctx, "ValidateProviderConfig", func(ctx context.Context) (err error) {
		ds, err = p.proto.validateProviderConfig(ctx, enc)
		return err
	}); err != nil {
		return provider.ConfigureResponse{}, err
	}
	if ds.HasErrors() {
		return provider.ConfigureResponse{Diagnostics: ds}, nil
	}
	var cds diag.Diagnostics
	if err := p.call(ctx, "ConfigureProvider", func(ctx context.Context) (err error) {
		cds, err = p.proto.configureProvider(ctx, TerraformVersion, enc)
		return err
	}); err != nil {
		return provider.ConfigureResponse{}, err
	}
	return provider.ConfigureResponse{Diagnostics: ds.Append(cds)}, nil
}

// configValue checks a configuration against a schema and brings it to the schema's type; null
// is an empty block.
func configValue(sc *schema, v cty.Value, what string) (cty.Value, diag.Diagnostics) {
	var ds diag.Diagnostics
	for _, pr := range sc.block.conform(v, nil) {
		ds = ds.Append(errorDiag(pr.path, pr.msg, ""))
	}
	if ds.HasErrors() {
		return cty.NilVal, ds
	}
	out, err := sc.block.fit(v, nil)
	if err != nil {
		return cty.NilVal, ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Invalid configuration",
			Detail: fmt.Sprintf("%s does not match the provider's schema: %s.", what, pathless(err))})
	}
	if out.IsNull() {
		out = sc.block.emptyValue()
	}
	return out, nil
}

// Read refreshes a resource with ReadResource, after upgrading its stored state if needed.
// The provider returning no object means the resource is gone: the response's ID is empty.
// When the read fails, ID and Outputs are the request's.
func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	sc, err := s.lookup(p.name, provider.SchemaResource, req.Resource.Type)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	failed := provider.ReadResponse{ID: req.ID, Props: req.Props, Outputs: req.Outputs, Private: req.Private}
	prior, priv, ds, err := p.priorState(ctx, req.Resource.Type, sc, req.Outputs, req.Private)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	if ds.HasErrors() {
		failed.Diagnostics = ds
		return failed, nil
	}
	if prior.IsNull() {
		return provider.ReadResponse{Diagnostics: ds}, nil
	}
	state, newPriv, rds, err := p.read(ctx, s, sc, req.Resource.Type, prior, priv)
	ds = ds.Append(rds)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	if ds.HasErrors() {
		failed.Diagnostics = ds
		return failed, nil
	}
	if state.IsNull() {
		return provider.ReadResponse{Diagnostics: ds}, nil
	}
	id := idOf(state)
	if id == "" {
		id = req.ID
	}
	return provider.ReadResponse{ID: id, Props: req.Props, Outputs: sc.block.mark(state), Private: wrapPrivate(sc.version, newPriv),
		Diagnostics: ds}, nil
}

// read is one ReadResource; the state returned is unmarked.
func (p *Provider) read(ctx context.Context, s *schemas, sc *schema, typ string, state cty.Value, private []byte) (cty.Value, []byte, diag.Diagnostics, error) {
	enc, err := encode(state, sc.ty)
	if err != nil {
		return cty.NilVal, nil, nil, err
	}
	var res readResult
	if err := p.call(ctx, "ReadResource", func(ctx context.Context) (err error) {
		res, err = p.proto.readResource(ctx, readRequest{typ: typ, state: enc, private: private, providerMeta: providerMeta(s)})
		return err
	}); err != nil {
		return cty.NilVal, nil, nil, err
	}
	if res.diags.HasErrors() {
		return cty.NilVal, nil, res.diags, nil
	}
	nv, err := decode(res.state, sc.ty)
	if err != nil {
		return cty.NilVal, nil, nil, fmt.Errorf("provider %s: ReadResource: %w", p.name, err)
	}
	if !nv.IsWhollyKnown() {
		return cty.NilVal, nil, res.diags.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider produced invalid object",
			Detail: fmt.Sprintf("Provider %q returned a state with unknown values while reading %s. %s", p.name, typ, bug(p.name))}), nil
	}
	return nv, res.private, res.diags, nil
}

// Import adopts an existing object: ImportResourceState for the id, then ReadResource of the
// object of the requested type it returned, as terraform import does. ID is the read state's
// id attribute, or the requested id. An object the read does not find is an error.
func (p *Provider) Import(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.ImportResponse{}, err
	}
	typ := req.Resource.Type
	sc, err := s.lookup(p.name, provider.SchemaResource, typ)
	if err != nil {
		return provider.ImportResponse{}, err
	}
	var imported []importedResource
	var ds diag.Diagnostics
	if err := p.call(ctx, "ImportResourceState", func(ctx context.Context) (err error) {
		imported, ds, err = p.proto.importResourceState(ctx, typ, req.ID)
		return err
	}); err != nil {
		return provider.ImportResponse{}, err
	}
	if ds.HasErrors() {
		return provider.ImportResponse{Diagnostics: ds}, nil
	}
	var ir *importedResource
	for i := range imported {
		if imported[i].typ == typ {
			ir = &imported[i]
			break
		}
	}
	if ir == nil {
		return provider.ImportResponse{Diagnostics: ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Import returned no object",
			Detail: fmt.Sprintf("Provider %q returned no object of type %s for the id %q.", p.name, typ, req.ID)})}, nil
	}
	st, err := decode(ir.state, sc.ty)
	if err != nil {
		return provider.ImportResponse{}, fmt.Errorf("provider %s: ImportResourceState: %w", p.name, err)
	}
	state, priv, rds, err := p.read(ctx, s, sc, typ, st, ir.private)
	ds = ds.Append(rds)
	if err != nil {
		return provider.ImportResponse{}, err
	}
	if ds.HasErrors() {
		return provider.ImportResponse{Diagnostics: ds}, nil
	}
	if state.IsNull() {
		return provider.ImportResponse{Diagnostics: ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Cannot import non-existent remote object",
			Detail: fmt.Sprintf("While attempting to import an existing object to %s, the provider detected that no object exists with the given id %q. Only pre-existing objects can be imported; check that the id is correct.", typ, req.ID)})}, nil
	}
	id := idOf(state)
	if id == "" {
		id = req.ID
	}
	return provider.ImportResponse{ID: id, Outputs: sc.block.mark(state), Private: wrapPrivate(sc.version, priv), Diagnostics: ds}, nil
}

// ReadData reads a data source: the configuration is checked against the schema and by the
// provider (ValidateDataSourceConfig / ValidateDataResourceConfig), then read with
// ReadDataSource. A configuration with unknowns (a preview) is not read: as terraform defers
// such a read to apply, the result is the configuration with every attribute it leaves to the
// provider unknown — never wholly known, so the caller knows the read is pending.
func (p *Provider) ReadData(ctx context.Context, req provider.ReadDataRequest) (provider.ReadDataResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	typ := req.Resource.Type
	sc, err := s.lookup(p.name, provider.SchemaData, typ)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	var configMarks []cty.PathValueMarks
	plain := req.Config
	if plain != cty.NilVal {
		plain, configMarks = plain.UnmarkDeepWithPaths()
	}
	cfg, ds := configValue(sc, plain, "the configuration of data source "+typ)
	if ds.HasErrors() {
		return provider.ReadDataResponse{Diagnostics: ds}, nil
	}
	enc, err := encode(cfg, sc.ty)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	if err := p.call(ctx, "ValidateDataResourceConfig", func(ctx context.Context) (err error) {
		ds, err = p.proto.validateDataResourceConfig(ctx, typ, enc)
		return err
	}); err != nil {
		return provider.ReadDataResponse{}, err
	}
	if ds.HasErrors() {
		return provider.ReadDataResponse{Diagnostics: ds}, nil
	}
	output := func(v cty.Value) cty.Value {
		if len(configMarks) > 0 {
			v = v.MarkWithPaths(configMarks)
		}
		return sc.block.mark(v)
	}
	if !cfg.IsWhollyKnown() {
		return provider.ReadDataResponse{State: output(sc.block.proposedNew(cty.UnknownVal(sc.ty), cfg)), Diagnostics: ds}, nil
	}
	var st dynValue
	var rds diag.Diagnostics
	if err := p.call(ctx, "ReadDataSource", func(ctx context.Context) (err error) {
		st, rds, err = p.proto.readDataSource(ctx, typ, enc, providerMeta(s))
		return err
	}); err != nil {
		return provider.ReadDataResponse{}, err
	}
	ds = ds.Append(rds)
	if ds.HasErrors() {
		return provider.ReadDataResponse{Diagnostics: ds}, nil
	}
	state, err := decode(st, sc.ty)
	if err != nil {
		return provider.ReadDataResponse{}, fmt.Errorf("provider %s: ReadDataSource: %w", p.name, err)
	}
	if state.IsNull() || !state.IsWhollyKnown() {
		return provider.ReadDataResponse{Diagnostics: ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider produced invalid object",
			Detail: fmt.Sprintf("Provider %q returned a null or partly unknown object for data source %s. %s", p.name, typ, bug(p.name))})}, nil
	}
	return provider.ReadDataResponse{State: output(state), Diagnostics: ds}, nil
}
