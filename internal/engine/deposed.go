package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// A create-first replacement whose new copy's create fails after making it (Pulumi's init
// errors, where failed creates are kept: UpdatesFailedCreates) leaves two objects. Pulumi keeps
// both: the new one as the resource, with its init errors (the next deploy updates it), and the
// old one marked for deletion (`delete: true`), deleted at the end of the next deploy that
// succeeds. cairn keeps the old one in a row of its own, named by deposedName (terraform's word
// for an old object awaiting deletion): the template never declares that name, so the cleanup
// of the next successful deploy deletes it as it deletes a removed resource, and deleting the
// stack deletes it too.

const deposedMark = template.DeposedMark

// deposedName is the row name of resource name's old object of id, awaiting deletion.
func deposedName(name, id string) string { return name + deposedMark + id }

// logicalName is the resource a row is of: its name, or for a deposed row the resource whose
// old object it holds (the name the provider knows it by).
func logicalName(row string) string {
	if name, _, ok := strings.Cut(row, deposedMark); ok && name != "" {
		return name
	}
	return row
}

// providerName is the name the provider knows row's object by: the resource's, for a deposed
// row of a dialect that makes them (any other name is its own: a Terraform for_each key may
// hold anything).
func (r *run) providerName(row string) string {
	if !r.pol.UpdatesFailedCreates {
		return row
	}
	return logicalName(row)
}

// failedNewCopy ends a create-first replacement of res whose new copy's create (made) failed
// with reason fail after making its object: the new object becomes res's row, a failed create,
// and the old one (prior) is deposed, both in the step's journal entry.
func (r *run) failedNewCopy(ctx context.Context, key, token string, res *template.Resource, prior state.Resource, props cty.Value,
	made provider.CreateResponse, fail string) error {
	row, err := r.row(res, made.ID, props, made.Outputs)
	if err != nil {
		return err
	}
	row.Status, row.StatusReason, row.Private = "CREATE_FAILED", fail, made.Private
	old := prior
	old.Name = deposedName(res.Name, prior.ID)
	old.Protect, old.ProtectUnknown = false, false // the replacement was allowed: deleting the old object finishes it (Pulumi's replacing delete)
	d := detail{Kind: "update", Before: imageOf(prior), After: imageOf(row)}
	if err := r.end(ctx, key, token, true, d, state.Write{Put: &row}, state.Write{Put: &old}); err != nil {
		return err
	}
	reason := fmt.Sprintf("%s. The new object %s is kept as %s with its create failed: the next deploy updates it. "+
		"The old object %s is kept as %s and deleted at the end of the next deploy that succeeds", fail, row.ID, res.Name, prior.ID, old.Name)
	if err := r.event(ctx, res.Name, row.ID, res.Type, "UPDATE_FAILED", reason); err != nil {
		return err
	}
	return &stepFailed{res.Name, fail}
}
