package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/tenant"
	"github.com/cairn-dev/cairn/internal/value"
)

// Stack describes a stack with its resources, parameters (NoEcho masked) and outputs.
func (e *Engine) Stack(ctx context.Context, name string) (api.Stack, error) {
	return e.stack(ctx, name, true)
}

// StackBrief is Stack without the resources' attributes: their ids, types and statuses, as a
// CLI following a deploy needs them, at a fraction of the cost for a large stack.
func (e *Engine) StackBrief(ctx context.Context, name string) (api.Stack, error) {
	return e.stack(ctx, name, false)
}

func (e *Engine) stack(ctx context.Context, name string, attributes bool) (api.Stack, error) {
	key := stackKey(ctx, name)
	st, err := e.store.GetStack(ctx, key)
	if err != nil {
		return api.Stack{}, fmt.Errorf("cannot find stack %s: %w", name, err)
	}
	out, err := apiStack(st)
	if err != nil {
		return api.Stack{}, err
	}
	rows, err := e.store.ListResources(ctx, key)
	if err != nil {
		return api.Stack{}, fmt.Errorf("cannot read resources of stack %s: %w", name, err)
	}
	for _, r := range rows {
		res := api.Resource{LogicalID: r.Name, PhysicalID: r.ID, Type: r.Type,
			Status: r.Status, StatusReason: r.StatusReason, UpdatedAt: r.UpdatedAt}
		if attributes && policyOf(st.Dialect).ShowsAttributes {
			// The resource's state is what users read (terraform show); secrets masked.
			if v, err := value.Unmarshal(r.Outputs); err == nil && !v.IsNull() {
				res.Attributes = value.MaskedAs(v, api.UnknownMarker, api.SensitiveMarker)
			}
		}
		out.Resources = append(out.Resources, res)
	}
	return out, nil
}

func apiStack(st state.Stack) (api.Stack, error) {
	out := api.Stack{Name: st.Name, ID: st.ID, Dialect: st.Dialect, Status: st.Status, StatusReason: st.StatusReason,
		Description: st.Description, Operation: st.Operation, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt}
	if len(st.Parameters) > 0 {
		if err := json.Unmarshal(st.Parameters, &out.Parameters); err != nil {
			return api.Stack{}, fmt.Errorf("cannot decode parameters of stack %s: %w", st.Name, err)
		}
	}
	if len(st.Outputs) > 0 {
		if err := json.Unmarshal(st.Outputs, &out.Outputs); err != nil {
			return api.Stack{}, fmt.Errorf("cannot decode outputs of stack %s: %w", st.Name, err)
		}
	}
	return out, nil
}

// Stacks lists stack summaries; deleted stacks are left out.
func (e *Engine) Stacks(ctx context.Context) ([]api.Stack, error) {
	rows, err := e.store.ListStacks(ctx, tenant.From(ctx))
	if err != nil {
		return nil, fmt.Errorf("cannot list stacks: %w", err)
	}
	out := []api.Stack{}
	for _, st := range rows {
		if st.Status == "DELETE_COMPLETE" {
			continue
		}
		s, err := apiStack(st)
		if err != nil {
			return nil, err
		}
		s.Parameters, s.Outputs = nil, nil
		out = append(out, s)
	}
	return out, nil
}

// LastEvent returns the stack's newest event, reading that one row.
func (e *Engine) LastEvent(ctx context.Context, stack string) (api.Event, bool, error) {
	seq, err := e.store.LastEventSeq(ctx, stackKey(ctx, stack))
	if err != nil {
		return api.Event{}, false, fmt.Errorf("cannot read events of stack %s: %w", stack, err)
	}
	evs, err := e.Events(ctx, stack, max(seq-1, 0), 1)
	if err != nil || len(evs) == 0 {
		return api.Event{}, false, err
	}
	return evs[0], true, nil
}

// Events returns the stack's events after seq, oldest first, at most limit (0: all).
func (e *Engine) Events(ctx context.Context, stack string, after int64, limit int) ([]api.Event, error) {
	key := stackKey(ctx, stack)
	evs, err := e.store.ListEvents(ctx, key, after, limit)
	if err != nil {
		return nil, fmt.Errorf("cannot read events of stack %s: %w", stack, err)
	}
	if len(evs) == 0 { // none yet, or no such stack
		if _, err := e.store.StackStatus(ctx, key); err != nil {
			return nil, fmt.Errorf("cannot find stack %s: %w", stack, err)
		}
	}
	out := make([]api.Event, len(evs))
	for i, ev := range evs {
		out[i] = api.Event{Seq: ev.Seq, Stack: stack, Operation: ev.Operation, LogicalID: ev.LogicalID,
			PhysicalID: ev.PhysicalID, Type: ev.Type, Status: ev.Status, Reason: ev.Reason, Timestamp: ev.At}
	}
	return out, nil
}
