package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
	"github.com/cairn-dev/cairn/internal/tfstate"
	"github.com/cairn-dev/cairn/internal/value"
)

const kindPush = "push"

// PushState adopts a terraform state as the resources of a Terraform-language stack, so that
// the configuration in req.Source, previewed or deployed on it, finds nothing to change and
// calls no provider to create or update anything. The configuration maps the state's provider
// configurations to its own; a state whose providers or resource types it cannot serve is
// refused. The stack's resources and its row are replaced by the state's in one transaction,
// under the stack's lease: a stack with a running operation is refused (*state.BusyError), and
// a server killed in the middle leaves the stack as it was or the state adopted whole (the
// operation is finished when a server resumes it, see resumePush).
func (e *Engine) PushState(ctx context.Context, stack string, req api.StatePushRequest) (api.StatePushResponse, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	if err := validStackName(stack); err != nil {
		return api.StatePushResponse{}, err
	}
	invalid := func(format string, args ...any) error {
		return &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", format, args...)}}
	}
	key := stackKey(ctx, stack)
	prior, err := e.store.GetStack(ctx, key)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return api.StatePushResponse{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	fresh := err != nil || prior.Status == "DELETE_COMPLETE"
	if pol := policyOf(prior.Dialect); !fresh && !pol.StateFiles && pol.StateFormat == nil {
		return api.StatePushResponse{}, invalid("stack %s is a %s stack, which has no state file format", stack, pol.Name)
	}
	if prior.Operation != "" {
		if op, err := e.store.GetOperation(ctx, prior.Operation); err == nil && op.Status == state.Running {
			return api.StatePushResponse{}, &state.BusyError{Stack: stack, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
		}
	}
	if req.Source.Files == nil {
		return api.StatePushResponse{}, invalid("state push needs the configuration the state belongs to")
	}
	st, ps, diags := e.load(ctx, stack, prior.ID, sourceOf(req.Source), 0)
	if st == nil {
		return api.StatePushResponse{}, &ValidationError{Diagnostics: diags}
	}
	defer ps.close()
	if !fresh && policyOf(prior.Dialect).Name != st.Policy.Name {
		return api.StatePushResponse{}, invalid("stack %s is a %s stack and the configuration is %s", stack, policyOf(prior.Dialect).Name, st.Policy.Name)
	}
	var (
		rows    []state.Resource
		outputs []byte
		ident   tfIdentity
	)
	switch {
	case st.Policy.StateFormat != nil:
		if rows, outputs, err = formatRows(ctx, st, req); err != nil {
			return api.StatePushResponse{}, invalid("%s", err)
		}
		ident.Format = st.Policy.StateFormat.Name()
	case st.Policy.StateFiles:
		tfs, err := tfstate.Decode(req.State)
		if err != nil {
			return api.StatePushResponse{}, invalid("%s", err)
		}
		var diags diag.Diagnostics
		if rows, diags = adoptRows(ctx, st, ps, tfs); diags.HasErrors() {
			return api.StatePushResponse{}, &ValidationError{Diagnostics: diags}
		}
		if outputs, err = pushedOutputs(st, tfs); err != nil {
			return api.StatePushResponse{}, invalid("%s", err)
		}
		ident.Lineage, ident.Serial = tfs.Lineage, tfs.Serial
	default:
		return api.StatePushResponse{}, invalid("a %s configuration has no state file format to push", st.Policy.Name)
	}
	source, err := json.Marshal(req.Source)
	if err != nil {
		return api.StatePushResponse{}, fmt.Errorf("cannot encode the configuration: %w", err)
	}
	// The stack keeps an id of its own: the state's lineage is kept beside it (TFState), or
	// two stacks pushed the same state would share one id.
	row := state.Stack{Tenant: tenant.From(ctx), Name: stack, ID: prior.ID, Dialect: string(st.Dialect), Status: "IMPORT_COMPLETE",
		Template: source, Outputs: outputs, CreatedAt: prior.CreatedAt, UpdatedAt: e.now()}
	if fresh {
		row.ID, row.CreatedAt = e.stackID(stack, st.Policy), e.now()
		if prior.Name != "" { // a deleted stack: the push makes it anew, as a deploy would
			if err := e.store.DeleteStack(ctx, key); err != nil && !errors.Is(err, state.ErrNotFound) {
				return api.StatePushResponse{}, fmt.Errorf("cannot replace stack %s: %w", stack, err)
			}
		}
	}
	body, err := json.Marshal(opRequest{Kind: kindPush, StackID: row.ID, Dialect: row.Dialect})
	if err != nil {
		return api.StatePushResponse{}, fmt.Errorf("cannot encode operation: %w", err)
	}
	now := e.now()
	op := state.Operation{ID: newID(), Stack: key, Kind: kindPush, Status: state.Running, Request: body, Owner: e.o.Owner,
		LeaseExpires: now.Add(e.o.LeaseTTL), StartedAt: now}
	if err := e.runOwn(ctx, op, func(run context.Context) error { return e.adopt(run, op, row, rows, ident) }); err != nil {
		return api.StatePushResponse{}, err
	}
	return api.StatePushResponse{Stack: stack, Lineage: ident.Lineage, Serial: ident.Serial, Resources: len(rows)}, nil
}

// pushStep is the journal step of a push: its end entry writes the rows and the stack row.
const pushStep = "push/state"

// tfIdentity is the terraform state identity a stack keeps (state.Stack.TFState): the lineage
// and serial of the state last pushed, and the stack's last event before the push. A pull
// writes the lineage, and the serial plus the events since (lineage).
type tfIdentity struct {
	Lineage  string `json:"lineage"`
	Serial   uint64 `json:"serial"`
	EventSeq int64  `json:"eventSeq"`
	// Format names the dialect's own state format a push adopted (policy.StateFormat), ""
	// for a terraform state.
	Format string `json:"format,omitempty"`
}

// adopt writes the adopted rows in place of the stack's, with the stack row, in one journal
// entry (one transaction), then records the event (runOwn finishes the operation).
func (e *Engine) adopt(ctx context.Context, op state.Operation, row state.Stack, rows []state.Resource, ident tfIdentity) error {
	old, err := e.store.ListResources(ctx, op.Stack)
	if err != nil {
		return fmt.Errorf("cannot read resources of stack %s: %w", row.Name, err)
	}
	seq, err := e.store.LastEventSeq(ctx, op.Stack)
	if err != nil {
		return err
	}
	ident.EventSeq = seq
	if row.TFState, err = json.Marshal(ident); err != nil {
		return fmt.Errorf("cannot encode the state's lineage: %w", err)
	}
	keep := map[string]bool{}
	writes := make([]state.Write, 0, len(rows)+len(old)+1)
	for i := range rows {
		rows[i].Stack, rows[i].UpdatedAt = op.Stack, e.now()
		keep[rows[i].Name] = true
		writes = append(writes, state.Write{Put: &rows[i]})
	}
	for _, r := range old {
		if !keep[r.Name] {
			writes = append(writes, state.Write{Delete: r.Name})
		}
	}
	writes = append(writes, state.Write{Stack: &row})
	detail, err := json.Marshal(map[string]any{"kind": kindPush, "lineage": ident.Lineage, "serial": ident.Serial, "format": ident.Format, "resources": len(rows)})
	if err != nil {
		return fmt.Errorf("cannot encode journal detail: %w", err)
	}
	je := state.JournalEntry{Operation: op.ID, Stack: op.Stack, Fence: e.o.Owner, Step: pushStep, Phase: state.End, Detail: detail, At: e.now()}
	if cancelled(ctx) {
		return errCancelled
	}
	if _, err := e.store.Append(ctx, je, writes...); err != nil {
		return fmt.Errorf("cannot write the resources of stack %s: %w", row.Name, err)
	}
	return e.pushed(context.WithoutCancel(ctx), op, row)
}

// pushed records the event of a push whose state is adopted, unless a killed server wrote it
// already.
func (e *Engine) pushed(ctx context.Context, op state.Operation, row state.Stack) error {
	var id tfIdentity
	if err := json.Unmarshal(row.TFState, &id); err != nil {
		return fmt.Errorf("cannot decode the state's lineage of stack %s: %w", row.Name, err)
	}
	events, err := e.store.ListEvents(ctx, op.Stack, id.EventSeq, 0)
	if err != nil {
		return fmt.Errorf("cannot read events of stack %s: %w", row.Name, err)
	}
	recorded := false
	for _, ev := range events {
		recorded = recorded || (ev.Operation == op.ID && ev.LogicalID == row.Name)
	}
	if !recorded {
		reason := fmt.Sprintf("Adopted a terraform state: lineage %s serial %d", id.Lineage, id.Serial)
		if id.Format != "" {
			reason = "Adopted " + id.Format
		}
		_, err := e.store.AppendEvent(ctx, state.Event{Stack: op.Stack, Operation: op.ID, LogicalID: row.Name, PhysicalID: row.ID,
			Type: stackType(row.Dialect), Status: row.Status, At: e.now(), Reason: reason})
		if err != nil {
			return fmt.Errorf("cannot record event: %w", err)
		}
	}
	return nil
}

// resumePush ends a push whose server was killed: the state was adopted whole (the journal
// has its entry) or not at all, so there is nothing to run again.
func (e *Engine) resumePush(ctx context.Context, op state.Operation) error {
	entries, err := e.store.ListJournal(ctx, op.ID)
	if err != nil {
		return fmt.Errorf("cannot read journal of operation %s: %w", op.ID, err)
	}
	for _, je := range entries {
		if je.Step == pushStep && je.Phase == state.End {
			row, err := e.store.GetStack(ctx, op.Stack)
			if err != nil {
				return fmt.Errorf("cannot read stack %s: %w", op.Stack, err)
			}
			if err := e.pushed(ctx, op, row); err != nil {
				return err
			}
			return e.finishOp(ctx, op.ID, state.Succeeded, "")
		}
	}
	reason := "The server stopped before the push adopted the state: the stack was left as it was. Push the state again."
	return e.finishOp(ctx, op.ID, state.Failed, reason)
}

// adoptRows turns the managed resource instances of a terraform state into resource rows of
// st, checking every provider configuration and resource type against the configuration and
// its providers. Data sources are left out: every operation reads them again.
func adoptRows(ctx context.Context, st *template.Stack, ps *providerSet, tfs *tfstate.State) ([]state.Resource, diag.Diagnostics) {
	var diags diag.Diagnostics
	fail := func(format string, args ...any) { diags = diags.Append(diag.Errorf(diag.Range{}, "", format, args...)) }
	var rows []state.Resource
	configOf := map[string][]string{} // config address -> instance names, for dependencies
	deps := map[string][]string{}
	for _, r := range tfs.Resources {
		if r.Mode != tfstate.Managed {
			continue
		}
		pa, err := tfstate.ParseProvider(r.Provider)
		if err != nil {
			fail("%s.%s: %s", r.Type, r.Name, err)
			continue
		}
		paddr, ok := localProvider(st, pa)
		if !ok {
			fail("Provider configuration not present: %s.%s in the state is managed by %s, which the configuration does not declare; "+
				"add its provider to required_providers (and a provider block for an alias), or remove the resource from the state", r.Type, r.Name, r.Provider)
			continue
		}
		p, err := ps.lookup(r.Type, paddr)
		if err != nil {
			fail("%s.%s: %s", r.Type, r.Name, err)
			continue
		}
		schema, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: r.Type})
		if err != nil {
			if errors.Is(err, provider.ErrUnknownType) {
				fail("Invalid resource type: the state holds %s.%s, but provider %s has no resource type %q", r.Type, r.Name, pa.Source, r.Type)
			} else {
				fail("cannot read the schema of %s from %s: %s", r.Type, pa.Source, err)
			}
			continue
		}
		for _, in := range r.Instances {
			a := tfstate.Addr{Module: r.Module, Mode: tfstate.Managed, Type: r.Type, Name: r.Name, Key: tfstate.NormalizeKey(in.IndexKey)}
			name := a.String()
			if in.Deposed != "" {
				fail("%s has a deposed object (%s) left by an interrupted create_before_destroy replacement: run terraform apply to finish it before pushing", name, in.Deposed)
				continue
			}
			if in.Attributes == nil {
				fail("%s has no attributes (a state of terraform 0.11 or older): run terraform apply with terraform 1.x first", name)
				continue
			}
			row, err := adoptRow(p, schema, paddr, r.Type, name, in)
			if err != nil {
				fail("%s: %s", name, err)
				continue
			}
			if res := st.Resource(name); res != nil {
				if res.Type != r.Type {
					fail("%s in the state is a %s, the configuration declares a %s", name, r.Type, res.Type)
					continue
				}
				if res.Provider != paddr {
					fail("%s in the state is managed by %s, the configuration gives it %s", name, r.Provider, res.Provider)
					continue
				}
				row.DeletionPolicy, row.Protect, row.ProtectUnknown = string(res.DeletionPolicy), res.PreventDestroy, false
				for _, d := range res.DependsOn {
					if dr := st.Resource(d); dr != nil && dr.Mode == template.Managed {
						row.Deps = append(row.Deps, d)
					}
				}
			} else {
				deps[name] = in.Dependencies
			}
			configOf[a.Config()] = append(configOf[a.Config()], name)
			rows = append(rows, row)
		}
	}
	for i := range rows { // resources the configuration no longer has: their state's dependencies
		for _, d := range deps[rows[i].Name] {
			rows[i].Deps = append(rows[i].Deps, configOf[d]...)
		}
		sort.Strings(rows[i].Deps)
	}
	return rows, diags
}

// adoptRow is one state instance as a resource row. The state is the object's configuration
// as far as cairn knows (as after an import): the next deploy plans the configuration
// against it, and the provider finds nothing to change when terraform applied the same.
func adoptRow(p provider.Provider, schema provider.Schema, paddr, typ, name string, in tfstate.Instance) (state.Resource, error) {
	v, err := ctyjson.Unmarshal(in.Attributes, schema.ImpliedType)
	if err != nil {
		// Written with another schema version: kept as it is, the provider upgrades it.
		if v, err = value.FromJSON(in.Attributes); err != nil {
			return state.Resource{}, fmt.Errorf("cannot decode its attributes: %w", err)
		}
	}
	paths, err := tfstate.UnmarshalPaths(in.SensitiveAttributes)
	if err != nil {
		return state.Resource{}, err
	}
	marks := make([]cty.PathValueMarks, 0, len(paths))
	for _, p := range paths {
		marks = append(marks, cty.PathValueMarks{Path: p, Marks: cty.NewValueMarks(value.Sensitive)})
	}
	if schema.Unknown != cty.NilVal { // the schema's sensitive attributes, which older states do not list
		_, pvm := schema.Unknown.UnmarkDeepWithPaths()
		marks = append(marks, pvm...)
	}
	v = markPaths(v, marks)
	b, err := value.Marshal(v)
	if err != nil {
		return state.Resource{}, fmt.Errorf("cannot encode its attributes: %w", err)
	}
	id := ""
	if idv := idOf(unmarked(v), ""); idv.IsKnown() && !idv.IsNull() {
		id = idv.AsString()
	}
	if id == "" {
		id = newID()
	}
	private := in.Private
	if pst, ok := p.(provider.PrivateState); ok {
		private = pst.JoinPrivate(int64(in.SchemaVersion), in.Private)
	}
	status, reason := "IMPORT_COMPLETE", ""
	if in.Status == "tainted" {
		status, reason = "CREATE_FAILED", "tainted in the terraform state: the next deploy replaces it"
	}
	return state.Resource{Name: name, Type: typ, ID: id, Status: status, StatusReason: reason, Props: b, Outputs: b,
		DeletionPolicy: string(template.Delete), Private: private, Provider: paddr}, nil
}

// markPaths marks the parts of v at paths that exist in v and are not null, in time linear
// in v and the paths (a state may list thousands).
func markPaths(v cty.Value, marks []cty.PathValueMarks) cty.Value {
	kept := marks[:0:0]
	for _, m := range marks {
		if x, err := m.Path.Apply(v); err == nil && !x.IsNull() {
			kept = append(kept, m)
		}
	}
	return value.MarkPaths(v, kept)
}

// pushedOutputs are a state's root outputs as the stack keeps them (storedOutput), in
// the configuration's order.
func pushedOutputs(st *template.Stack, tfs *tfstate.State) ([]byte, error) {
	outs := []storedOutput{}
	for _, o := range st.Outputs {
		so, ok := tfs.Outputs[o.Name]
		if !ok {
			continue
		}
		t, err := ctyjson.UnmarshalType(so.Type)
		if err != nil {
			return nil, fmt.Errorf("the state has an invalid type for output %q: %w", o.Name, err)
		}
		v, err := ctyjson.Unmarshal(so.Value, t)
		if err != nil {
			return nil, fmt.Errorf("the state has an invalid value for output %q: %w", o.Name, err)
		}
		if so.Sensitive || o.Sensitive {
			v = value.Secret(v)
		}
		sto, err := newStoredOutput(o.Name, o.Description, v)
		if err != nil {
			return nil, err
		}
		outs = append(outs, sto)
	}
	return json.Marshal(outs)
}

func unmarked(v cty.Value) cty.Value {
	u, _ := v.UnmarkDeep()
	return u
}
