package engine

import (
	"context"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// oldInputs are the inputs res's stored object was applied with, for its Check (Pulumi sends
// them as olds); cty.NilVal when there is no object to update (a create, or one a replacement
// upstream destroyed).
func (r *run) oldInputs(res *template.Resource) cty.Value {
	row, ok := r.prior[res.Name]
	if !ok || row.ID == "" || row.Status == "DELETE_COMPLETE" || r.isGone(res.Name) {
		return cty.NilVal
	}
	old, err := value.Unmarshal(row.Props)
	if err != nil || old.IsNull() {
		return cty.NilVal // an undecodable row fails at its Diff, which says why
	}
	return old
}

// recheck is the inputs of res's replacement: where the dialect checks a replacement again
// as a new object (RechecksReplacements), the evaluated properties checked with no olds;
// otherwise props, the inputs checked against the old object. fail is why they are refused.
func (r *run) recheck(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, props cty.Value) (cty.Value, string) {
	if !r.pol.RechecksReplacements {
		return props, ""
	}
	raw, diags := evalBody(ctx, p, schemaKind(res), res.Properties, sc)
	if diags.HasErrors() {
		return cty.NilVal, reasonOf(diags.Err())
	}
	return r.check(ctx, p, res, raw, cty.NilVal)
}
