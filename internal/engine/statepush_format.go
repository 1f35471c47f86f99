package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// formatRows decodes a state file in the dialect's own format (policy.StateFormat) as the
// stack's resource rows: each object as the deploy that made it would have stored it, so the
// next deploy plans the program against it.
func formatRows(ctx context.Context, st *template.Stack, req api.StatePushRequest) ([]state.Resource, []byte, error) {
	snap, err := st.Policy.StateFormat.Decode(ctx, st, req.State, template.StateKeys{Passphrase: req.Passphrase})
	if err != nil {
		return nil, nil, err
	}
	stored := make([]storedOutput, 0, len(snap.Outputs))
	for _, o := range snap.Outputs { // the outputs of the deployment's last update, until a deploy computes them again
		so, err := newStoredOutput(o.Name, "", o.Value)
		if err != nil {
			return nil, nil, err
		}
		stored = append(stored, so)
	}
	outputs, err := json.Marshal(stored)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]state.Resource, 0, len(snap.Resources))
	for _, r := range snap.Resources {
		in, err := value.Marshal(r.Inputs)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot encode the inputs of %s: %w", r.Name, err)
		}
		out, err := value.Marshal(r.Outputs)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot encode the outputs of %s: %w", r.Name, err)
		}
		status, reason := "IMPORT_COMPLETE", ""
		if r.Failed {
			status, reason = "CREATE_FAILED", "its create failed after the provider made it: the next deploy updates it"
		}
		policy := template.Delete
		if r.Retain {
			policy = template.Retain
		}
		if res := st.Resource(r.Name); res != nil && res.DeletionPolicy != "" {
			policy = res.DeletionPolicy
		}
		rows = append(rows, state.Resource{Name: r.Name, Type: r.Type, ID: r.ID, Status: status, StatusReason: reason,
			Props: in, Outputs: out, Deps: r.Deps, DeletionPolicy: string(policy), Provider: r.Provider,
			Protect: r.Protect || (st.Resource(r.Name) != nil && st.Resource(r.Name).PreventDestroy)})
	}
	return rows, outputs, nil
}
