package engine

import (
	"context"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// Import blocks of the Terraform language (template.Import): a resource instance that an
// import block targets and the stack does not hold yet is adopted through the provider's
// ImportResourceState and ReadResource, as `cairn import` does, and then planned against its
// configuration like any stored resource. terraform imports while it plans, so a preview
// imports (and stores nothing), and a deploy imports again when its walk reaches the
// resource, each import a journalled step. A target the stack holds makes its import block
// do nothing.

const unknownImportID = `The import block "id" argument depends on resource attributes that cannot be determined until apply, so cairn cannot plan to import this resource.`

// importPending returns the import block of res when a run must import it: res is a managed
// resource of a Terraform-language stack that rows do not hold an object for.
func importPending(st *template.Stack, rows map[string]state.Resource, res *template.Resource) *template.Import {
	if res == nil || res.Mode != template.Managed || len(st.Imports) == 0 {
		return nil
	}
	if row, ok := rows[res.Name]; ok && row.ID != "" {
		return nil // already managed: terraform skips import targets in its state
	}
	return st.Import(res.Name)
}

// importID evaluates an import block's id in sc; an unknown id is an error (terraform's).
func importID(im *template.Import, res *template.Resource, sc template.Scope) (string, diag.Diagnostics) {
	v, ds := im.ID.Eval(sc)
	if ds.HasErrors() {
		return "", ds
	}
	if !v.IsKnown() || v.Type() != cty.String || v.IsNull() {
		return "", ds.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Invalid import id argument", Detail: unknownImportID,
			Range: im.IDRange, Path: res.Name})
	}
	return v.AsString(), ds
}

// importedObject asks the provider for the object id names and returns it as a row for res;
// fail is the reason the import failed ("" when it did not).
func importedObject(ctx context.Context, p provider.Provider, pr provider.Resource, res *template.Resource, id string) (state.Resource, diag.Diagnostics, error) {
	resp, err := p.Import(ctx, provider.ImportRequest{Resource: pr, ID: id})
	if err != nil {
		return state.Resource{}, nil, fmt.Errorf("cannot import %s: %w", res.Name, err)
	}
	if resp.Diagnostics.HasErrors() {
		return state.Resource{}, resp.Diagnostics, nil
	}
	if resp.ID == "" && (resp.Outputs == cty.NilVal || resp.Outputs.IsNull()) {
		return state.Resource{}, resp.Diagnostics.Append(diag.Diagnostic{Severity: diag.Error, Summary: "Cannot import non-existent remote object",
			Detail: fmt.Sprintf("While attempting to import an existing object to %q, the provider detected that no object exists with the given id. "+
				"Only pre-existing objects can be imported; check that the id is correct and that it is associated with the provider's configured region or endpoint, "+
				"or use \"terraform apply\" to create a new remote object for this resource.", res.Name)}), nil
	}
	// The configuration was never applied to the object: its state stands for what it was
	// last applied from, so the plan compares the configuration with it.
	b, err := value.Marshal(resp.Outputs)
	if err != nil {
		return state.Resource{}, nil, fmt.Errorf("cannot encode the imported state of %s: %w", res.Name, err)
	}
	rid := resp.ID
	if rid == "" {
		rid = id
	}
	return state.Resource{Name: res.Name, Type: res.Type, ID: rid, Props: b, Outputs: b, Private: resp.Private,
		Provider: res.Provider, Status: "IMPORT_COMPLETE"}, resp.Diagnostics, nil
}

// planImport imports res for a preview when an import block targets it and the stack does
// not hold it: the imported object becomes res's row in pv.rows, so the change is planned
// against it. It returns the import id ("" when nothing is imported).
func (pv *previewer) planImport(ctx context.Context, res *template.Resource) (string, error) {
	im := importPending(pv.st, pv.rows, res)
	if im == nil {
		return "", nil
	}
	path := resourcePath(pv.st, res)
	id, ds := importID(im, res, pv.sc)
	if ds.HasErrors() {
		return "", &ValidationError{Diagnostics: ds}
	}
	p, err := pv.ps.configured(ctx, pv.sc, res.Type, res.Provider)
	if err != nil {
		return "", err
	}
	row, ds, err := importedObject(ctx, p, pv.e.providerResource(pv.st.Policy, pv.stackName, pv.stackID, res), res, id)
	if err != nil {
		return "", err
	}
	if ds.HasErrors() {
		return "", &ValidationError{Diagnostics: locate(ds, res, path)}
	}
	pv.rows[res.Name] = row
	return id, nil
}

// showImport marks a planned step as an import of id; it returns the details to show. An
// import that changes nothing shows the imported object, as terraform's plan does.
func (pv *previewer) showImport(s *plan.Step, details []api.PropertyChange, id string) []api.PropertyChange {
	if id == "" {
		return details
	}
	s.Importing = id
	if s.Action != plan.Same {
		return details
	}
	s.Action = plan.Import
	st, err := value.Unmarshal(pv.rows[s.Resource].Props)
	if err != nil {
		return details
	}
	s.PhysicalID = pv.rows[s.Resource].ID
	for _, d := range attrChanges(cty.NullVal(cty.DynamicPseudoType), st, nil) {
		d.Before = d.After
		details = append(details, d)
	}
	return details
}

// importOne imports res for a deploy, at its place in the walk (after its provider
// configuration and whatever its id references): a journalled step whose end writes the row.
// A run stopped after the provider's import but before the row was written imports again when
// it resumes (an import only reads, so repeating it is harmless); one stopped after finds the
// row and does not import. It returns the imported row, or the reason the import failed.
func (r *run) importOne(ctx context.Context, sc *scope, p provider.Provider, res *template.Resource, im *template.Import) (state.Resource, string, error) {
	name := res.Name
	id, ds := importID(im, res, sc)
	if ds.HasErrors() {
		fail := reasonOf(ds.Err())
		return state.Resource{}, fail, r.event(ctx, name, "", res.Type, "IMPORT_FAILED", fail)
	}
	key := "import/" + name
	token, resumed, err := r.begin(ctx, key)
	if err != nil {
		return state.Resource{}, "", err
	}
	if !resumed {
		if err := r.event(ctx, name, id, res.Type, "IMPORT_IN_PROGRESS", ""); err != nil {
			return state.Resource{}, "", err
		}
	}
	row, ds, err := r.importedRow(ctx, p, res, id)
	fail, err := r.callFailure(ctx, err, ds)
	if err != nil {
		return state.Resource{}, "", err
	}
	if fail != "" {
		if err := r.end(ctx, key, token, true, detail{Kind: kindImport}); err != nil {
			return state.Resource{}, "", err
		}
		return state.Resource{}, fail, r.event(ctx, name, id, res.Type, "IMPORT_FAILED", fail)
	}
	if err := r.end(ctx, key, token, false, detail{Kind: kindImport, After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return state.Resource{}, "", err
	}
	return row, "", r.event(ctx, name, row.ID, res.Type, "IMPORT_COMPLETE", "")
}

// importedRow is importedObject as a row of the run's stack.
func (r *run) importedRow(ctx context.Context, p provider.Provider, res *template.Resource, id string) (state.Resource, diag.Diagnostics, error) {
	row, ds, err := importedObject(ctx, p, r.resource(res), res, id)
	row.Stack, row.Deps, row.DeletionPolicy, row.UpdatedAt = r.op.Stack, r.managedDeps(res), string(res.DeletionPolicy), r.e.now()
	row.Protect, row.ProtectUnknown = res.PreventDestroy, false
	return row, ds, err
}
