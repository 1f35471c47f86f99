package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
)

// NoOperationError says a stack has no running operation to cancel or unlock.
type NoOperationError struct {
	Stack  string
	Status string // the stack's status; "" when not known
}

func (e *NoOperationError) Error() string {
	if e.Status == "" {
		return fmt.Sprintf("stack %s has no running operation to cancel", e.Stack)
	}
	return fmt.Sprintf("stack %s has no running operation to cancel (it is %s)", e.Stack, e.Status)
}

// forceOwner is the lease holder ForceUnlock sets while it ends an operation: every run of it
// (here, in another process, in a process that comes back) is fenced out from then on.
const forceOwner = "force-unlock"

// abandonWait bounds how long ForceUnlock waits for its own run of the operation to return.
const abandonWait = 30 * time.Second

// ForceUnlock ends the running operation of stack at once, as `terraform force-unlock` drops a
// state lock: whoever runs it (this engine, another server, a CLI process that is gone) is
// fenced out and stopped, nothing is rolled back, and the stack is left in the failed status of
// the operation. The stack's event says who forced it (by), which steps were in flight, and
// that the state may no longer match the resources. It returns the operation as it ended.
func (e *Engine) ForceUnlock(ctx context.Context, stack, by string) (api.Operation, error) {
	st, err := e.store.GetStack(ctx, stackKey(ctx, stack))
	if err != nil {
		return api.Operation{}, fmt.Errorf("cannot find stack %s: %w", stack, err)
	}
	if st.Operation == "" {
		return api.Operation{}, &NoOperationError{Stack: stack, Status: st.Status}
	}
	op, err := e.fenceOut(ctx, stack, st.Operation)
	if err != nil {
		return api.Operation{}, err
	}
	e.abandon(ctx, op.ID)

	var req opRequest
	_ = json.Unmarshal(op.Request, &req)
	if st, err = e.store.GetStack(ctx, op.Stack); err != nil { // as the run left it
		return api.Operation{}, fmt.Errorf("cannot read stack %s: %w", stack, err)
	}
	inFlight, err := e.openSteps(ctx, op.ID)
	if err != nil {
		return api.Operation{}, err
	}
	reason := forcedReason(op, by, inFlight)
	for _, step := range inFlight {
		verb, logical, _ := strings.Cut(step, "/")
		if _, err := e.store.AppendEvent(ctx, state.Event{Stack: op.Stack, Operation: op.ID, LogicalID: logical,
			Status: stepFailedStatus(verb), Reason: reason, At: e.now()}); err != nil {
			return api.Operation{}, fmt.Errorf("cannot record event: %w", err)
		}
	}
	status := failedStatus(op, req, st)
	st.Status, st.StatusReason, st.UpdatedAt = status, reason, e.now()
	if err := e.store.PutStack(ctx, st); err != nil {
		return api.Operation{}, fmt.Errorf("cannot write stack %s: %w", stack, err)
	}
	if _, err := e.store.AppendEvent(ctx, state.Event{Stack: op.Stack, Operation: op.ID, LogicalID: st.Name, PhysicalID: st.ID,
		Type: stackType(req.Dialect), Status: status, Reason: reason, At: e.now()}); err != nil {
		return api.Operation{}, fmt.Errorf("cannot record event: %w", err)
	}
	if err := e.finishOp(ctx, op.ID, state.Failed, reason); err != nil {
		return api.Operation{}, err
	}
	return e.Operation(ctx, op.ID)
}

// fenceOut makes ForceUnlock the holder of running operation id: journal entries need the
// lease, so every run of it is fenced out from then on, and a run elsewhere stops at its next
// renewal. It returns the operation as it was.
func (e *Engine) fenceOut(ctx context.Context, stack, id string) (state.Operation, error) {
	for range 10 { // the holder may change meanwhile (this engine resuming it): read it again
		op, err := e.store.GetOperation(ctx, id)
		if err != nil {
			return state.Operation{}, fmt.Errorf("cannot get operation %s: %w", id, err)
		}
		if op.Status != state.Running {
			return state.Operation{}, &NoOperationError{Stack: stack} // it just ended
		}
		err = e.store.TakeOverOperation(ctx, id, op.Owner, forceOwner, e.now().Add(e.o.LeaseTTL))
		var busy *state.BusyError
		if err == nil {
			return op, nil
		}
		if !errors.As(err, &busy) {
			return state.Operation{}, fmt.Errorf("cannot force-unlock stack %s: %w", stack, err)
		}
	}
	return state.Operation{}, fmt.Errorf("cannot force-unlock stack %s: its operation keeps changing hands; try again", stack)
}

// abandon stops this engine's run of operation id, if it has one, without letting it write or
// roll back anything, and waits (a while) for it to return. A run still waiting to claim the
// lease gives up by itself once the operation has ended.
func (e *Engine) abandon(ctx context.Context, id string) {
	e.mu.Lock()
	stop, done := e.abandons[id], e.running[id]
	if stop == nil {
		if c := e.cancels[id]; c != nil { // a tracked run (an import, a state push): its lost-lease path
			stop = func() { c(errLeaseLost) }
		}
	}
	e.mu.Unlock()
	if stop == nil || done == nil {
		return
	}
	stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(abandonWait):
	}
}

// openSteps lists the resource steps of operation id that began and never ended: what was in
// flight when it was stopped.
func (e *Engine) openSteps(ctx context.Context, id string) ([]string, error) {
	entries, err := e.store.ListJournal(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cannot read journal of operation %s: %w", id, err)
	}
	var open []string
	for _, je := range entries {
		switch {
		case je.Step == resumeStep || strings.HasPrefix(je.Step, "phase/") || !strings.Contains(je.Step, "/"):
		case je.Phase == state.Begin && !slices.Contains(open, je.Step):
			open = append(open, je.Step)
		case je.Phase == state.End:
			open = slices.DeleteFunc(open, func(s string) bool { return s == je.Step })
		}
	}
	return open, nil
}

// forcedReason is the stack's reason after a force-unlock.
func forcedReason(op state.Operation, by string, inFlight []string) string {
	if by == "" {
		by = "an unnamed client"
	}
	msg := fmt.Sprintf("Operation %s (%s) force-unlocked by %s: it was ended where it stood, without rollback, "+
		"so the stack's state may no longer match its resources", op.ID, op.Kind, by)
	if len(inFlight) > 0 {
		var steps []string
		for _, s := range inFlight {
			verb, logical, _ := strings.Cut(s, "/")
			steps = append(steps, verb+" of "+logical)
		}
		msg += fmt.Sprintf(" (in flight: %s, which may have made or changed an object cairn does not know of)", strings.Join(steps, ", "))
	}
	return msg + ". Deploy or delete the stack again to go on"
}

// stepFailedStatus is the failed status of a resource step's verb.
func stepFailedStatus(verb string) string {
	switch verb {
	case "create", "update", "delete":
		return strings.ToUpper(verb) + "_FAILED"
	}
	return "UPDATE_FAILED"
}

// RunsHere reports whether operation id is run by this engine, or is about to be at once: it
// holds the lease, or resumes it from a holder that is gone. The CLI's in-process cairn asks
// this to follow an operation a killed process left before running the user's command.
func (e *Engine) RunsHere(ctx context.Context, id string) bool {
	e.mu.Lock()
	_, here := e.running[id]
	e.mu.Unlock()
	if !here {
		return false
	}
	op, err := e.store.GetOperation(ctx, id)
	return err == nil && op.Status == state.Running && (op.Owner == e.o.Owner || !e.o.OwnerAlive(op.Owner))
}
