package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

const kindImport = "import"

// Import adopts an existing object as the resource at req.Address of a Terraform-language
// configuration, as terraform import does: the provider reads the object by its id and the
// stack records it; the next deploy plans against it. It holds the stack's lease while it runs.
func (e *Engine) Import(ctx context.Context, stack string, req api.ImportRequest) (api.Resource, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	if err := validStackName(stack); err != nil {
		return api.Resource{}, err
	}
	if req.Address == "" || req.ID == "" {
		return api.Resource{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "import needs a resource address and the id of the object to import")}}
	}
	key := stackKey(ctx, stack)
	prior, err := e.store.GetStack(ctx, key)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return api.Resource{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	if err == nil && !policyOf(prior.Dialect).Importable && prior.Status != "DELETE_COMPLETE" {
		return api.Resource{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"stack %s is a %s stack: import works on Terraform-language stacks", stack, prior.Dialect)}}
	}
	st, ps, diags := e.load(ctx, stack, prior.ID, sourceOf(req.Source), 0)
	if st == nil {
		return api.Resource{}, &ValidationError{Diagnostics: diags}
	}
	defer ps.close()
	if !st.Policy.Importable {
		return api.Resource{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "import works on Terraform-language configurations")}}
	}
	res := st.Resource(req.Address)
	if res == nil || res.Mode != template.Managed {
		return api.Resource{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, req.Address,
			"Configuration for import target does not exist: the configuration for the given import target %s does not exist. "+
				"All target instances must have an associated configuration to be imported.", req.Address)}}
	}
	if err != nil || prior.Status == "DELETE_COMPLETE" {
		source, _ := json.Marshal(req.Source)
		prior = state.Stack{Tenant: tenant.From(ctx), Name: stack, ID: newID(), Dialect: string(st.Dialect), Status: "IMPORT_COMPLETE",
			Template: source, CreatedAt: e.now(), UpdatedAt: e.now()}
		if err := e.store.DeleteStack(ctx, key); err != nil && !errors.Is(err, state.ErrNotFound) {
			return api.Resource{}, err
		}
		if err := e.store.PutStack(ctx, prior); err != nil {
			return api.Resource{}, err
		}
	}
	now := e.now()
	op := state.Operation{ID: newID(), Stack: key, Kind: kindImport, Status: state.Running, Owner: e.o.Owner,
		LeaseExpires: now.Add(e.o.LeaseTTL), StartedAt: now}
	var row state.Resource
	err = e.runOwn(ctx, op, func(run context.Context) (err error) {
		row, err = e.importResource(run, st, ps, prior, op, res, req.ID)
		return err
	})
	if err != nil {
		return api.Resource{}, err
	}
	return api.Resource{LogicalID: row.Name, PhysicalID: row.ID, Type: row.Type, Status: row.Status, UpdatedAt: row.UpdatedAt}, nil
}

// runOwn runs op, an operation that its request runs itself rather than goRun (a cairn
// import, a state push): op is tracked here before it starts (see track), step runs on the
// tracked context, and op is finished as step ended: succeeded, or failed with its error (see
// opError), unless the lease was lost (the engine that took the operation over ends it).
func (e *Engine) runOwn(ctx context.Context, op state.Operation, step func(context.Context) error) error {
	run, untrack := e.track(ctx, op.ID) // before it starts: a Cancel must find it running here
	defer untrack()
	if err := e.store.StartOperation(ctx, op); err != nil {
		return err
	}
	err := step(run)
	status, reason := state.Succeeded, ""
	if err != nil {
		err = opError(run, err)
		status, reason = state.Failed, err.Error()
	}
	if !errors.Is(err, errLeaseLost) { // else the engine that took the operation over ends it
		if ferr := e.store.FinishOperation(context.WithoutCancel(ctx), op.ID, status, reason, e.now()); ferr != nil {
			err = errors.Join(err, fmt.Errorf("cannot finish operation %s: %w", op.ID, ferr))
		}
	}
	e.wake()
	return err
}

func (e *Engine) importResource(ctx context.Context, st *template.Stack, ps *providerSet, stack state.Stack, op state.Operation, res *template.Resource, id string) (state.Resource, error) {
	rows, err := e.store.ListResources(ctx, keyOf(stack))
	if err != nil {
		return state.Resource{}, err
	}
	for _, row := range rows {
		if row.Name == res.Name {
			return state.Resource{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(res.Range, res.Name,
				"Resource already managed by cairn: %s is already in stack %s; to import to this address you must first delete the existing object from the stack", res.Name, stack.Name)}}
		}
	}
	r := &run{e: e, op: op, stack: stack, tmpl: st, ps: ps, sc: newScope(ctx, st), req: opRequest{Kind: kindImport, StackID: stack.ID, Dialect: string(st.Dialect)},
		pol:     st.Policy,
		journal: map[string][]state.JournalEntry{}, base: ctx}
	for _, row := range rows {
		if st.Resource(row.Name) != nil {
			if err := r.sc.setRow(row); err != nil {
				return state.Resource{}, err
			}
		}
	}
	p, err := ps.configured(ctx, r.sc, res.Type, res.Provider)
	if err != nil {
		return state.Resource{}, err
	}
	key := "import/" + res.Name
	token, _, err := r.begin(ctx, key)
	if err != nil {
		return state.Resource{}, err
	}
	row, ds, err := r.importedRow(ctx, p, res, id) // importblocks.go, shared with import blocks
	if err == nil && ds.HasErrors() {
		err = &ValidationError{Diagnostics: locate(ds, res, res.Name)}
	}
	if err == nil && ctx.Err() != nil {
		// Cancelled (or taken over) while the provider read the object: nothing is adopted.
		err = context.Cause(ctx)
	}
	if err != nil {
		if jerr := r.end(ctx, key, token, true, detail{Kind: "import"}); jerr != nil {
			return state.Resource{}, jerr
		}
		return state.Resource{}, err
	}
	if err := r.end(ctx, key, token, false, detail{Kind: "import", After: imageOf(row)}, state.Write{Put: &row}); err != nil {
		return state.Resource{}, err
	}
	return row, r.event(ctx, res.Name, row.ID, res.Type, "IMPORT_COMPLETE", "")
}

// opError is the error that ended an import or a push run under ctx (see Engine.track):
// the user's cancellation or the lost lease when either stopped it, whatever the provider or
// the store said about its cancelled call; err otherwise.
func opError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, errCancelled) || errors.Is(cause, errLeaseLost) {
		return cause
	}
	if errors.Is(err, state.ErrFenced) {
		return fmt.Errorf("%w: %w", errLeaseLost, err)
	}
	return err
}

// oneStepResume is how a server ends an operation of kind, found running after it was killed,
// whose whole effect is one journalled step written in one transaction with its rows (a state
// push, a cairn import): there is nothing to run again, only to record how it ended. Nil for
// the kinds that resume by running (deploy, delete, refresh).
func oneStepResume(kind string) func(*Engine, context.Context, state.Operation) error {
	switch kind {
	case kindPush:
		return (*Engine).resumePush // statepush.go
	case kindImport:
		return (*Engine).resumeImport
	}
	return nil
}

// resumeImport ends a cairn import whose server was killed: the object was adopted (its
// import step ended, the row written with it) or not at all.
func (e *Engine) resumeImport(ctx context.Context, op state.Operation) error {
	entries, err := e.store.ListJournal(ctx, op.ID)
	if err != nil {
		return fmt.Errorf("cannot read journal of operation %s: %w", op.ID, err)
	}
	status, reason := state.Failed, "The server stopped before the import adopted the object: nothing was imported. Run cairn import again."
	for _, je := range entries {
		if strings.HasPrefix(je.Step, "import/") && je.Phase == state.End {
			if status, reason = state.Succeeded, ""; je.Failed {
				status, reason = state.Failed, "The import failed: "+strings.TrimPrefix(je.Step, "import/")+" was not adopted."
			}
		}
	}
	return e.finishOp(ctx, op.ID, status, reason)
}
