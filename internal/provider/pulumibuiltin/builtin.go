// Package pulumibuiltin serves the resources the Pulumi engine implements itself rather than
// through a plugin (package "pulumi", pulumi/pkg/resource/deploy's builtinProvider): today
// `pulumi:index:Stash`, a value kept in the state. It imports only the provider seam.
package pulumibuiltin

import (
	"context"
	"crypto/rand"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
)

// Package is the package of the engine's own resources.
const Package = "pulumi"

// StashType keeps a value: its output "output" is the "input" it was created with, and stays
// so when the input changes (an update copies only the new input to "input"); replacing the
// resource (replaceOnChanges, or deleting it) takes the new one.
const StashType = "pulumi:index:Stash"

// Provider serves the builtin resource types; it needs no process and no configuration.
type Provider struct{ provider.Unimplemented }

var _ provider.Provider = Provider{}

// Capabilities: a Stash reads back what it stored.
func (Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

func known(typ string) error {
	if typ != StashType {
		return fmt.Errorf("%w: the Pulumi engine's own resources are %s, not %s", provider.ErrUnknownType, StashType, typ)
	}
	return nil
}

// Check accepts exactly one property, input (of any type), as Pulumi's builtin provider does.
func (Provider) Check(_ context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	var resp provider.CheckResponse
	if err := known(req.Resource.Type); err != nil {
		return resp, err
	}
	attrs := attrsOf(req.Props)
	var keys []string
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "input" {
			resp.Failures = append(resp.Failures, provider.CheckFailure{Property: k, Reason: fmt.Sprintf("unknown property %q", k)})
			return resp, nil
		}
	}
	if _, ok := attrs["input"]; !ok {
		resp.Failures = append(resp.Failures, provider.CheckFailure{Property: "input", Reason: `missing required property "input"`})
		return resp, nil
	}
	resp.Props = req.Props
	return resp, nil
}

// Diff: a changed input is an update (never a replacement); the output keeps the old value.
func (Provider) Diff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	var resp provider.DiffResponse
	if err := known(req.Resource.Type); err != nil {
		return resp, err
	}
	input := inputOf(req.NewProps)
	if req.ID == "" && (req.OldProps == cty.NilVal || req.OldProps.IsNull()) {
		return provider.DiffResponse{Changed: true, Planned: stash(input, input)}, nil
	}
	if inputOf(req.OldProps).RawEquals(input) {
		return resp, nil
	}
	return provider.DiffResponse{Changed: true, ChangedKeys: []string{"input"},
		Planned: stash(input, outputOf(req.OldOutputs)), Stables: []string{"output"}}, nil
}

// Create stores the input as both input and output, with a fresh UUID as the id.
func (Provider) Create(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	if err := known(req.Resource.Type); err != nil {
		return provider.CreateResponse{}, err
	}
	input := inputOf(req.Props)
	return provider.CreateResponse{ID: newUUID(), Outputs: stash(input, input)}, nil
}

// Update takes the new input and keeps the output it was created with.
func (Provider) Update(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	if err := known(req.Resource.Type); err != nil {
		return provider.UpdateResponse{}, err
	}
	return provider.UpdateResponse{ID: req.ID, Outputs: stash(inputOf(req.NewProps), outputOf(req.OldOutputs))}, nil
}

// Read gives back what is stored: a stash lives only in the state.
func (Provider) Read(_ context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	if err := known(req.Resource.Type); err != nil {
		return provider.ReadResponse{}, err
	}
	if len(attrsOf(req.Props)) == 0 {
		return provider.ReadResponse{}, fmt.Errorf("a %s cannot be imported: it exists only in the state", StashType)
	}
	return provider.ReadResponse{ID: req.ID, Props: req.Props, Outputs: req.Outputs}, nil
}

// Delete has nothing to remove outside the state.
func (Provider) Delete(_ context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	return provider.DeleteResponse{}, known(req.Resource.Type)
}

// Import is refused as Pulumi refuses it.
func (Provider) Import(_ context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	return provider.ImportResponse{}, fmt.Errorf("a %s cannot be imported: it exists only in the state", StashType)
}

func stash(input, output cty.Value) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"input": input, "output": output})
}

func attrsOf(v cty.Value) map[string]cty.Value {
	if v == cty.NilVal || v.IsMarked() || v.IsNull() || !v.IsKnown() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil
	}
	return v.AsValueMap()
}

func inputOf(props cty.Value) cty.Value { return attr(props, "input") }
func outputOf(outs cty.Value) cty.Value { return attr(outs, "output") }

func attr(v cty.Value, name string) cty.Value {
	if a, ok := attrsOf(v)[name]; ok {
		return a
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// newUUID is a random (version 4) UUID, the id Pulumi gives a stash.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
