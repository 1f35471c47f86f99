package engine

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// snapshotOf is a stack's state for a dialect's own state format: the resources that hold an
// object (applied, or made by a create that then failed), and the outputs of the last deploy
// as the stack row keeps them (an output that held a secret is a secret as a whole).
func snapshotOf(row state.Stack, rows []state.Resource) (template.StateSnapshot, error) {
	snap := template.StateSnapshot{Stack: row.Name, StackID: row.ID}
	if len(row.Outputs) > 0 {
		var stored []storedOutput
		if err := decodeOutputs(row.Outputs, &stored); err != nil {
			return snap, fmt.Errorf("cannot decode the outputs of stack %s: %w", row.Name, err)
		}
		for _, o := range stored {
			raw, secret := []byte(o.Secret), o.Secret != nil
			if !secret {
				b, err := json.Marshal(o.Value)
				if err != nil {
					return snap, fmt.Errorf("cannot encode output %s: %w", o.Name, err)
				}
				raw = b
			}
			v, err := value.FromJSON(raw)
			if err != nil {
				return snap, fmt.Errorf("cannot decode output %s: %w", o.Name, err)
			}
			if secret {
				v = value.Secret(v)
			}
			snap.Outputs = append(snap.Outputs, template.StateOutput{Name: o.Name, Value: v})
		}
	}
	for _, r := range rows {
		failed := r.Status == "CREATE_FAILED"
		if (!applied(r) && !failed && r.Status != "UPDATE_FAILED") || r.ID == "" {
			continue
		}
		in, err := value.Unmarshal(r.Props)
		if err != nil {
			return snap, fmt.Errorf("cannot decode the inputs of %s: %w", r.Name, err)
		}
		out, err := value.Unmarshal(r.Outputs)
		if err != nil {
			return snap, fmt.Errorf("cannot decode the outputs of %s: %w", r.Name, err)
		}
		snap.Resources = append(snap.Resources, template.StateResource{Name: logicalName(r.Name), PendingDelete: logicalName(r.Name) != r.Name,
			Type: r.Type, ID: r.ID, Provider: r.Provider,
			Inputs: in, Outputs: out, Deps: r.Deps, Failed: failed, Modified: r.UpdatedAt, Private: r.Private,
			Protect: r.Protect, Retain: r.DeletionPolicy == string(template.Retain)})
		if failed {
			snap.Resources[len(snap.Resources)-1].FailReason = r.StatusReason
		}
	}
	return snap, nil
}
