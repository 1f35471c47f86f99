package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/value"
)

// storedOutput is an output as the stack row keeps it (sealed at rest): Value is what every
// reader sees, secrets masked (value.Mask, the one mask of parameters, outputs and events),
// and Secret the value itself when it holds a secret, which only Outputs with showSecrets
// reveals. A row decoded as []api.Output ignores Secret.
type storedOutput struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Value       any             `json:"value"`
	Secret      json.RawMessage `json:"secret,omitempty"`
}

// newStoredOutput is output name with value v.
func newStoredOutput(name, description string, v cty.Value) (storedOutput, error) {
	o := storedOutput{Name: name, Description: description, Value: value.Masked(v, api.UnknownMarker)}
	if !value.IsSecret(v) {
		return o, nil
	}
	plain, _ := v.UnmarkDeep()
	b, err := json.Marshal(value.Masked(plain, api.UnknownMarker))
	if err != nil {
		return o, fmt.Errorf("cannot encode output %s: %w", name, err)
	}
	o.Secret = b
	return o, nil
}

// decodeOutputs decodes stored outputs keeping their numbers exact (json.Number).
func decodeOutputs(b []byte, outs *[]storedOutput) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(outs)
}

// secretOf is the Secret of stored output name, if any.
func secretOf(stored []byte, name string) json.RawMessage {
	var outs []storedOutput
	if decodeOutputs(stored, &outs) != nil {
		return nil
	}
	for _, o := range outs {
		if o.Name == name {
			return o.Secret
		}
	}
	return nil
}

// Outputs returns a stack's outputs, secrets masked unless showSecrets asks for their values
// (cairn outputs --show-secrets, GET .../outputs?show-secrets=true).
func (e *Engine) Outputs(ctx context.Context, name string, showSecrets bool) ([]api.Output, error) {
	st, err := e.store.GetStack(ctx, stackKey(ctx, name))
	if err != nil {
		return nil, fmt.Errorf("cannot find stack %s: %w", name, err)
	}
	if len(st.Outputs) == 0 {
		return []api.Output{}, nil
	}
	var stored []storedOutput
	if err := decodeOutputs(st.Outputs, &stored); err != nil {
		return nil, fmt.Errorf("cannot decode outputs of stack %s: %w", name, err)
	}
	out := make([]api.Output, 0, len(stored))
	for _, o := range stored {
		ao := api.Output{Name: o.Name, Description: o.Description, Value: o.Value}
		if showSecrets && o.Secret != nil {
			dec := json.NewDecoder(bytes.NewReader(o.Secret))
			dec.UseNumber()
			if err := dec.Decode(&ao.Value); err != nil {
				return nil, fmt.Errorf("cannot decode output %s of stack %s: %w", o.Name, name, err)
			}
		}
		out = append(out, ao)
	}
	return out, nil
}
