package tfplugin

import (
	"context"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// plan is one PlanResourceChange: prior state and configuration in, planned state out.
type plan struct {
	s       *schema
	prior   cty.Value
	config  cty.Value
	planned cty.Value
	private []byte
	replace []string
	diags   diag.Diagnostics
}

func (p *Provider) plan(ctx context.Context, typ string, prior, config cty.Value, priorPrivate []byte) (*plan, error) {
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	s, err := p.resourceSchema(provider.SchemaResource, typ)
	if err != nil {
		return nil, err
	}
	prior, priv, err := p.priorState(ctx, typ, s, prior, priorPrivate)
	if err != nil {
		return nil, err
	}
	if config == cty.NilVal {
		config = cty.NullVal(s.ty)
	}
	config, err = convert(unmark(config), s.ty)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	pl := &plan{s: s, prior: prior, config: config}
	proposed := s.block.proposedNew(prior, config)
	if config.IsNull() && !p.schemas.planDestroy {
		pl.planned, pl.private = cty.NullVal(s.ty), priv
		return pl, nil
	}
	dvPrior, err1 := encode(prior, s.ty)
	dvProp, err2 := encode(proposed, s.ty)
	dvCfg, err3 := encode(config, s.ty)
	if err := firstErr(err1, err2, err3); err != nil {
		return nil, err
	}
	resp := new(tf6.PlanResourceChange_Response)
	err = p.call(ctx, "PlanResourceChange", &tf6.PlanResourceChange_Request{TypeName: typ, PriorState: dvPrior,
		ProposedNewState: dvProp, Config: dvCfg, PriorPrivate: priv, ClientCapabilities: &tf6.ClientCapabilities{}}, resp)
	if err != nil {
		return nil, err
	}
	pl.diags = diagnostics(resp.Diagnostics)
	if pl.diags.HasErrors() {
		return pl, nil
	}
	if pl.planned, err = decode(resp.PlannedState, s.ty); err != nil {
		return nil, err
	}
	pl.private = resp.PlannedPrivate
	for _, rp := range resp.RequiresReplace {
		pl.replace = append(pl.replace, pathString(rp))
	}
	sort.Strings(pl.replace)
	if !resp.LegacyTypeSystem {
		pl.diags = pl.diags.Append(checkPlanned(typ, s.block, config, pl.planned))
	}
	return pl, nil
}

// checkPlanned reports a planned value that contradicts the configuration for an attribute
// the provider does not compute, as terraform does ("Provider produced invalid plan").
func checkPlanned(typ string, b *block, config, planned cty.Value) diag.Diagnostics {
	var out diag.Diagnostics
	if config.IsNull() || planned.IsNull() || !config.IsKnown() || !planned.IsKnown() {
		return nil
	}
	for name, a := range b.attrs {
		if a.computed {
			continue
		}
		cv, pv := config.GetAttr(name), planned.GetAttr(name)
		if cv.IsWhollyKnown() && pv.IsWhollyKnown() && !cv.Equals(pv).True() {
			out = append(out, diag.Diagnostic{Summary: "Provider produced invalid plan", Path: name,
				Detail: fmt.Sprintf("Provider planned an invalid value for %s.%s: planned value does not match config value. This is a bug in the provider.", typ, name)})
		}
	}
	return out
}

// apply runs ApplyResourceChange for a plan.
func (p *Provider) apply(ctx context.Context, typ string, pl *plan) (cty.Value, []byte, diag.Diagnostics, error) {
	dvPrior, err1 := encode(pl.prior, pl.s.ty)
	dvPlanned, err2 := encode(pl.planned, pl.s.ty)
	dvCfg, err3 := encode(pl.config, pl.s.ty)
	if err := firstErr(err1, err2, err3); err != nil {
		return cty.NilVal, nil, nil, err
	}
	resp := new(tf6.ApplyResourceChange_Response)
	err := p.call(ctx, "ApplyResourceChange", &tf6.ApplyResourceChange_Request{TypeName: typ, PriorState: dvPrior,
		PlannedState: dvPlanned, Config: dvCfg, PlannedPrivate: pl.private}, resp)
	if err != nil {
		return cty.NilVal, nil, nil, err
	}
	ds := diagnostics(resp.Diagnostics)
	state, err := decode(resp.NewState, pl.s.ty)
	if err != nil {
		return cty.NilVal, nil, ds, err
	}
	if !ds.HasErrors() && !resp.LegacyTypeSystem && !state.IsNull() && !pl.planned.IsNull() {
		ds = ds.Append(checkApplied(typ, pl.planned, state))
	}
	return pl.s.block.markSensitive(state), wrapPrivate(pl.s.version, resp.Private), ds, nil
}

// checkApplied reports an applied value that differs from a known planned one ("Provider
// produced inconsistent result after apply").
func checkApplied(typ string, planned, applied cty.Value) diag.Diagnostics {
	var out diag.Diagnostics
	for name := range planned.Type().AttributeTypes() {
		pv, av := planned.GetAttr(name), applied.GetAttr(name)
		if pv.IsWhollyKnown() && av.IsWhollyKnown() && !pv.Equals(av).True() {
			out = append(out, diag.Diagnostic{Summary: "Provider produced inconsistent result after apply", Path: name,
				Detail: fmt.Sprintf("When applying changes to %s, the provider produced an unexpected new value for .%s. This is a bug in the provider.", typ, name)})
		}
	}
	return out
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// idOf is the id attribute of a state, "" when it has none.
func idOf(state cty.Value) string {
	if state == cty.NilVal || state.IsNull() || !state.IsKnown() || !state.Type().IsObjectType() || !state.Type().HasAttribute("id") {
		return ""
	}
	id := unmark(state.GetAttr("id"))
	if !id.IsKnown() || id.IsNull() || !id.Type().Equals(cty.String) {
		return ""
	}
	return id.AsString()
}

// Diff plans the change from the stored state to the configuration.
func (p *Provider) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	pl, err := p.plan(ctx, req.Resource.Type, req.OldOutputs, req.NewProps, req.Private)
	if err != nil {
		return provider.DiffResponse{}, err
	}
	out := provider.DiffResponse{Diagnostics: pl.diags}
	if pl.diags.HasErrors() {
		return out, nil
	}
	out.Planned = pl.s.block.markSensitive(pl.planned)
	out.ReplacePaths = pl.replace
	out.Replace = len(pl.replace) > 0 && !pl.prior.IsNull()
	out.Changed = pl.prior.IsNull() || !pl.planned.IsWhollyKnown() || !pl.planned.Equals(pl.prior).True()
	if out.Changed && !pl.prior.IsNull() {
		for name := range pl.s.ty.AttributeTypes() {
			a, b := pl.prior.GetAttr(name), pl.planned.GetAttr(name)
			if !a.IsWhollyKnown() || !b.IsWhollyKnown() || !a.Equals(b).True() {
				out.ChangedKeys = append(out.ChangedKeys, name)
			}
		}
		sort.Strings(out.ChangedKeys)
	}
	return out, nil
}

// Create plans a create from the configuration and applies it.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	pl, err := p.plan(ctx, req.Resource.Type, cty.NilVal, req.Props, nil)
	if err != nil {
		return provider.CreateResponse{}, err
	}
	if pl.diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: pl.diags}, nil
	}
	state, priv, ds, err := p.apply(ctx, req.Resource.Type, pl)
	if err != nil {
		return provider.CreateResponse{}, err
	}
	return provider.CreateResponse{ID: idOf(state), Outputs: state, Private: priv, Diagnostics: pl.diags.Append(ds)}, nil
}

// Update plans the change from the stored state and applies it in place.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	pl, err := p.plan(ctx, req.Resource.Type, req.OldOutputs, req.NewProps, req.Private)
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	if pl.diags.HasErrors() {
		return provider.UpdateResponse{Diagnostics: pl.diags}, nil
	}
	state, priv, ds, err := p.apply(ctx, req.Resource.Type, pl)
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	id := idOf(state)
	if id == "" {
		id = req.ID
	}
	return provider.UpdateResponse{ID: id, Outputs: state, Private: priv, Diagnostics: pl.diags.Append(ds)}, nil
}

// Delete plans the destroy (when the provider asks for it) and applies it.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	pl, err := p.plan(ctx, req.Resource.Type, req.Outputs, cty.NilVal, req.Private)
	if err != nil {
		return provider.DeleteResponse{}, err
	}
	if pl.diags.HasErrors() {
		return provider.DeleteResponse{Diagnostics: pl.diags}, nil
	}
	if pl.prior.IsNull() {
		return provider.DeleteResponse{}, nil
	}
	_, _, ds, err := p.apply(ctx, req.Resource.Type, pl)
	return provider.DeleteResponse{Diagnostics: ds}, err
}

// Read refreshes a resource; an empty ID means it is gone.
func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	if err := p.start(ctx); err != nil {
		return provider.ReadResponse{}, err
	}
	s, err := p.resourceSchema(provider.SchemaResource, req.Resource.Type)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	prior, priv, err := p.priorState(ctx, req.Resource.Type, s, req.Outputs, req.Private)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	return p.read(ctx, req.Resource.Type, s, prior, priv, req.ID)
}

func (p *Provider) read(ctx context.Context, typ string, s *schema, state cty.Value, priv []byte, fallbackID string) (provider.ReadResponse, error) {
	dv, err := encode(state, s.ty)
	if err != nil {
		return provider.ReadResponse{}, err
	}
	resp := new(tf6.ReadResource_Response)
	if err := p.call(ctx, "ReadResource", &tf6.ReadResource_Request{TypeName: typ, CurrentState: dv, Private: priv,
		ClientCapabilities: &tf6.ClientCapabilities{}}, resp); err != nil {
		return provider.ReadResponse{}, err
	}
	ds := diagnostics(resp.Diagnostics)
	nv, err := decode(resp.NewState, s.ty)
	if err != nil || ds.HasErrors() || nv.IsNull() {
		return provider.ReadResponse{Diagnostics: ds}, err
	}
	id := idOf(nv)
	if id == "" {
		id = fallbackID
	}
	return provider.ReadResponse{ID: id, Outputs: s.block.markSensitive(nv), Private: wrapPrivate(s.version, resp.Private), Diagnostics: ds}, nil
}

// ReadData reads a data source. With unknowns in its configuration (a preview) the result
// is unknown, and the provider is not called, as terraform defers the read to apply.
func (p *Provider) ReadData(ctx context.Context, req provider.ReadDataRequest) (provider.ReadDataResponse, error) {
	if err := p.start(ctx); err != nil {
		return provider.ReadDataResponse{}, err
	}
	s, err := p.resourceSchema(provider.SchemaData, req.Resource.Type)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	cfg, err := convert(unmark(req.Config), s.ty)
	if err != nil {
		return provider.ReadDataResponse{}, fmt.Errorf("%s: %w", req.Resource.Type, err)
	}
	dv, err := encode(cfg, s.ty)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	vresp := new(tf6.ValidateDataResourceConfig_Response)
	if err := p.call(ctx, "ValidateData", &tf6.ValidateDataResourceConfig_Request{TypeName: req.Resource.Type, Config: dv}, vresp); err != nil {
		return provider.ReadDataResponse{}, err
	}
	ds := diagnostics(vresp.Diagnostics)
	if ds.HasErrors() {
		return provider.ReadDataResponse{Diagnostics: ds}, nil
	}
	if !cfg.IsWhollyKnown() {
		return provider.ReadDataResponse{State: cty.UnknownVal(s.ty), Diagnostics: ds}, nil
	}
	resp := new(tf6.ReadDataSource_Response)
	if err := p.call(ctx, "ReadDataSource", &tf6.ReadDataSource_Request{TypeName: req.Resource.Type, Config: dv,
		ClientCapabilities: &tf6.ClientCapabilities{}}, resp); err != nil {
		return provider.ReadDataResponse{}, err
	}
	ds = ds.Append(diagnostics(resp.Diagnostics))
	st, err := decode(resp.State, s.ty)
	if err != nil {
		return provider.ReadDataResponse{}, err
	}
	return provider.ReadDataResponse{State: s.block.markSensitive(st), Diagnostics: ds}, nil
}

// Import adopts an existing object: ImportResourceState, then a read of what it returned.
func (p *Provider) Import(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	if err := p.start(ctx); err != nil {
		return provider.ImportResponse{}, err
	}
	s, err := p.resourceSchema(provider.SchemaResource, req.Resource.Type)
	if err != nil {
		return provider.ImportResponse{}, err
	}
	resp := new(tf6.ImportResourceState_Response)
	if err := p.call(ctx, "ImportResourceState", &tf6.ImportResourceState_Request{TypeName: req.Resource.Type, Id: req.ID,
		ClientCapabilities: &tf6.ClientCapabilities{}}, resp); err != nil {
		return provider.ImportResponse{}, err
	}
	ds := diagnostics(resp.Diagnostics)
	if ds.HasErrors() {
		return provider.ImportResponse{Diagnostics: ds}, nil
	}
	for _, ir := range resp.ImportedResources {
		if ir.TypeName != req.Resource.Type {
			continue
		}
		st, err := decode(ir.State, s.ty)
		if err != nil {
			return provider.ImportResponse{}, err
		}
		r, err := p.read(ctx, req.Resource.Type, s, st, ir.Private, req.ID)
		if err != nil {
			return provider.ImportResponse{}, err
		}
		return provider.ImportResponse{ID: r.ID, Outputs: r.Outputs, Private: r.Private, Diagnostics: ds.Append(r.Diagnostics)}, nil
	}
	return provider.ImportResponse{Diagnostics: ds}, nil
}
