package engine

import (
	"fmt"

	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
	"github.com/cairn-dev/cairn/internal/value"
)

// snapshotOf is a stack's state for a dialect's own state format: the resources that hold an
// object (applied, or made by a create that then failed), and the outputs that evaluate on
// them.
func snapshotOf(st *template.Stack, sc *scope, row state.Stack, rows []state.Resource) (template.StateSnapshot, error) {
	snap := template.StateSnapshot{Stack: row.Name, StackID: row.ID}
	for _, o := range st.Outputs {
		v, ds := o.Value.Eval(sc)
		if ds.HasErrors() || !v.IsWhollyKnown() {
			continue // it needs a resource the stack does not hold
		}
		snap.Outputs = append(snap.Outputs, template.StateOutput{Name: o.Name, Value: v})
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
		snap.Resources = append(snap.Resources, template.StateResource{Name: r.Name, Type: r.Type, ID: r.ID, Provider: r.Provider,
			Inputs: in, Outputs: out, Deps: r.Deps, Failed: failed, Modified: r.UpdatedAt})
	}
	return snap, nil
}
