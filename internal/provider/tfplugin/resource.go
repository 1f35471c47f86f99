package tfplugin

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/diag"
)

// errNotCalled marks an RPC that did not return a response.
var errNotCalled = errors.New("not called")

// plan is one PlanResourceChange and what it was made from. Values are unmarked.
type plan struct {
	typ          string
	sc           *schema
	meta         []byte // provider_meta (null of its type), when the provider has a schema for it
	prior        cty.Value
	config       cty.Value
	configMarks  []cty.PathValueMarks
	planned      cty.Value
	private      []byte     // the provider's planned private data
	priorPrivate []byte     // the provider's private data of the prior state
	replace      []cty.Path // paths that force replacement and did change
	diags        diag.Diagnostics
}

// providerMeta is the provider_meta value cairn sends: null (cairn has no provider_meta
// blocks), typed when the provider declares a schema for it.
func providerMeta(s *schemas) []byte {
	if s.providerMeta == nil {
		return nil
	}
	b, _ := encode(cty.NullVal(s.providerMeta.ty), s.providerMeta.ty)
	return b
}

// plan plans the change from a stored state to a configuration; destroy plans its deletion.
// Diagnostics of the provider (and of cairn's checks of the plan) are in the result; an error
// is a failed call.
func (p *Provider) plan(ctx context.Context, s *schemas, typ string, state cty.Value, private []byte, config cty.Value, destroy bool) (*plan, error) {
	sc, err := s.lookup(p.name, "", typ)
	if err != nil {
		return nil, err
	}
	pl := &plan{typ: typ, sc: sc, meta: providerMeta(s)}
	pl.prior, pl.priorPrivate, pl.diags, err = p.priorState(ctx, typ, sc, state, private)
	if err != nil || pl.diags.HasErrors() {
		return pl, err
	}
	proposed := cty.NullVal(sc.ty)
	if destroy {
		pl.config = cty.NullVal(sc.ty)
		if !s.caps.planDestroy || pl.prior.IsNull() {
			pl.planned, pl.private = cty.NullVal(sc.ty), pl.priorPrivate
			return pl, nil
		}
	} else {
		var plain cty.Value
		if config != cty.NilVal {
			plain, pl.configMarks = config.UnmarkDeepWithPaths()
		}
		if pl.config, err = sc.block.fit(plain, nil); err != nil {
			pl.diags = pl.diags.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Invalid configuration",
				Detail: fmt.Sprintf("The configuration of %s does not match the provider's schema: %s.", typ, pathless(err))})
			return pl, nil
		}
		if pl.config.IsNull() {
			pl.config = sc.block.emptyValue()
		}
		proposed = sc.block.proposedNew(pl.prior, pl.config)
	}
	req := planRequest{typ: typ, priorPrivate: pl.priorPrivate, providerMeta: pl.meta}
	if req.prior, err = encode(pl.prior, sc.ty); err != nil {
		return nil, err
	}
	if req.proposed, err = encode(proposed, sc.ty); err != nil {
		return nil, err
	}
	if req.config, err = encode(pl.config, sc.ty); err != nil {
		return nil, err
	}
	var res planResult
	if err := p.call(ctx, "PlanResourceChange", func(ctx context.Context) (err error) {
		res, err = p.proto.planResourceChange(ctx, req)
		return err
	}); err != nil {
		return nil, err
	}
	pl.diags = pl.diags.Append(res.diags)
	if pl.diags.HasErrors() {
		return pl, nil
	}
	if pl.planned, err = decode(res.planned, sc.ty); err != nil {
		return nil, fmt.Errorf("provider %s: PlanResourceChange: %w", p.name, err)
	}
	pl.private = res.private
	if !res.legacy {
		for _, pr := range sc.block.checkPlan(pl.prior, pl.config, pl.planned, nil) {
			pl.diags = pl.diags.Append(errorDiag(pr.path, "Provider produced invalid plan",
				fmt.Sprintf("Provider %q planned an invalid value for %s%s: %s.\n\n%s", p.name, typ, dotPath(pr.path), pr.msg, bug(p.name))))
		}
	}
	if !pl.prior.IsNull() && !pl.planned.IsNull() {
		// Only a path that actually changes forces a replacement, as in terraform: providers
		// built on the old SDK list paths whether or not they changed.
		for _, rp := range res.requiresReplace {
			before, err1 := rp.Apply(pl.prior)
			after, err2 := rp.Apply(pl.planned)
			if err1 != nil || err2 != nil || !equalValues(before, after) {
				pl.replace = append(pl.replace, rp)
			}
		}
	}
	return pl, nil
}

// text is the problem as terraform words it: ".triggers: was ..., but now ..." or "Root object
// was present, but now absent".
func (pr problem) text() string {
	if len(pr.path) == 0 {
		return "Root object " + pr.msg
	}
	return dotPath(pr.path) + ": " + pr.msg
}

// dotPath is a path for a message after the resource type: ".triggers", or "" for the object.
func dotPath(p cty.Path) string {
	if len(p) == 0 {
		return ""
	}
	return "." + pathString(p)
}

// replacePaths renders the paths that force a replacement, sorted and without duplicates.
func (pl *plan) replacePaths() []string {
	seen := map[string]bool{}
	var out []string
	for _, rp := range pl.replace {
		s := pathString(rp)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// output marks a state for cairn: sensitive attributes of the schema as secrets, and whatever
// the configuration marked (a sensitive variable) at the same paths.
func (pl *plan) output(v cty.Value) cty.Value {
	if v == cty.NilVal || v.IsNull() {
		return v
	}
	if len(pl.configMarks) > 0 {
		v = v.MarkWithPaths(pl.configMarks)
	}
	return pl.sc.block.mark(v)
}

// apply runs ApplyResourceChange for a plan and returns the new state (unmarked) and the
// provider's private data. When ctx ends during the call, the error is ctx's but a state the
// provider still returned is kept, so the caller can record what was made.
func (p *Provider) apply(ctx context.Context, pl *plan) (cty.Value, []byte, diag.Diagnostics, error) {
	sc := pl.sc
	req := applyRequest{typ: pl.typ, plannedPrivate: pl.private, providerMeta: pl.meta}
	var err error
	if req.prior, err = encode(pl.prior, sc.ty); err != nil {
		return cty.NilVal, nil, nil, err
	}
	if req.planned, err = encode(pl.planned, sc.ty); err != nil {
		return cty.NilVal, nil, nil, err
	}
	if req.config, err = encode(pl.config, sc.ty); err != nil {
		return cty.NilVal, nil, nil, err
	}
	var res applyResult
	rpcErr := errNotCalled
	callErr := p.call(ctx, "ApplyResourceChange", func(ctx context.Context) error {
		res, rpcErr = p.proto.applyResourceChange(ctx, req)
		return rpcErr
	})
	if rpcErr != nil {
		return cty.NilVal, nil, nil, callErr
	}
	ds := res.diags
	state, err := decode(res.state, sc.ty)
	if err != nil {
		return cty.NilVal, nil, ds, fmt.Errorf("provider %s: ApplyResourceChange: %w", p.name, err)
	}
	if !state.IsWhollyKnown() {
		ds = ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Provider returned invalid result object after apply",
			Detail: fmt.Sprintf("After applying a change to %s, the provider %q left unknown values in the new state; they are kept as null. %s", pl.typ, p.name, bug(p.name))})
		state = cty.UnknownAsNull(state)
	}
	if !ds.HasErrors() && !res.legacy {
		for _, pr := range sc.block.checkApplied(pl.planned, state, nil) {
			ds = ds.Append(errorDiag(pr.path, "Provider produced inconsistent result after apply",
				fmt.Sprintf("When applying changes to %s, provider %q produced an unexpected new value: %s.\n\n%s", pl.typ, p.name, pr.text(), bug(p.name))))
		}
	}
	return state, res.private, ds, callErr
}

// idOf is a state's id attribute when it is a known string, else "".
func idOf(state cty.Value) string {
	state = unmark(state)
	if state == cty.NilVal || state.IsNull() || !state.IsKnown() || !state.Type().IsObjectType() || !state.Type().HasAttribute("id") {
		return ""
	}
	id := state.GetAttr("id")
	if !id.IsKnown() || id.IsNull() || !id.Type().Equals(cty.String) {
		return ""
	}
	return id.AsString()
}
