package engine

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// A dialect whose protect flag is kept with each resource (template.Protection, Pulumi's
// protect) differs from terraform's prevent_destroy in three places: a replacement is refused
// only when the stored row was protected too, a resource removed from the template or in a
// stack being deleted still refuses, and a deploy that changes only the flag (or another
// stored option) stores it.

// protects reports whether res may not be replaced, given its stored row (zero when none).
func protects(pol template.DialectPolicy, res *template.Resource, row state.Resource) bool {
	if pol.Protection == nil {
		return res.PreventDestroy
	}
	// unprotecting and replacing in one deploy is allowed; a row stored before the flag was
	// kept takes the template's word
	return res.PreventDestroy && (row.Protect || row.ProtectUnknown)
}

// refusal is err's message, in the dialect's words when err is plan.Decide's refusal to
// replace a protected resource.
func refusal(pol template.DialectPolicy, name string, err error) string {
	var pd *plan.PreventDestroyError
	if pol.Protection != nil && errors.As(err, &pd) {
		return pol.Protection.Refusal(name, true)
	}
	return err.Error()
}

// deleteRefusal is the refusal to delete the protected resource name.
func deleteRefusal(pol template.DialectPolicy, name string) string {
	if pol.Protection != nil {
		return pol.Protection.Refusal(name, false)
	}
	return preventDestroy(name)
}

// protectedRows are the names of rows whose stored protect flag refuses their deletion, among
// those keep selects, sorted; none where the dialect keeps no flag.
func (r *run) protectedRows(keep func(name string) bool) []string {
	if r.pol.Protection == nil {
		return nil
	}
	var out []string
	for name, row := range r.prior {
		if row.Protect && keep(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// refuseRemovals ends a deploy whose removed resources include protected ones: each is
// reported, and none of the removed resources is deleted.
func (r *run) refuseRemovals(ctx context.Context, names []string) error {
	var reasons []string
	for _, name := range names {
		row := r.prior[name]
		reason := deleteRefusal(r.pol, name)
		if err := r.event(ctx, name, row.ID, row.Type, "DELETE_FAILED", reason); err != nil {
			return err
		}
		reasons = append(reasons, reason)
	}
	return r.finish(ctx, "UPDATE_FAILED", strings.Join(reasons, "; "), false)
}

// same keeps res as it is stored; options the row keeps (protect, deletion policy,
// dependencies) are stored anew when the template changed them, as Pulumi's same step records
// the new options.
func (r *run) same(ctx context.Context, sc *scope, res *template.Resource, prior state.Resource) error {
	if r.pol.RollsBack {
		return sc.setRow(prior) // a rollback would not undo them: the template of a rolled-back stack is the old one
	}
	next := prior
	next.Protect, next.DeletionPolicy, next.Deps = res.PreventDestroy, string(res.DeletionPolicy), r.managedDeps(res)
	if next.Protect == prior.Protect && next.DeletionPolicy == prior.DeletionPolicy &&
		(slices.Equal(next.Deps, prior.Deps) || len(next.Deps)+len(prior.Deps) == 0) {
		return sc.setRow(prior)
	}
	key := "options/" + res.Name
	if _, ok := r.ended(key); !ok {
		token, _, err := r.begin(ctx, key)
		if err != nil {
			return err
		}
		if err := r.end(ctx, key, token, false, detail{Kind: "options"}, state.Write{Put: &next}); err != nil {
			return err
		}
	}
	return sc.setRow(next)
}
