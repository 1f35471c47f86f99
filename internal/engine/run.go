package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/tenant"
)

// Journal step keys are "<kind>/<logical id>"; phase markers are "phase/<phase>".
const (
	phaseForward         = ""
	phaseCleanup         = "cleanup"
	phaseRollback        = "rollback"
	phaseRollbackCleanup = "rollback-cleanup"
)

// run is one execution of an operation: the first, or a resumption after a restart. Its
// coordinator goroutine owns the stack row; workers write only journal entries (with their
// resource rows) and events, both safe for concurrent use.
type run struct {
	e     *Engine
	op    state.Operation
	req   opRequest
	pol   template.DialectPolicy // the policy of req.Dialect
	stack state.Stack
	tmpl  *template.Stack           // deploy, and delete of a Terraform-language stack
	prior map[string]state.Resource // resource rows when the operation started or resumed
	ps    *providerSet
	sc    *scope
	base  context.Context // the run's context without the user's cancellation: rollback runs on it

	mu      sync.Mutex
	journal map[string][]state.JournalEntry // this operation's entries by step key
	changed map[string]bool                 // resources created, updated or replaced by this run
	warned  map[string][]string             // provider warnings about a resource, shown with its outcome
	// appliedWith are the provider fingerprints of the stack's last successful deploy.
	appliedWith map[string]providerFP
	gone        map[string]bool // destroyed ahead of their step by a replacement upstream
	replaced    map[string]bool // resources this run replaces (replacewith.go)
	notChecked  []string        // resources a refresh could not read: their provider cannot
	orderOnce   sync.Once
	topo        []string
	handedOff   bool // the run took over the request's loaded template (not a resumption)
}

// image is a resource row as a journal entry's detail keeps it.
type image struct {
	ID      string          `json:"id,omitempty"`
	Status  string          `json:"status,omitempty"`
	Props   json.RawMessage `json:"props,omitempty"`
	Outputs json.RawMessage `json:"outputs,omitempty"`
	Private []byte          `json:"private,omitempty"`
}

// detail is what an "end" entry records about a step, so that rollback and cleanup know what
// the step changed even after a restart.
type detail struct {
	Kind   string `json:"kind"` // create, update, rollback, cleanup, delete
	Before *image `json:"before,omitempty"`
	After  *image `json:"after,omitempty"`
	// Replaced says an update created a new copy (create_before_destroy) even if the ids match.
	Replaced bool `json:"replaced,omitempty"`
	// NotCreated is a failed create's provider.CreateResponse.NotCreated: nothing to roll back.
	NotCreated string `json:"notCreated,omitempty"`
}

func imageOf(r state.Resource) *image {
	return &image{ID: r.ID, Status: r.Status, Props: json.RawMessage(r.Props), Outputs: json.RawMessage(r.Outputs), Private: r.Private}
}

// execute runs op to its end, unless the engine shuts down first.
func (e *Engine) execute(op state.Operation, ho *handoff) {
	// Provider calls act for the operation's tenant: a function token or a private provider
	// resolves among that tenant's own.
	opTenant, _ := state.SplitStackKey(op.Stack)
	base, cancel := context.WithCancel(withCodeRight(tenant.With(e.runCtx, opTenant), op.Request))
	defer cancel()
	go e.renewLease(base, cancel, op.ID)
	ctx, cancelUser := context.WithCancelCause(base)
	defer cancelUser(nil)
	// A run outlives its request: its evaluations keep the limits, not the request's time, so a
	// template that passes them only once resources are known fails a step, not the process.
	ctx = budget.WithLimits(ctx, e.o.Limits)
	e.mu.Lock()
	e.cancels[op.ID], e.abandons[op.ID] = cancelUser, cancel
	if e.pending[op.ID] {
		cancelUser(errCancelled)
	}
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.cancels, op.ID)
		delete(e.abandons, op.ID)
		e.mu.Unlock()
	}()
	if resume := oneStepResume(op.Kind); resume != nil { // adopted in one transaction or not at all: nothing to run again
		if err := resume(e, context.WithoutCancel(ctx), op); err != nil && e.runCtx.Err() == nil {
			_ = e.store.FinishOperation(context.WithoutCancel(ctx), op.ID, state.Failed, err.Error(), e.now())
			e.wake()
		}
		return
	}

	r := &run{e: e, op: op, base: base, journal: map[string][]state.JournalEntry{}}
	// Loading is not stopped by a cancel (only by a shutdown): a resumed operation cancelled
	// before its load must still load to roll back, rather than end half done.
	err := r.load(budget.WithLimits(base, e.o.Limits), ho)
	if ho != nil && r.ps != ho.ps {
		ho.close()
	}
	if r.ps != nil {
		defer r.ps.close()
	}
	defer func() { // before the providers stop
		if r.sc != nil {
			r.sc.eph.close()
		}
	}()
	if err == nil {
		if r.req.Kind == kindDelete {
			err = r.destroy(ctx)
		} else if r.req.Kind == kindRefresh { // refresh.go; resumed, it reads everything again
			var resp api.RefreshResponse
			resp, err = r.refreshOnly(ctx)
			if ho != nil && ho.refreshed != nil {
				ho.refreshed <- refreshed{resp, err}
			}
		} else {
			err = r.deploy(ctx)
		}
	}
	if e.runCtx.Err() != nil && ctx.Err() != nil {
		// Stopped by a shutdown, to be resumed later: not a death (see the crash-loop breaker).
		if o, gerr := e.store.GetOperation(context.WithoutCancel(ctx), op.ID); gerr == nil && o.Status == state.Running {
			e.markCleanStop(context.WithoutCancel(ctx), op)
			// Hand it over: a lease that ends now lets another replica take it at its next scan.
			_ = e.store.ClaimOperation(context.WithoutCancel(ctx), op.ID, e.o.Owner, e.now())
		}
	}
	if err != nil && e.runCtx.Err() == nil && base.Err() == nil && !errors.Is(err, state.ErrFenced) {
		// The run could not go on (the store failed): end the operation rather than leave it hanging.
		_ = e.store.FinishOperation(context.WithoutCancel(ctx), op.ID, state.Failed, err.Error(), e.now())
		e.wake()
	}
}

// renewLease keeps the operation's lease while the run lasts and stops the run if another
// engine took it over.
func (e *Engine) renewLease(ctx context.Context, cancel context.CancelFunc, id string) {
	t := time.NewTicker(e.o.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			err := e.store.ClaimOperation(ctx, id, e.o.Owner, e.now().Add(e.o.LeaseTTL))
			var busy *state.BusyError
			if errors.As(err, &busy) {
				cancel()
				return
			}
		}
	}
}

// parallelism is how many provider calls the run makes at once.
func (r *run) parallelism() int {
	n := 0
	switch {
	case r.req.Deploy != nil:
		n = r.req.Deploy.Parallelism
	case r.req.Delete != nil:
		n = r.req.Delete.Parallelism
	}
	if n <= 0 {
		return r.e.o.Parallelism
	}
	return n
}

// handoff is what a request loaded before it started an operation: the bound template and
// the provider set (with the plugin processes its checks started). The run takes it over
// instead of loading again; an operation resumed after a restart loads from its request.
type handoff struct {
	tmpl *template.Stack
	ps   *providerSet
	// refreshed, for a refresh, receives its response (buffered: the request may be gone).
	refreshed chan refreshed
}

func (h *handoff) close() {
	if h != nil {
		_ = h.ps.close()
	}
}

func (r *run) load(ctx context.Context, ho *handoff) error {
	if err := json.Unmarshal(r.op.Request, &r.req); err != nil {
		return fmt.Errorf("cannot decode operation %s: %w", r.op.ID, err)
	}
	r.pol = policyOf(r.req.Dialect)
	st, err := r.e.store.GetStack(ctx, r.op.Stack)
	if err != nil {
		return fmt.Errorf("cannot read stack %s: %w", r.op.Stack, err)
	}
	r.stack = st
	r.appliedWith = fingerprints(st.Providers)
	entries, err := r.e.store.ListJournal(ctx, r.op.ID)
	if err != nil {
		return fmt.Errorf("cannot read journal of operation %s: %w", r.op.ID, err)
	}
	for _, je := range entries {
		r.journal[je.Step] = append(r.journal[je.Step], je)
	}
	rows, err := r.e.store.ListResources(ctx, r.op.Stack)
	if err != nil {
		return fmt.Errorf("cannot read resources of stack %s: %w", r.op.Stack, err)
	}
	r.prior = map[string]state.Resource{}
	for _, row := range rows {
		r.prior[row.Name] = row
	}
	src := r.req.Deploy
	if r.req.Kind == kindDelete && r.pol.ProviderPlugins {
		// Deleting needs the provider configurations of the last deploy.
		src = &api.DeployRequest{}
		if err := json.Unmarshal(r.stack.Template, src); err != nil {
			return fmt.Errorf("cannot decode the template of stack %s: %w", r.stack.Name, err)
		}
	}
	r.ps = &providerSet{e: r.e, inst: map[string]*instance{}}
	if ho != nil && r.req.Kind != kindDelete {
		r.tmpl, r.ps, r.handedOff = ho.tmpl, ho.ps, true
	} else if r.req.Kind == kindDeploy && r.ephemeralGone() != "" {
		// resumed without its ephemeral variables: deploy fails it (ephemeral.go)
	} else if src != nil {
		tmpl, ps, diags := r.e.load(ctx, r.stack.Name, r.req.StackID, sourceOf(*src), 0)
		if tmpl == nil {
			return fmt.Errorf("cannot load template of operation %s: %w", r.op.ID, diags.Err())
		}
		r.tmpl, r.ps = tmpl, ps
	}
	if r.tmpl != nil {
		r.pol = r.tmpl.Policy // with what the parse gave it (the stack's URNs, its state format)
	}
	r.sc = newScope(ctx, r.tmpl)
	attachEphemerals(ctx, r.sc, r.tmpl, r.ps) // ephemeral.go
	return nil
}

// stopped returns errShutdown when the run must stop for good (the engine is shutting down,
// or another engine took the lease), nil when it goes on (it may have been cancelled by the
// user, which ends the operation as a failure).
func (r *run) stopped(ctx context.Context) error {
	if r.base.Err() != nil || (ctx.Err() != nil && !cancelled(ctx)) {
		return errShutdown
	}
	return nil
}

// ended returns the "end" entry of step key, if the step finished.
func (r *run) ended(key string) (state.JournalEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, je := range r.journal[key] {
		if je.Phase == state.End {
			return je, true
		}
	}
	return state.JournalEntry{}, false
}

// begin journals the start of step key and returns its token. A step begun by an earlier run
// keeps its token, so the provider sees a retry of the same call, not a new one.
func (r *run) begin(ctx context.Context, key string) (token string, resumed bool, err error) {
	r.mu.Lock()
	for _, je := range r.journal[key] {
		if je.Phase == state.Begin {
			r.mu.Unlock()
			return je.Token, true, nil
		}
	}
	r.mu.Unlock()
	je := state.JournalEntry{Operation: r.op.ID, Stack: r.op.Stack, Fence: r.e.o.Owner, Step: key, Phase: state.Begin, Token: newID(), At: r.e.now()}
	if je.Seq, err = r.e.store.Append(ctx, je); err != nil {
		return "", false, fmt.Errorf("cannot journal %s: %w", key, err)
	}
	r.mu.Lock()
	r.journal[key] = append(r.journal[key], je)
	r.mu.Unlock()
	return je.Token, false, nil
}

// end journals the outcome of step key together with its resource row changes.
func (r *run) end(ctx context.Context, key, token string, failed bool, d detail, writes ...state.Write) error {
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("cannot encode journal detail: %w", err)
	}
	je := state.JournalEntry{Operation: r.op.ID, Stack: r.op.Stack, Fence: r.e.o.Owner, Step: key, Phase: state.End, Token: token,
		Failed: failed, Detail: body, At: r.e.now()}
	if je.Seq, err = r.e.store.Append(context.WithoutCancel(ctx), je, writes...); err != nil {
		return fmt.Errorf("cannot journal %s: %w", key, err)
	}
	r.observeStep(key, failed, je.At, writes)
	r.mu.Lock()
	r.journal[key] = append(r.journal[key], je)
	r.mu.Unlock()
	return nil
}

// endedWith lists the finished steps of a kind ("create", "update", ...) with their details.
func (r *run) endedWith(kinds ...string) map[string]stepEnd {
	out := map[string]stepEnd{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, entries := range r.journal {
		kind, name, ok := strings.Cut(key, "/")
		if !ok || !contains(kinds, kind) {
			continue
		}
		for _, je := range entries {
			if je.Phase != state.End {
				continue
			}
			var d detail
			if json.Unmarshal(je.Detail, &d) == nil {
				out[name] = stepEnd{d, je.Failed}
			}
		}
	}
	return out
}

// stepEnd is a finished step: what it changed and whether it failed.
type stepEnd struct {
	detail
	failed bool
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// phase is the last phase marker the journal holds, and the reason it was entered for.
func (r *run) phase() (name, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := int64(-1)
	for key, entries := range r.journal {
		if p, ok := strings.CutPrefix(key, "phase/"); ok && entries[0].Seq > seq {
			name, reason, seq = p, string(entries[0].Detail), entries[0].Seq
		}
	}
	return name, reason
}

// enter journals that the operation moved to phase, with the reason (the failure that started
// a rollback), so a resumed run continues there.
func (r *run) enter(ctx context.Context, phase, reason string) error {
	key := "phase/" + phase
	je := state.JournalEntry{Operation: r.op.ID, Stack: r.op.Stack, Fence: r.e.o.Owner, Step: key, Phase: state.Begin, Detail: []byte(reason), At: r.e.now()}
	var err error
	if je.Seq, err = r.e.store.Append(context.WithoutCancel(ctx), je); err != nil {
		return fmt.Errorf("cannot journal %s: %w", key, err)
	}
	r.mu.Lock()
	r.journal[key] = append(r.journal[key], je)
	r.mu.Unlock()
	return nil
}

// stackType is the type stack events carry.
func stackType(dialect string) string {
	return policyOf(dialect).StackType
}

// statusStep is the journal step of the stack row writes of a run: fenced like every other
// write of the run, so that an engine that lost the operation cannot set the stack's status.
const statusStep = "stack/status"

// setStatus writes the stack's status and its event.
func (r *run) setStatus(ctx context.Context, status, reason string) error {
	r.stack.Status, r.stack.StatusReason, r.stack.UpdatedAt = status, reason, r.e.now()
	row := r.stack
	je := state.JournalEntry{Operation: r.op.ID, Stack: r.op.Stack, Fence: r.e.o.Owner, Step: statusStep, Phase: statusStep,
		Detail: []byte(status), At: r.e.now()}
	if _, err := r.e.store.Append(context.WithoutCancel(ctx), je, state.Write{Stack: &row}); err != nil {
		return fmt.Errorf("cannot write stack %s: %w", r.stack.Name, err)
	}
	return r.event(ctx, r.stack.Name, r.stack.ID, r.pol.StackType, status, reason)
}

// event appends one resource or stack event and wakes long polls.
func (r *run) event(ctx context.Context, logical, physical, typ, status, reason string) error {
	_, err := r.e.store.AppendEvent(context.WithoutCancel(ctx), state.Event{Stack: r.op.Stack, Operation: r.op.ID,
		LogicalID: logical, PhysicalID: physical, Type: typ, Status: status, Reason: reason, At: r.e.now()})
	r.e.wake()
	if err != nil {
		return fmt.Errorf("cannot record event: %w", err)
	}
	return nil
}

// finish ends the operation with the stack in its final status.
func (r *run) finish(ctx context.Context, stackStatus, reason string, ok bool) error {
	if err := r.setStatus(ctx, stackStatus, reason); err != nil {
		return err
	}
	status := state.Succeeded
	if !ok {
		status = state.Failed
	}
	return r.e.finishOp(context.WithoutCancel(ctx), r.op.ID, status, reason)
}

// progress returns ctx with a provider.WithProgress reporter that records each report as an
// event of status (the step's in-progress status) for the resource.
func (r *run) progress(ctx context.Context, logical, physical, typ, status string) context.Context {
	return provider.WithProgress(ctx, func(reason string) {
		_ = r.event(ctx, logical, physical, typ, status, reason) // a lost progress event does not fail the step
	})
}
