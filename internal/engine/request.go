package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
	"github.com/cairn-dev/cairn/internal/value"
)

// Operation kinds.
const (
	kindDeploy = "deploy"
	kindDelete = "delete"
)

// opRequest is what an operation needs to run and, after a restart, to resume. It is stored
// with the operation.
type opRequest struct {
	Kind     string             `json:"kind"`
	StackID  string             `json:"stackId"`
	Dialect  string             `json:"dialect"`
	Creating bool               `json:"creating"` // the operation creates the stack (CREATE_* statuses)
	Deadline time.Time          `json:"deadline,omitzero"`
	Deploy   *api.DeployRequest `json:"deploy,omitempty"`
	Delete   *api.DeleteRequest `json:"delete,omitempty"`
	// EphemeralVars name the ephemeral variables whose values Deploy left out (ephemeral.go).
	EphemeralVars []string `json:"ephemeralVars,omitempty"`
	// Previous is what an update replaces in the stack's row: an update that rolls back puts
	// it back (UPDATE_ROLLBACK_COMPLETE), as CloudFormation keeps the previous template and
	// parameters, so the next deploy remembers the values that worked.
	Previous *previousRow `json:"previous,omitempty"`
	// Plan is the saved plan the deploy applies (cairn deploy --plan): each step must hold to it.
	Plan *plan.Plan `json:"plan,omitempty"`
	// Code says whether the request's caller may run code on the server (Options.RunCode):
	// the run, resumed by whichever replica, acts with that right. Nil (an operation stored by
	// an older cairn): RunCode decides for the operation's tenant.
	Code *bool `json:"code,omitempty"`
}

// previousRow is the template, parameters and description of a stack before an update.
type previousRow struct {
	Template    []byte `json:"template,omitempty"`
	Parameters  []byte `json:"parameters,omitempty"`
	Description string `json:"description,omitempty"`
}

// Validate parses the template and checks every resource with its provider, reporting all
// problems at once. Parameters without a value are treated as unknown.
func (e *Engine) Validate(ctx context.Context, req api.ValidateRequest) (api.ValidateResponse, error) {
	ctx, stop := budget.With(ctx, e.o.Limits)
	defer stop()
	src := source{name: req.TemplateName, text: req.Template, files: req.Files, varFiles: req.VarFiles, env: req.Env, params: req.Parameters}
	st, ps, diags := e.load(ctx, "validate", "", src, loadValidate|loadCheck)
	if ps != nil {
		_ = ps.close()
	}
	resp := api.ValidateResponse{Valid: !diags.HasErrors(), Diagnostics: APIDiagnostics(diags)}
	if st != nil {
		resp.Parameters = apiParameters(st.Parameters)
	}
	return resp, nil
}

func (e *Engine) providerResource(pol template.DialectPolicy, stackName, stackID string, r *template.Resource) provider.Resource {
	pr := provider.Resource{StackName: stackName, StackID: stackID, Name: r.Name, Type: r.Type,
		Dialect: string(pol.Dialect), Region: e.o.Region, AccountID: e.o.AccountID, ReplaceOnChanges: r.ReplaceOnChanges}
	if pol.URN != nil {
		pr.URN = pol.URN(r.Name, r.Type)
	}
	return pr
}

func (e *Engine) stackID(name string, pol template.DialectPolicy) string {
	return pol.StackID(e.o.Region, e.o.AccountID, name, newID())
}

// unknownScope is the scope of a validation: every resource exists and nothing is known.
type unknownScope struct {
	ctx context.Context
	st  *template.Stack
}

func (s unknownScope) Context() context.Context { return s.ctx }

func (s unknownScope) Resource(name string) (template.ResourceValue, bool) {
	if s.st.Resource(name) == nil {
		return template.ResourceValue{}, false
	}
	return template.UnknownResource, true
}

// Deploy starts creating or updating stack and returns the running operation. Template
// problems come back as a *ValidationError, a busy stack as a *state.BusyError.
func (e *Engine) Deploy(ctx context.Context, stack string, req api.DeployRequest) (api.Operation, error) {
	ctx, stop := budget.With(ctx, e.o.Limits) // the run takes other bounds (execute)
	defer stop()
	if err := validStackName(stack); err != nil {
		return api.Operation{}, err
	}
	key := stackKey(ctx, stack)
	prior, err := e.store.GetStack(ctx, key)
	creating := errors.Is(err, state.ErrNotFound) || prior.Status == "DELETE_COMPLETE" || prior.Status == "ROLLBACK_COMPLETE"
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return api.Operation{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	if prior.Operation != "" {
		if op, err := e.store.GetOperation(ctx, prior.Operation); err == nil && op.Status == state.Running {
			return api.Operation{}, &state.BusyError{Stack: stack, Operation: op.ID, Kind: op.Kind, Since: op.StartedAt}
		}
	}
	if prior.Status == "ROLLBACK_FAILED" {
		// CloudFormation refuses too: the stack holds resources whose deletion failed, which
		// only a delete (with --retain for those that cannot go) can settle.
		return api.Operation{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"stack %s is in ROLLBACK_FAILED state and can not be updated: delete it (with --retain for resources that cannot be deleted) and deploy again", stack)}}
	}
	// A saved plan is checked (a preview: provider calls) only once a busy or failed stack
	// has been refused.
	saved, err := e.checkPlan(ctx, stack, &req)
	if err != nil {
		return api.Operation{}, err
	}
	// A stack's template stays a directory of files or one document (CloudFormation and ROS
	// may take each other's place).
	if prior.Name != "" && prior.Status != "DELETE_COMPLETE" && prior.Dialect != "" && policyOf(prior.Dialect).FromFiles != (req.Files != nil) {
		return api.Operation{}, &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"stack %s is a %s stack and this template is not: delete the stack first or use another stack name", stack, prior.Dialect)}}
	}
	stackID := prior.ID
	if creating {
		stackID = ""
	}
	src := sourceOf(req)
	if !creating && !req.Upgrade {
		src.applied, src.appliedWith = e.appliedConfigs(ctx, prior), fingerprints(prior.Providers)
	}
	if !creating {
		src.previous = rememberedParameters(prior)
	}
	st, ps, diags := e.load(ctx, stack, stackID, src, loadCheck)
	if st == nil {
		return api.Operation{}, &ValidationError{Diagnostics: diags}
	}
	lock := ps.lock
	handedOff := false
	defer func() {
		if !handedOff { // an error before the run took the providers over: stop their plugins
			_ = ps.close()
		}
	}()
	if creating {
		stackID = e.stackID(stack, st.Policy)
		if prior.Name != "" {
			// A deleted stack, or one whose creation rolled back, holds no resources: deploying
			// again creates it anew, as CloudFormation does after a delete.
			if err := e.store.DeleteStack(ctx, key); err != nil {
				return api.Operation{}, fmt.Errorf("cannot replace stack %s: %w", stack, err)
			}
		}
	}
	req, ephemeralVars := storedRequest(req, st) // ephemeral.go: their values are never stored
	if st.Policy.RemembersParameters {
		req.Parameters = boundParameters(st) // what the next deploy keeps (and a resumed run binds again)
	}
	oreq := opRequest{Kind: kindDeploy, StackID: stackID, Dialect: string(st.Dialect), Creating: creating, Deploy: &req, EphemeralVars: ephemeralVars, Plan: saved,
		Code: e.codeRight(ctx)}
	if req.TimeoutSeconds > 0 {
		oreq.Deadline = e.now().Add(time.Duration(req.TimeoutSeconds) * time.Second)
	}
	params, err := json.Marshal(apiParameters(st.Parameters))
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot encode parameters: %w", err)
	}
	source, err := json.Marshal(req)
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot encode template: %w", err)
	}
	row := state.Stack{Tenant: tenant.From(ctx), Name: stack, ID: stackID, Dialect: string(st.Dialect), Description: st.Description,
		Parameters: params, CreatedAt: prior.CreatedAt, Outputs: prior.Outputs, Template: source, Providers: prior.Providers, TFState: prior.TFState}
	if creating {
		row.CreatedAt, row.Outputs, row.Providers, row.TFState = e.now(), nil, nil, nil
	} else if st.Policy.RollsBack {
		oreq.Previous = &previousRow{Template: prior.Template, Parameters: prior.Parameters, Description: prior.Description}
	}
	// The run takes over the loaded template and the providers it started, rather than
	// parsing and launching again, unless the parse depends on the stack id it did not have.
	var ho *handoff
	if stackID == prior.ID || !st.Policy.ParseUsesStackID {
		ho = &handoff{tmpl: st, ps: ps}
		handedOff = true // start closes it if it fails
	}
	op, err := e.start(ctx, row, oreq, ho)
	op.LockFile = string(lock)
	return op, err
}

// Delete starts deleting stack and returns the running operation.
func (e *Engine) Delete(ctx context.Context, stack string, req api.DeleteRequest) (api.Operation, error) {
	prior, err := e.store.GetStack(ctx, stackKey(ctx, stack))
	if err != nil || prior.Status == "DELETE_COMPLETE" {
		if err == nil {
			err = state.ErrNotFound
		}
		return api.Operation{}, fmt.Errorf("cannot find stack %s: %w", stack, err)
	}
	oreq := opRequest{Kind: kindDelete, StackID: prior.ID, Dialect: prior.Dialect, Delete: &req, Code: e.codeRight(ctx)}
	if req.TimeoutSeconds > 0 {
		oreq.Deadline = e.now().Add(time.Duration(req.TimeoutSeconds) * time.Second)
	}
	return e.start(ctx, prior, oreq, nil)
}

// start records the operation (taking the stack's lease) and runs it in the background.
func (e *Engine) start(ctx context.Context, row state.Stack, oreq opRequest, ho *handoff) (api.Operation, error) {
	ok := false
	defer func() {
		if !ok {
			ho.close()
		}
	}()
	body, err := json.Marshal(oreq)
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot encode operation: %w", err)
	}
	now := e.now()
	op := state.Operation{ID: newID(), Stack: keyOf(row), Kind: oreq.Kind, Status: state.Running, Request: body,
		Owner: e.o.Owner, LeaseExpires: now.Add(e.o.LeaseTTL), StartedAt: now}
	if err := e.store.StartOperation(ctx, op); err != nil {
		return api.Operation{}, err
	}
	if err := e.writeStartStatus(ctx, row, oreq, op.ID); err != nil {
		_ = e.store.FinishOperation(ctx, op.ID, state.Failed, err.Error(), e.now())
		return api.Operation{}, err
	}
	ok = true
	e.goRun(op, false, ho)
	return e.apiOperation(ctx, op), nil
}

func (e *Engine) writeStartStatus(ctx context.Context, row state.Stack, oreq opRequest, opID string) error {
	status := "UPDATE_IN_PROGRESS"
	switch {
	case oreq.Kind == kindDelete:
		status = "DELETE_IN_PROGRESS"
	case oreq.Creating:
		status = "CREATE_IN_PROGRESS"
	}
	row.Status, row.StatusReason, row.UpdatedAt = status, "User Initiated", e.now()
	if err := e.store.PutStack(ctx, row); err != nil {
		return fmt.Errorf("cannot write stack %s: %w", row.Name, err)
	}
	_, err := e.store.AppendEvent(ctx, state.Event{Stack: keyOf(row), Operation: opID, LogicalID: row.Name, PhysicalID: row.ID,
		Type: stackType(oreq.Dialect), Status: status, Reason: "User Initiated", At: e.now()})
	e.wake()
	if err != nil {
		return fmt.Errorf("cannot record event: %w", err)
	}
	return nil
}

// stackKey is where the calling tenant's stack called name is stored: another tenant's stack
// of the same name is another row, and is never found.
// A name that is not a valid stack name (one holding '/', say, which a path's %2F gives) names
// no stack: it gets a key no stack has, so it is not found rather than another tenant's.
func stackKey(ctx context.Context, name string) string {
	if validStackName(name) != nil {
		return "\x00invalid"
	}
	return state.StackKey(tenant.From(ctx), name)
}

// keyOf is the key of a stack row.
func keyOf(row state.Stack) string { return state.StackKey(row.Tenant, row.Name) }

func validStackName(name string) error {
	ok := name != "" && len(name) <= 128 && (name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z')
	for _, c := range name {
		ok = ok && (c == '-' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')
	}
	if !ok {
		return &ValidationError{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "",
			"invalid stack name %q: use up to 128 letters, digits and hyphens, starting with a letter", name)}}
	}
	return nil
}

// rememberedParameters are the parameter values of a stack's last deploy, which a redeploy
// keeps when its dialect RemembersParameters (nil otherwise): the stored request holds every
// declared parameter's bound text (boundParameters), sealed at rest like the rest of it.
func rememberedParameters(prior state.Stack) map[string]string {
	if prior.Name == "" || prior.Status == "DELETE_COMPLETE" || !policyOf(prior.Dialect).RemembersParameters || len(prior.Template) == 0 {
		return nil
	}
	var req api.DeployRequest
	if err := json.Unmarshal(prior.Template, &req); err != nil {
		return nil // a template that cannot be read keeps nothing; every parameter is bound anew
	}
	return req.Parameters
}

// boundParameters is the text each of st's parameters was bound from (template.Parameter.Text),
// given, kept or its Default: a later deploy that is not given a parameter keeps this value.
func boundParameters(st *template.Stack) map[string]string {
	out := make(map[string]string, len(st.Parameters))
	for _, p := range st.Parameters {
		if p.HasText && !p.Ephemeral {
			out[p.Name] = p.Text
		}
	}
	return out
}

// apiParameters describes parameters for people, NoEcho values masked.
func apiParameters(ps []*template.Parameter) []api.Parameter {
	out := make([]api.Parameter, 0, len(ps))
	for _, p := range ps {
		ap := api.Parameter{Name: p.Name, Type: p.Type, Description: p.Description, NoEcho: p.NoEcho}
		switch m := value.Masked(p.Value, ""); v := m.(type) {
		case string:
			ap.Value = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			ap.Value = string(b)
		}
		if p.NoEcho {
			ap.Value = value.Mask
		}
		if p.Ephemeral {
			ap.Value = "" // never stored, not even masked
		}
		out = append(out, ap)
	}
	return out
}

// APIDiagnostics converts diagnostics to their wire form.
func APIDiagnostics(ds diag.Diagnostics) []api.Diagnostic {
	var out []api.Diagnostic
	for _, d := range ds {
		out = append(out, api.Diagnostic{Severity: d.Severity.String(), Summary: d.Summary, Detail: d.Detail,
			File: d.Range.Filename, Line: d.Range.Line, Column: d.Range.Column, Path: d.Path})
	}
	return out
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// reasonOf turns a step's failure into an event reason: the diagnostics' summaries, each
// after the place in the template it is about (file:line,col), when it has one.
func reasonOf(err error) string {
	var ds diag.Diagnostics
	if errors.As(err, &ds) {
		var parts []string
		for _, d := range ds.Errors() {
			s := d.Summary
			if d.Range.Filename != "" && d.Range.Line > 0 {
				s = d.Range.String() + ": " + s
			}
			if d.Detail != "" {
				s += ": " + d.Detail
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "; ")
	}
	return err.Error()
}

// known reports whether v is wholly known.
func known(v cty.Value) bool { return v.IsWhollyKnown() }
