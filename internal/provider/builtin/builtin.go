// Package builtin is terraform's built-in provider (terraform.io/builtin/terraform), served in
// process: its terraform_data resource, as terraform 1.11 has it. A configuration uses it
// without a required_providers entry and without a plugin.
package builtin

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/cairn-dev/cairn/internal/provider"
)

// DataType is the one resource type the provider serves.
const DataType = "terraform_data"

// Version is what the provider reports as its version: terraform's built-in provider has
// none of its own.
const Version = "0.0.0-builtin"

// stateType is terraform_data's state: triggers_replace forces a replacement when it
// changes; output follows input.
var stateType = cty.Object(map[string]cty.Type{
	"id": cty.String, "input": cty.DynamicPseudoType, "output": cty.DynamicPseudoType, "triggers_replace": cty.DynamicPseudoType,
})

var dataSpec = hcldec.ObjectSpec{
	"input":            &hcldec.AttrSpec{Name: "input", Type: cty.DynamicPseudoType},
	"triggers_replace": &hcldec.AttrSpec{Name: "triggers_replace", Type: cty.DynamicPseudoType},
}

// Provider serves terraform_data. It keeps nothing between calls: the state is the resource's.
type Provider struct {
	provider.Unimplemented
}

// New returns the built-in provider.
func New() *Provider { return &Provider{} }

var (
	_ provider.Provider       = (*Provider)(nil)
	_ provider.StateVersioner = (*Provider)(nil)
)

func (*Provider) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

// Schema describes terraform_data and the (empty) provider configuration.
func (*Provider) Schema(_ context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	switch {
	case req.Kind == provider.SchemaProvider:
		return provider.Schema{Spec: hcldec.ObjectSpec{}, ImpliedType: cty.EmptyObject}, nil
	case req.Kind == provider.SchemaResource && req.Type == DataType:
		unknown := map[string]cty.Value{}
		for name, ty := range stateType.AttributeTypes() {
			unknown[name] = cty.UnknownVal(ty)
		}
		return provider.Schema{Spec: dataSpec, ImpliedType: stateType, Unknown: cty.ObjectVal(unknown)}, nil
	case req.Kind == provider.SchemaData && req.Type == "terraform_remote_state":
		return provider.Schema{}, fmt.Errorf("%w: cairn does not read other states: the data source terraform_remote_state is not supported", provider.ErrUnknownType)
	}
	return provider.Schema{}, fmt.Errorf("%w: the provider terraform.io/builtin/terraform has no %s %q", provider.ErrUnknownType, req.Kind, req.Type)
}

// StateCurrent: terraform_data's schema has one version.
func (*Provider) StateCurrent(context.Context, string, []byte) bool { return true }

// Check accepts every configuration the schema decodes.
func (*Provider) Check(_ context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
	if req.Resource.Type != DataType {
		return provider.CheckResponse{Failures: []provider.CheckFailure{{Reason: "unknown resource type " + req.Resource.Type}}}, nil
	}
	return provider.CheckResponse{}, nil
}

// Diff plans as terraform's PlanResourceChange for terraform_data: a changed
// triggers_replace replaces the object (a new id); a changed input updates output.
func (p *Provider) Diff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	prior := priorState(req.OldOutputs, req.Private)
	cfg := config(req.NewProps)
	var resp provider.DiffResponse
	planned := map[string]cty.Value{"input": cfg.input, "triggers_replace": cfg.triggers, "output": cty.NullVal(cty.DynamicPseudoType),
		"id": cty.UnknownVal(cty.String).RefineNotNull()}
	priorInput := cty.NullVal(cty.DynamicPseudoType)
	if !prior.IsNull() {
		if !equal(prior.GetAttr("triggers_replace"), cfg.triggers) {
			resp.Replace, resp.ReplacePaths = true, []string{"triggers_replace"}
		} else {
			planned["id"], planned["output"] = prior.GetAttr("id"), prior.GetAttr("output")
			priorInput = prior.GetAttr("input")
		}
	}
	if !equal(priorInput, cfg.input) {
		// terraform plans output "known after apply", though it will be input
		if cfg.input.IsNull() {
			planned["output"] = cty.NullVal(cfg.input.Type())
		} else {
			planned["output"] = cty.UnknownVal(cfg.input.Type())
		}
	}
	resp.Planned = cty.ObjectVal(planned)
	if prior.IsNull() {
		resp.Changed = true
		resp.ChangedKeys = []string{"id"}
		for _, k := range []string{"input", "output", "triggers_replace"} {
			if !planned[k].IsNull() {
				resp.ChangedKeys = append(resp.ChangedKeys, k)
			}
		}
		sort.Strings(resp.ChangedKeys)
		return resp, nil
	}
	for _, k := range []string{"id", "input", "output", "triggers_replace"} {
		if !equal(prior.GetAttr(k), planned[k]) {
			resp.ChangedKeys = append(resp.ChangedKeys, k)
		}
	}
	resp.Changed = len(resp.ChangedKeys) > 0
	return resp, nil
}

// Create makes a new object: a random id, output = input.
func (*Provider) Create(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
	id, err := newUUID()
	if err != nil {
		return provider.CreateResponse{}, err
	}
	st, priv, err := stateOf(id, config(req.Props))
	if err != nil {
		return provider.CreateResponse{}, err
	}
	return provider.CreateResponse{ID: id, Outputs: st, Private: priv}, nil
}

// Update keeps the id and sets output to the new input.
func (*Provider) Update(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
	st, priv, err := stateOf(req.ID, config(req.NewProps))
	if err != nil {
		return provider.UpdateResponse{}, err
	}
	return provider.UpdateResponse{ID: req.ID, Outputs: st, Private: priv}, nil
}

// Read returns the stored state: the object lives nowhere else.
func (*Provider) Read(_ context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	return provider.ReadResponse{ID: req.ID, Props: req.Props, Outputs: req.Outputs, Private: req.Private}, nil
}

// Delete has nothing to remove.
func (*Provider) Delete(context.Context, provider.DeleteRequest) (provider.DeleteResponse, error) {
	return provider.DeleteResponse{}, nil
}

// Import adopts id as an object with null input, as terraform's import of terraform_data.
func (*Provider) Import(_ context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	if req.Resource.Type != DataType {
		return provider.ImportResponse{}, fmt.Errorf("%w: %s", provider.ErrUnknownType, req.Resource.Type)
	}
	st, priv, err := stateOf(req.ID, dataConfig{input: cty.NullVal(cty.DynamicPseudoType), triggers: cty.NullVal(cty.DynamicPseudoType)})
	if err != nil {
		return provider.ImportResponse{}, err
	}
	return provider.ImportResponse{ID: req.ID, Outputs: st, Private: priv}, nil
}

type dataConfig struct{ input, triggers cty.Value }

func config(props cty.Value) dataConfig {
	c := dataConfig{input: cty.NullVal(cty.DynamicPseudoType), triggers: cty.NullVal(cty.DynamicPseudoType)}
	if props == cty.NilVal || props.IsNull() || !props.Type().IsObjectType() {
		return c
	}
	if props.Type().HasAttribute("input") {
		c.input = props.GetAttr("input")
	}
	if props.Type().HasAttribute("triggers_replace") {
		c.triggers = props.GetAttr("triggers_replace")
	}
	return c
}

// stateOf is the state of object id for configuration c, and its typed form for Private:
// cairn stores values without their types, and a list input read back as a tuple must not
// count as a change.
func stateOf(id string, c dataConfig) (cty.Value, []byte, error) {
	st := cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(id), "input": c.input, "output": c.input, "triggers_replace": c.triggers})
	plain, _ := st.UnmarkDeep()
	b, err := ctyjson.Marshal(plain, stateType)
	if err != nil {
		return cty.NilVal, nil, fmt.Errorf("cannot encode the state of terraform_data: %w", err)
	}
	priv, err := json.Marshal(private{State: b})
	return st, priv, err
}

// private is what the provider keeps beside a resource's state.
type private struct {
	State json.RawMessage `json:"terraform_data"`
}

// priorState is the prior object: the typed copy in Private when there is one, else the
// stored outputs; null for none.
func priorState(outs cty.Value, priv []byte) cty.Value {
	var p private
	if len(priv) > 0 && json.Unmarshal(priv, &p) == nil && len(p.State) > 0 {
		if v, err := ctyjson.Unmarshal(p.State, stateType); err == nil {
			return v
		}
	}
	if outs == cty.NilVal || outs.IsNull() || !outs.Type().IsObjectType() {
		return cty.NullVal(stateType)
	}
	attrs := map[string]cty.Value{}
	for name, ty := range stateType.AttributeTypes() {
		attrs[name] = cty.NullVal(ty)
		if outs.Type().HasAttribute(name) {
			attrs[name] = outs.GetAttr(name)
		}
	}
	return cty.ObjectVal(attrs)
}

// equal is terraform's RawEquals on unmarked values: types count, unknowns differ.
func equal(a, b cty.Value) bool {
	a, _ = a.UnmarkDeep()
	b, _ = b.UnmarkDeep()
	return a.RawEquals(b)
}

// newUUID is a random id formatted as a UUID, as hashicorp/go-uuid makes terraform_data's.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("cannot make an id: %w", err)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
