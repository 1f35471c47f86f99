package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/state"
)

// The crash-loop breaker. An operation is resumed after its server died; if something in the
// operation itself kills the server (an input no budget foresaw), every restart would resume it
// and die again. Each resumption is journalled with the progress made so far (the number of
// finished steps); when an operation has been resumed MaxResumes times in a row, each within
// resumeWindow of the one before, without any step finishing in between, it is failed instead
// of resumed, naming the step it kept dying at. Cancel and delete then work on the stack as
// on any failed one.

const (
	resumeStep   = "resume" // journal step of resumption marks; never a resource step ("verb/Name")
	resumeWindow = 5 * time.Minute
)

type resumeMark struct {
	Progress int  `json:"progress"`        // End entries when the operation was resumed
	Clean    bool `json:"clean,omitempty"` // its engine stopped cleanly (a shutdown): no strike
}

// markCleanStop journals that op's run stopped because its engine shut down: the next
// resumption does not count as a death (restarts, and the in-process CLI's short-lived
// servers, stop cleanly all the time).
func (e *Engine) markCleanStop(ctx context.Context, op state.Operation) {
	_ = e.mark(ctx, op, resumeMark{Clean: true})
}

func (e *Engine) mark(ctx context.Context, op state.Operation, m resumeMark) error {
	detail, _ := json.Marshal(m)
	_, err := e.store.Append(ctx, state.JournalEntry{Operation: op.ID, Stack: op.Stack, Fence: e.o.Owner, Step: resumeStep,
		Phase: resumeStep, Detail: detail, At: e.now()})
	return err
}

// breakCrashLoop journals this resumption of op, or, when op has been resumed too often
// without progress, fails it and reports true. It reads only the journal and the stack row,
// never the template: a template that kills the server is not parsed again.
func (e *Engine) breakCrashLoop(ctx context.Context, op state.Operation) (bool, error) {
	entries, err := e.store.ListJournal(ctx, op.ID)
	if err != nil {
		return false, fmt.Errorf("cannot read journal of operation %s: %w", op.ID, err)
	}
	// strikes counts the resumptions in a row, each within resumeWindow of the one before,
	// between which no step ended and no clean stop came.
	ends, strikes, lastProgress, open := 0, 0, -1, ""
	var last time.Time
	begun := map[string]bool{}
	for _, je := range entries {
		switch {
		case je.Step == resumeStep:
			var m resumeMark
			_ = json.Unmarshal(je.Detail, &m)
			switch {
			case m.Clean:
				strikes, lastProgress = 0, -1
			case m.Progress == lastProgress && je.At.Sub(last) < resumeWindow:
				strikes++
			default:
				strikes = 1
			}
			if !m.Clean {
				lastProgress, last = m.Progress, je.At
			}
		case je.Phase == state.End:
			ends++
			delete(begun, je.Step)
		case je.Phase == state.Begin && !strings.HasPrefix(je.Step, "phase/"):
			begun[je.Step] = true
			open = je.Step
		}
	}
	if !begun[open] {
		open = ""
	}
	if strikes >= e.o.MaxResumes && ends == lastProgress && e.now().Sub(last) < resumeWindow {
		return true, e.failLooping(ctx, op, open, strikes)
	}
	return false, e.mark(ctx, op, resumeMark{Progress: ends})
}

// failLooping ends op as failed, with the stack in the failed status of its kind and phase.
func (e *Engine) failLooping(ctx context.Context, op state.Operation, step string, times int) error {
	var req opRequest
	_ = json.Unmarshal(op.Request, &req)
	st, err := e.store.GetStack(ctx, op.Stack)
	if err != nil {
		return fmt.Errorf("cannot read stack %s: %w", op.Stack, err)
	}
	at := "before its first step"
	if step != "" {
		at = "at step " + step
	}
	reason := fmt.Sprintf("cairn stopped %d times in a row while running this operation, each time %s, without any step finishing: "+
		"the operation was ended instead of resumed again (a crash-loop breaker). Fix the cause, then deploy or delete the stack again", times, at)
	verb, logical, isStep := strings.Cut(step, "/")
	if isStep && verb == "create" {
		reason += fmt.Sprintf("; the create of %s was in flight and may have made an object cairn does not know of", logical)
	}
	status := failedStatus(op, req, st)
	if isStep {
		resStatus := strings.ToUpper(verb) + "_FAILED" // CREATE_FAILED, UPDATE_FAILED, DELETE_FAILED
		if verb != "create" && verb != "update" && verb != "delete" {
			resStatus = "UPDATE_FAILED"
		}
		if _, err := e.store.AppendEvent(ctx, state.Event{Stack: op.Stack, Operation: op.ID, LogicalID: logical,
			Status: resStatus, Reason: reason, At: e.now()}); err != nil {
			return fmt.Errorf("cannot record event: %w", err)
		}
	}
	st.Status, st.StatusReason, st.UpdatedAt = status, reason, e.now()
	if err := e.store.PutStack(ctx, st); err != nil {
		return fmt.Errorf("cannot write stack %s: %w", st.Name, err)
	}
	if _, err := e.store.AppendEvent(ctx, state.Event{Stack: op.Stack, Operation: op.ID, LogicalID: st.Name, PhysicalID: st.ID,
		Type: stackType(req.Dialect), Status: status, Reason: reason, At: e.now()}); err != nil {
		return fmt.Errorf("cannot record event: %w", err)
	}
	return e.finishOp(ctx, op.ID, state.Failed, reason)
}

// failedStatus is the failed status of op's stack, st, for an operation ended where it stood:
// the failure of its kind, or of the rollback it was in.
func failedStatus(op state.Operation, req opRequest, st state.Stack) string {
	switch {
	case strings.HasPrefix(st.Status, "UPDATE_ROLLBACK"):
		return "UPDATE_ROLLBACK_FAILED"
	case strings.HasPrefix(st.Status, "ROLLBACK"):
		return "ROLLBACK_FAILED"
	case op.Kind == kindDelete:
		return "DELETE_FAILED"
	case req.Creating:
		return "CREATE_FAILED"
	}
	return "UPDATE_FAILED"
}
