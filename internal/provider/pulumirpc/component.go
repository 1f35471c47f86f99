package pulumirpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
)

// Component resources. A type the package schema marks `isComponent` is not created by the
// plugin's Create: Pulumi's engine calls Construct with the address of a ResourceMonitor, and
// the plugin registers the component and its children there. cairn keeps the component as one
// resource of its static graph whose create and update run Construct against a monitor served
// for that call (monitor.go); the monitor runs each child's lifecycle through this instance and
// the children are kept in the component's private data (ComponentState), so the next Construct
// diffs them, a child no longer registered is deleted, and deleting the component deletes its
// children last-registered first.

// components is a provider instance's knowledge of its component types and what its
// Constructs registered.
type components struct {
	once  sync.Once
	types map[string]bool // component type tokens of the package schema

	mu sync.Mutex
	// self is this instance's provider reference (URN::id) when it is an explicit provider
	// resource, "" for a default provider.
	self string
	// known are the resources Constructs of this instance registered, by URN: what
	// `pulumi:pulumi:getResource` answers (a component given another's child by reference).
	known map[string]knownResource
}

type knownResource struct {
	id      string
	outputs cty.Value
}

func (c *components) setSelf(urn, id string) {
	if id == "" || id == unknownString {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.self = urn + "::" + id
}

func (c *components) selfRef() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.self
}

func (c *components) remember(urn, id string, outputs cty.Value) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known = map[string]knownResource{}
	}
	c.known[urn] = knownResource{id: id, outputs: outputs}
}

func (c *components) lookup(urn string) (knownResource, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.known[urn]
	return k, ok
}

// isComponent reports whether typ is a component type of this plugin's package. The schema is
// read once per instance (memory cache first); a plugin whose schema cannot be read has none.
func (p *Provider) isComponent(ctx context.Context, typ string) bool {
	if p.isOwn(typ) || !strings.HasPrefix(typ, p.opts.Package+":") {
		return false
	}
	p.comp.once.Do(func() {
		p.comp.types = map[string]bool{}
		b, err := p.cachedSchema(ctx)
		if err != nil {
			if p.opts.Log != nil {
				p.opts.Log.Warn("cannot read the package schema: component resources are not recognised", "provider", p.opts.Package, "error", err)
			}
			return
		}
		var s struct {
			Resources map[string]struct {
				IsComponent bool `json:"isComponent"`
			} `json:"resources"`
		}
		if json.Unmarshal(b, &s) != nil {
			return
		}
		for tok, r := range s.Resources {
			if r.IsComponent {
				p.comp.types[tok] = true
			}
		}
	})
	return p.comp.types[typ]
}

// cachedSchema is the package schema from the memory cache Schema fills (the front end's
// token resolution read it), else from the running plugin.
func (p *Provider) cachedSchema(ctx context.Context) ([]byte, error) {
	key := schemaKey(p.opts.Package, p.opts.Executable)
	if key != "" {
		memSchemas.Lock()
		b, ok := memSchemas.m[key]
		memSchemas.Unlock()
		if ok {
			return b, nil
		}
	}
	return p.PackageSchema(ctx) // read once per instance (isComponent); not cached: Schema fills the caches
}

// diffComponent: a component changes when its inputs do (Pulumi calls Construct on every
// update; cairn calls it when the inputs changed, see docs/design/004-pulumi-plan.md). A new
// component in a preview is constructed with dryRun, so its children are planned.
func (p *Provider) diffComponent(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	if req.ID == "" && isNull(req.OldProps) {
		c, err := p.createComponent(ctx, provider.CreateRequest{Resource: req.Resource, Props: req.NewProps}, true)
		if err != nil {
			return provider.DiffResponse{}, err
		}
		return provider.DiffResponse{Changed: true, Planned: c.Outputs, Diagnostics: c.Diagnostics}, nil
	}
	if st, ok, _ := DecodeComponentState(req.Private); ok { // its children answer getResource
		for _, ch := range st.Children {
			if _, outs, err := ch.Values(); err == nil {
				p.comp.remember(ch.URN, ch.ID, outs)
			}
		}
	}
	return inputDiff(req.OldProps, req.NewProps), nil
}

func (p *Provider) createComponent(ctx context.Context, req provider.CreateRequest, preview bool) (provider.CreateResponse, error) {
	r, err := p.construct(ctx, req.Resource, req.Props, ComponentState{}, preview)
	return provider.CreateResponse{ID: r.id, Outputs: r.outputs, Private: r.private, Diagnostics: r.diags}, err
}

func (p *Provider) updateComponent(ctx context.Context, req provider.UpdateRequest, preview bool) (provider.UpdateResponse, error) {
	prior, _, err := DecodeComponentState(req.Private)
	if err != nil {
		return provider.UpdateResponse{ID: req.ID}, err
	}
	r, err := p.construct(ctx, req.Resource, req.NewProps, prior, preview)
	if r.id == "" {
		r.id = req.ID
	}
	if r.private == nil {
		r.private = req.Private
	}
	return provider.UpdateResponse{ID: r.id, Outputs: r.outputs, Private: r.private, Diagnostics: r.diags}, err
}

// deleteComponent deletes the component's children, the last registered first; the
// component itself is nothing in the plugin.
func (p *Provider) deleteComponent(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
	var resp provider.DeleteResponse
	st, _, err := DecodeComponentState(req.Private)
	if err != nil {
		return resp, err
	}
	for i := len(st.Children) - 1; i >= 0; i-- {
		ch := st.Children[i]
		d, err := p.deleteChild(ctx, req.Resource.StackName, ch)
		if err != nil {
			return resp, err
		}
		if d.HasErrors() {
			resp.Diagnostics = d
			return resp, nil
		}
	}
	return resp, nil
}

func (p *Provider) deleteChild(ctx context.Context, stack string, ch ComponentChild) (diag.Diagnostics, error) {
	if !ch.Custom || ch.ID == "" {
		return nil, nil
	}
	ins, outs, err := ch.Values()
	if err != nil {
		return nil, err
	}
	d, err := p.Delete(ctx, provider.DeleteRequest{Resource: childResource(stack, ch), ID: ch.ID, Props: ins, Outputs: outs})
	return d.Diagnostics, err
}

func childResource(stack string, ch ComponentChild) provider.Resource {
	return provider.Resource{StackName: stack, Name: ch.Name, Type: ch.Type, URN: ch.URN}
}

// constructed is what a Construct made: the component's id (its URN: a component has no
// physical id, and a cairn row needs one), outputs, and private data (ComponentState).
type constructed struct {
	id      string
	outputs cty.Value
	private []byte
	diags   diag.Diagnostics
}

// construct runs Construct with a monitor served for the call. prior holds the children of
// the last Construct; those not registered again are deleted once it succeeded. A failed
// Construct still returns what its children became, so that the row keeps them.
func (p *Provider) construct(ctx context.Context, res provider.Resource, inputs cty.Value, prior ComponentState, dryRun bool) (constructed, error) {
	var out constructed
	m, err := serveMonitor(ctx, p, res, prior, dryRun)
	if err != nil {
		return out, err
	}
	defer m.stop()
	args, err := p.enc(true).toStruct(inputs)
	if err != nil {
		return out, err
	}
	deps := map[string]*pulumirpc.ConstructRequest_PropertyDependencies{}
	for k := range args.GetFields() {
		deps[k] = &pulumirpc.ConstructRequest_PropertyDependencies{}
	}
	providers := map[string]string{}
	if self := p.comp.selfRef(); self != "" {
		providers[p.opts.Package] = self
	}
	var r *pulumirpc.ConstructResponse
	err = p.call(ctx, func(ctx context.Context) (err error) {
		r, err = p.proc.client.Construct(ctx, &pulumirpc.ConstructRequest{
			Project: m.project, Stack: res.StackName, Organization: "organization", DryRun: dryRun, Parallel: 1,
			MonitorEndpoint: m.address, Type: res.Type, Name: res.Name, Parent: m.stackURN(),
			Inputs: args, InputDependencies: deps, Providers: providers, Config: map[string]string{},
			AcceptsOutputValues: true,
		})
		return err
	})
	st := m.state()
	if err != nil { // the children of the last Construct not registered again still exist
		for _, ch := range prior.Children {
			if !m.registered(ch.URN) {
				st.Children = append(st.Children, ch)
			}
		}
	}
	if !dryRun {
		b, encErr := st.Encode() // err is still Construct's: a failure must not read as success
		if encErr != nil {
			return out, encErr
		}
		out.private = b
	}
	out.id = st.URN
	if out.id == "" {
		out.id = p.urn(res.StackName, res.Type, res.Name)
	}
	if err != nil {
		out.outputs = cty.EmptyObjectVal
		if d, ok := providerDiag(err, "Construct"); ok {
			out.diags = append(out.diags, d)
			return out, nil
		}
		return out, p.rpcErr("Construct", err)
	}
	if out.outputs, err = p.decode(r.GetState(), inputs); err != nil {
		return out, err
	}
	out.outputs = canonicalRefs(out.outputs)
	if !dryRun && !out.outputs.IsWhollyKnown() {
		return out, fmt.Errorf("provider %s: Construct of %s returned unknown outputs outside a preview", p.opts.Package, res.Name)
	}
	if dryRun {
		return out, nil
	}
	// Children of the last Construct not registered this time are gone from the program:
	// deleted, the last registered first, as Pulumi deletes them after the update.
	for i := len(prior.Children) - 1; i >= 0; i-- {
		ch := prior.Children[i]
		if m.registered(ch.URN) {
			continue
		}
		d, err := p.deleteChild(ctx, res.StackName, ch)
		if err == nil && d.HasErrors() {
			err = d.Err()
		}
		if err != nil {
			st.Children = append(st.Children, ch) // still there: kept for the next try
			out.private, _ = st.Encode()
			out.diags = append(out.diags, diag.Errorf(diag.Range{}, "", "deleting %s, no longer part of component %s: %s", ch.URN, res.Name, err))
			return out, nil
		}
	}
	return out, nil
}

// structOr is s, or an empty bag.
func structOr(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	return s
}
