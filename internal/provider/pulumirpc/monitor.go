package pulumirpc

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/pulumiurn"
)

// monitor is the ResourceMonitor cairn serves to a plugin for one Construct: the plugin
// registers the component (answered with its URN), its children (each run through this
// provider instance: Check, then Create, or Diff and Update or replace against the child's
// last state) and the component's outputs, and may ask for a resource it registered
// (`pulumi:pulumi:getResource`) or invoke its own package's functions.
type monitor struct {
	pulumirpc.UnimplementedResourceMonitorServer
	// run is the Construct call's context: the children's calls follow the run's
	// cancellation, not the monitor caller's (a caller that hangs up must not Cancel the
	// tenant's whole plugin in the middle of a child's create).
	run     context.Context
	p       *Provider
	res     provider.Resource
	project string
	dryRun  bool
	prior   map[string]ComponentChild
	address string
	srv     *grpc.Server

	mu       sync.Mutex
	selfURN  string
	children []ComponentChild
	seen     map[string]bool
}

func serveMonitor(ctx context.Context, p *Provider, res provider.Resource, prior ComponentState, dryRun bool) (*monitor, error) {
	project := pulumiurn.Project(res.URN) // the engine's URN names the program's project
	if project == "" {
		project = p.opts.Project
	}
	if project == "" {
		project = res.StackName
	}
	m := &monitor{run: ctx, p: p, res: res, project: project, dryRun: dryRun, prior: map[string]ComponentChild{}, seen: map[string]bool{}}
	for _, ch := range prior.Children {
		m.prior[ch.URN] = ch
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("provider %s: resource monitor: %w", p.opts.Package, err)
	}
	m.address = lis.Addr().String()
	m.srv = grpc.NewServer(grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	pulumirpc.RegisterResourceMonitorServer(m.srv, m)
	go func() { _ = m.srv.Serve(lis) }()
	return m, nil
}

func (m *monitor) stop() { m.srv.Stop() }

func (m *monitor) stackURN() string {
	return m.urn("pulumi:pulumi:Stack", m.project+"-"+m.res.StackName)
}

func (m *monitor) urn(chain, name string) string {
	return "urn:pulumi:" + m.res.StackName + "::" + m.project + "::" + chain + "::" + name
}

// childURN is the URN of name registered under parent: the parent's type chain, then typ.
func (m *monitor) childURN(typ, name, parent string) string {
	if parent == "" || parent == m.stackURN() {
		return m.urn(typ, name)
	}
	parts := strings.SplitN(strings.TrimPrefix(parent, "urn:pulumi:"), "::", 4)
	if len(parts) != 4 {
		return m.urn(typ, name)
	}
	return m.urn(parts[2]+"$"+typ, name)
}

// state is the component's record after the Construct: its URN and the children it
// registered, in registration order.
func (m *monitor) state() ComponentState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ComponentState{URN: m.selfURN, Children: append([]ComponentChild(nil), m.children...)}
}

func (m *monitor) registered(urn string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[urn]
}

func (m *monitor) record(ch ComponentChild) error {
	if err := m.claim(ch.URN); err != nil {
		return err
	}
	m.add(ch)
	return nil
}

// claim takes urn for one registration: a second is refused before it makes anything.
func (m *monitor) claim(urn string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen[urn] {
		return status.Errorf(codes.AlreadyExists, "resource %s registered twice", urn)
	}
	m.seen[urn] = true
	return nil
}

// release gives back a claim whose registration failed.
func (m *monitor) release(urn string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, urn)
}

// add records a child whose URN was claimed.
func (m *monitor) add(ch ComponentChild) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.children = append(m.children, ch)
}

func (m *monitor) SupportsFeature(_ context.Context, req *pulumirpc.SupportsFeatureRequest) (*pulumirpc.SupportsFeatureResponse, error) {
	switch req.GetId() {
	case "secrets", "resourceReferences", "outputValues":
		return &pulumirpc.SupportsFeatureResponse{HasSupport: true}, nil
	}
	return &pulumirpc.SupportsFeatureResponse{}, nil
}

func (m *monitor) GetDeploymentInfo(context.Context, *emptypb.Empty) (*pulumirpc.DeploymentInfo, error) {
	return &pulumirpc.DeploymentInfo{Project: m.project, Stack: m.res.StackName, Organization: "organization", DryRun: m.dryRun}, nil
}

func (m *monitor) RegisterResource(ctx context.Context, req *pulumirpc.RegisterResourceRequest) (*pulumirpc.RegisterResourceResponse, error) {
	urn := m.childURN(req.GetType(), req.GetName(), req.GetParent())
	if req.GetRemote() {
		return nil, status.Errorf(codes.Unimplemented, "cairn does not construct a component inside a component (%s)", urn)
	}
	if !req.GetCustom() {
		return m.registerComponent(req, urn)
	}
	if strings.HasPrefix(req.GetType(), "pulumi:providers:") {
		return nil, status.Errorf(codes.Unimplemented, "cairn does not register a provider resource inside a component (%s)", urn)
	}
	if err := m.servedHere(m.run, req, urn); err != nil {
		return nil, err
	}
	if err := m.claim(urn); err != nil {
		return nil, err
	}
	news, err := fromStruct(req.GetObject())
	if err != nil {
		m.release(urn)
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", urn, err)
	}
	ch := ComponentChild{URN: urn, Type: req.GetType(), Name: req.GetName(), Parent: req.GetParent(), Custom: true, Deps: req.GetDependencies()}
	var prior *ComponentChild
	if pc, ok := m.prior[urn]; ok && pc.Custom && pc.ID != "" {
		prior = &pc
	}
	id, ins, outs, err := m.apply(m.run, ch, news, prior)
	if err != nil {
		m.release(urn) // not registered: a prior child of that URN is still the component's
		return nil, err
	}
	ch.ID = id
	if !m.dryRun {
		if ch.Inputs, err = marshalValue(ins); err != nil {
			return nil, err
		}
		if ch.Outputs, err = marshalValue(outs); err != nil {
			return nil, err
		}
		m.p.comp.remember(urn, id, outs)
	}
	m.add(ch)
	obj, err := (encoder{secrets: req.GetAcceptSecrets(), preview: true}).toStruct(outs)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.RegisterResourceResponse{Urn: urn, Id: id, Object: obj}, nil
}

// registerComponent answers the registration of the component itself, or of a component the
// plugin's code makes inside it (which has no lifecycle of its own: only a place in the tree).
func (m *monitor) registerComponent(req *pulumirpc.RegisterResourceRequest, urn string) (*pulumirpc.RegisterResourceResponse, error) {
	if req.GetType() == m.res.Type && req.GetName() == m.res.Name && (req.GetParent() == "" || req.GetParent() == m.stackURN()) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.selfURN != "" {
			return nil, status.Errorf(codes.AlreadyExists, "component %s registered twice", urn)
		}
		m.selfURN = urn
		return &pulumirpc.RegisterResourceResponse{Urn: urn, Object: structOr(nil)}, nil
	}
	ins, err := fromStruct(req.GetObject())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", urn, err)
	}
	ch := ComponentChild{URN: urn, Type: req.GetType(), Name: req.GetName(), Parent: req.GetParent()}
	if !m.dryRun && ins.LengthInt() > 0 {
		if ch.Inputs, err = marshalValue(ins); err != nil {
			return nil, err
		}
	}
	if err := m.record(ch); err != nil {
		return nil, err
	}
	return &pulumirpc.RegisterResourceResponse{Urn: urn, Object: structOr(nil)}, nil
}

// servedHere checks that this instance can serve the child: a type of its own package, with
// no provider named or this instance's own reference. Children of other packages (through
// their default or an explicit provider) are not served yet.
func (m *monitor) servedHere(ctx context.Context, req *pulumirpc.RegisterResourceRequest, urn string) error {
	if m.p.isOwn(req.GetType()) || m.p.isComponent(ctx, req.GetType()) { // a component registered as custom would construct without end
		return status.Errorf(codes.Unimplemented, "cairn does not construct a component or register a provider inside a component (%s)", urn)
	}
	pkg, _, _ := strings.Cut(req.GetType(), ":")
	if pkg != m.p.opts.Package {
		return status.Errorf(codes.Unimplemented, "cairn serves a component's children through the component's own provider only: %s is of package %s, not %s", urn, pkg, m.p.opts.Package)
	}
	if ref := req.GetProvider(); ref != "" && ref != m.p.comp.selfRef() {
		return status.Errorf(codes.Unimplemented, "cairn serves a component's children through the component's own provider only: %s names provider %s", urn, ref)
	}
	return nil
}

// apply runs a child's lifecycle: Check, then Create (new), or Diff and Update or replace
// (known from the last Construct); a preview asks the plugin what it would do. It returns the
// child's id, checked inputs and outputs.
func (m *monitor) apply(ctx context.Context, ch ComponentChild, news cty.Value, prior *ComponentChild) (string, cty.Value, cty.Value, error) {
	p, r := m.p, childResource(m.res.StackName, ch)
	olds, oldOuts := cty.EmptyObjectVal, cty.EmptyObjectVal
	if prior != nil {
		var err error
		if olds, oldOuts, err = prior.Values(); err != nil {
			return "", cty.NilVal, cty.NilVal, err
		}
	}
	ck, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: news, OldProps: olds})
	if err != nil {
		return "", cty.NilVal, cty.NilVal, err
	}
	if len(ck.Failures) > 0 {
		var why []string
		for _, f := range ck.Failures {
			why = append(why, strings.TrimPrefix(f.Property+": "+f.Reason, ": "))
		}
		return "", cty.NilVal, cty.NilVal, status.Errorf(codes.InvalidArgument, "%s: %s", ch.URN, strings.Join(why, "; "))
	}
	ins := ck.Props
	if prior == nil {
		return m.create(ctx, r, ins)
	}
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: r, ID: prior.ID, OldProps: olds, NewProps: ins, OldOutputs: oldOuts})
	if err == nil && d.Diagnostics.HasErrors() {
		err = d.Diagnostics.Err()
	}
	switch {
	case err != nil:
		return "", cty.NilVal, cty.NilVal, status.Errorf(codes.Unknown, "%s: %v", ch.URN, err)
	case !d.Changed:
		return prior.ID, olds, oldOuts, nil
	case d.Replace:
		if m.dryRun {
			return m.create(ctx, r, ins)
		}
		// Checked again with no olds, as Pulumi checks a replacement.
		ck, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: news})
		if err != nil {
			return "", cty.NilVal, cty.NilVal, err
		}
		if d.DeleteBeforeReplace {
			if err := m.deleteOld(ctx, *prior); err != nil {
				return "", cty.NilVal, cty.NilVal, err
			}
		}
		id, ins, outs, err := m.create(ctx, r, ck.Props)
		if err != nil || d.DeleteBeforeReplace {
			return id, ins, outs, err
		}
		return id, ins, outs, m.deleteOld(ctx, *prior)
	}
	req := provider.UpdateRequest{Resource: r, ID: prior.ID, OldProps: olds, NewProps: ins, OldOutputs: oldOuts}
	var u provider.UpdateResponse
	if m.dryRun {
		u, err = p.PreviewUpdate(ctx, req)
	} else {
		u, err = p.Update(ctx, req)
	}
	if err == nil && u.Diagnostics.HasErrors() {
		err = u.Diagnostics.Err()
	}
	if err != nil {
		return "", cty.NilVal, cty.NilVal, status.Errorf(codes.Unknown, "%s: %v", ch.URN, err)
	}
	return prior.ID, ins, u.Outputs, nil
}

func (m *monitor) create(ctx context.Context, r provider.Resource, ins cty.Value) (string, cty.Value, cty.Value, error) {
	var c provider.CreateResponse
	var err error
	if m.dryRun {
		c, err = m.p.PreviewCreate(ctx, provider.CreateRequest{Resource: r, Props: ins})
	} else {
		c, err = m.p.Create(ctx, provider.CreateRequest{Resource: r, Props: ins})
	}
	if err == nil && c.Diagnostics.HasErrors() {
		err = c.Diagnostics.Err()
	}
	if err != nil {
		return "", cty.NilVal, cty.NilVal, status.Errorf(codes.Unknown, "%s: %v", r.URN, err)
	}
	return c.ID, ins, c.Outputs, nil
}

func (m *monitor) deleteOld(ctx context.Context, old ComponentChild) error {
	d, err := m.p.deleteChild(ctx, m.res.StackName, old)
	if err == nil && d.HasErrors() {
		err = d.Err()
	}
	if err != nil {
		return status.Errorf(codes.Unknown, "deleting the replaced %s: %v", old.URN, err)
	}
	return nil
}

func (m *monitor) RegisterResourceOutputs(_ context.Context, req *pulumirpc.RegisterResourceOutputsRequest) (*emptypb.Empty, error) {
	outs, err := fromStruct(req.GetOutputs())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s: %v", req.GetUrn(), err)
	}
	outs = canonicalRefs(outs)
	if m.dryRun {
		return &emptypb.Empty{}, nil
	}
	b, err := marshalValue(outs)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.children {
		if m.children[i].URN == req.GetUrn() && !m.children[i].Custom {
			m.children[i].Outputs = b
		}
	}
	return &emptypb.Empty{}, nil
}

// Invoke answers `pulumi:pulumi:getResource` for resources this instance's Constructs
// registered, and passes the package's own functions to the plugin.
func (m *monitor) Invoke(ctx context.Context, req *pulumirpc.ResourceInvokeRequest) (*pulumirpc.ResourceInvokeResponse, error) {
	if req.GetTok() == "pulumi:pulumi:getResource" {
		urn := req.GetArgs().GetFields()["urn"].GetStringValue()
		k, ok := m.p.comp.lookup(urn)
		if !ok {
			return nil, status.Errorf(codes.NotFound, "resource %s is not known to this provider's components", urn)
		}
		state, err := (encoder{secrets: true, preview: true}).toStruct(k.outputs)
		if err != nil {
			return nil, err
		}
		return &pulumirpc.ResourceInvokeResponse{Return: &structpb.Struct{Fields: map[string]*structpb.Value{
			"urn": structpb.NewStringValue(urn), "id": structpb.NewStringValue(k.id), "state": structpb.NewStructValue(state),
		}}}, nil
	}
	pkg, _, _ := strings.Cut(req.GetTok(), ":")
	if pkg != m.p.opts.Package {
		return nil, status.Errorf(codes.Unimplemented, "cairn serves a component's invokes of its own package only (%s)", req.GetTok())
	}
	r, err := m.p.proc.client.Invoke(ctx, &pulumirpc.InvokeRequest{Tok: req.GetTok(), Args: structOr(req.GetArgs()), Preview: m.dryRun})
	if err != nil {
		return nil, err
	}
	return &pulumirpc.ResourceInvokeResponse{Return: r.GetReturn(), Failures: r.GetFailures()}, nil
}
