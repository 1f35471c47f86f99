package tfplugin

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// Check validates a managed resource's configuration (Props, which may hold unknowns): first
// against the schema (conform), then with the provider's ValidateResourceTypeConfig /
// ValidateResourceConfig. Errors become Failures and warnings Warnings, each with the dotted
// attribute path and "summary: detail". Props is not changed (the response's Props is unset).
func (p *Provider) Check(ctx context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	sc, err := s.lookup(p.name, provider.SchemaResource, req.Resource.Type)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	var resp provider.CheckResponse
	props := unmark(req.Props)
	for _, pr := range sc.block.conform(props, nil) {
		resp.Failures = append(resp.Failures, provider.CheckFailure{Property: pathString(pr.path), Reason: pr.msg})
	}
	if len(resp.Failures) > 0 {
		return resp, nil
	}
	cfg, err := sc.block.fit(props, nil)
	if err != nil {
		return provider.CheckResponse{Failures: []provider.CheckFailure{{Reason: pathless(err)}}}, nil
	}
	if cfg.IsNull() {
		cfg = sc.block.emptyValue()
	}
	enc, err := encode(cfg, sc.ty)
	if err != nil {
		return provider.CheckResponse{}, err
	}
	key := req.Resource.Type + "\x00" + string(enc)
	var ds diag.Diagnostics
	if v, ok := p.validated.Load(key); ok {
		ds = v.(diag.Diagnostics)
	} else {
		if err := p.call(ctx, "ValidateResourceConfig", func(ctx context.Context) (err error) {
			ds, err = p.proto.validateResourceConfig(ctx, req.Resource.Type, enc)
			return err
		}); err != nil {
			return provider.CheckResponse{}, err
		}
		p.validated.Store(key, ds)
	}
	for _, d := range ds {
		f := provider.CheckFailure{Property: d.Path, Reason: reason(d)}
		if d.Severity == diag.Warning {
			resp.Warnings = append(resp.Warnings, f)
		} else {
			resp.Failures = append(resp.Failures, f)
		}
	}
	return resp, nil
}

// Diff plans the change from the stored state (OldOutputs, Private) to the configuration
// (NewProps) with PlanResourceChange, after upgrading the state if needed. Changed says the
// planned state differs from the prior one (unknowns count; marks do not), Replace that a
// changed path forces a replacement (ReplacePaths: every path the provider said requires
// replacement whose value changes, unknown included, as terraform counts them), Planned is
// the planned state with secrets marked — for a replacement, the plan of the new object. With
// no stored state it plans a create.
func (p *Provider) Diff(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	s, err := p.ready(ctx)
	if err != nil {
		return provider.DiffResponse{}, err
	}
	pl, err := p.plan(ctx, s, req.Resource.Type, req.OldOutputs, req.Private, req.NewProps, false)
	if err != nil {
		return provider.DiffResponse{}, err
	}
	resp := provider.DiffResponse{Diagnostics: pl.diags}
	if pl.diags.HasErrors() {
		return resp, nil
	}
	resp.ReplacePaths = pl.replacePaths()
	resp.Replace = len(resp.ReplacePaths) > 0
	planned := pl.planned
	if resp.Replace {
		// As terraform does, plan the replacement object as a create (no prior state), so the
		// planned values are those of the new object: known where the provider can tell them
		// before it exists. Its warnings repeat the first plan's and are dropped.
		create, err := p.plan(ctx, s, req.Resource.Type, cty.NilVal, wrapPrivate(pl.sc.version, pl.private), req.NewProps, false)
		if err != nil {
			return provider.DiffResponse{}, err
		}
		if create.diags.HasErrors() {
			resp.Diagnostics = resp.Diagnostics.Append(create.diags.Errors())
			return resp, nil
		}
		planned = create.planned
	}
	resp.Planned = pl.output(planned)
	resp.Changed = pl.prior.IsNull() || !equalValues(planned, pl.prior)
	if resp.Changed {
		for name := range pl.sc.ty.AttributeTypes() {
			after := planned.GetAttr(name)
			if pl.prior.IsNull() {
				if !after.IsNull() {
					resp.ChangedKeys = append(resp.ChangedKeys, name)
				}
			} else if !equalValues(pl.prior.GetAttr(name), after) {
				resp.ChangedKeys = append(resp.ChangedKeys, name)
			}
		}
		sort.Strings(resp.ChangedKeys)
	}
	return resp, nil
}

// StateCurrent reports whether a stored state (by its Private envelope) has the current
// schema version of typ.
func (p *Provider) StateCurrent(ctx context.Context, typ string, private []byte) bool {
	s, err := p.known(ctx)
	if err != nil {
		return false
	}
	sc, err := s.lookup("", provider.SchemaResource, typ)
	if err != nil {
		return false
	}
	env, ok := unwrapPrivate(private)
	return ok && env.Version == sc.version
}

// withTimeout applies a request's Timeout as a deadline.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// Create plans a create (no prior state; the proposed state is the configuration) and applies
// it. ID is the new state's id attribute. A failed apply that still returned an object
// reports it in ID and Outputs, so the engine records what exists.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	s, err := p.ready(ctx)
	if err != nil {
		return provider.CreateResponse{}, err
	}
	pl, err := p.plan(ctx, s, req.Resource.Type, cty.NilVal, nil, req.Props, false)
	if err != nil || pl.diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: planDiags(pl)}, err
	}
	state, priv, ds, err := p.apply(ctx, pl)
	resp := provider.CreateResponse{Diagnostics: pl.diags.Append(ds)}
	if state == cty.NilVal {
		return resp, err
	}
	if state.IsNull() {
		if !ds.HasErrors() && err == nil {
			resp.Diagnostics = resp.Diagnostics.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider produced null object",
				Detail: fmt.Sprintf("Provider %q returned no object after creating %s, and no error. %s", p.name, pl.typ, bug(p.name))})
		}
		return resp, err
	}
	resp.ID, resp.Outputs, resp.Private = idOf(state), pl.output(state), wrapPrivate(pl.sc.version, priv)
	return resp, err
}

func planDiags(pl *plan) diag.Diagnostics {
	if pl == nil {
		return nil
	}
	return pl.diags
}

// Update plans the change from the stored state to the new configuration and applies it in
// place. A plan that changes nothing is not applied. A plan that needs a replacement is an
// error (the engine replaces through Diff's Replace; an in-place apply would be wrong). ID is
// the new state's id, or the request's when the state has none.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	s, err := p.ready(ctx)
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	pl, err := p.plan(ctx, s, req.Resource.Type, req.OldOutputs, req.Private, req.NewProps, false)
	if err != nil || pl.diags.HasErrors() {
		return provider.UpdateResponse{Diagnostics: planDiags(pl)}, err
	}
	id := func(v cty.Value) string {
		if id := idOf(v); id != "" {
			return id
		}
		return req.ID
	}
	if paths := pl.replacePaths(); len(paths) > 0 {
		return provider.UpdateResponse{Diagnostics: pl.diags.Append(diag.Diagnostic{Severity: diag.Error,
			Summary: "Resource must be replaced",
			Detail: fmt.Sprintf("%s cannot be updated in place: the provider requires replacing it because of changes to %s.",
				pl.typ, strings.Join(paths, ", "))})}, nil
	}
	if !pl.prior.IsNull() && equalValues(pl.planned, pl.prior) {
		return provider.UpdateResponse{ID: id(pl.prior), Outputs: pl.output(pl.prior), Private: wrapPrivate(pl.sc.version, pl.priorPrivate),
			Diagnostics: pl.diags}, nil
	}
	state, priv, ds, err := p.apply(ctx, pl)
	resp := provider.UpdateResponse{Diagnostics: pl.diags.Append(ds)}
	if state == cty.NilVal {
		return resp, err
	}
	if state.IsNull() {
		// A failed update with no object keeps the prior one, as terraform does; a successful
		// one without an object is a provider bug.
		if !ds.HasErrors() && err == nil {
			resp.Diagnostics = resp.Diagnostics.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider produced null object",
				Detail: fmt.Sprintf("Provider %q returned no object after updating %s, and no error. %s", p.name, pl.typ, bug(p.name))})
		}
		state, priv = pl.prior, pl.priorPrivate
	}
	resp.ID, resp.Outputs, resp.Private = id(state), pl.output(state), wrapPrivate(pl.sc.version, priv)
	return resp, err
}

// Delete plans the destroy when the provider asks for it (plan_destroy: proposed and config
// null) and applies it with a null planned state. An object the provider still returns after
// a successful destroy is reported as an error.
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	s, err := p.ready(ctx)
	if err != nil {
		return provider.DeleteResponse{}, err
	}
	pl, err := p.plan(ctx, s, req.Resource.Type, req.Outputs, req.Private, cty.NilVal, true)
	if err != nil || pl.diags.HasErrors() {
		return provider.DeleteResponse{Diagnostics: planDiags(pl)}, err
	}
	if pl.prior.IsNull() {
		return provider.DeleteResponse{Diagnostics: pl.diags}, nil
	}
	state, _, ds, err := p.apply(ctx, pl)
	resp := provider.DeleteResponse{Diagnostics: pl.diags.Append(ds)}
	if err == nil && !ds.HasErrors() && state != cty.NilVal && !state.IsNull() {
		resp.Diagnostics = resp.Diagnostics.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider returned invalid result object after apply",
			Detail: fmt.Sprintf("After deleting %s, provider %q returned a non-null object. %s", pl.typ, p.name, bug(p.name))})
	}
	return resp, err
}
