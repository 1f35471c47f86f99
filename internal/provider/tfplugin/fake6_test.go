package tfplugin

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	tf6 "github.com/cairn-dev/cairn/internal/tfplugin6"
)

// fake6 is an in-process tfplugin6 provider with one resource type, fake_thing, whose schema
// uses what real providers use: computed and sensitive attributes, nested attribute types (a
// single object with a sensitive attribute, a list of objects with a computed attribute) and a
// set of nested blocks with an optional+computed attribute. Its behaviour is picked by the
// configured name: "slow" applies until StopProvider, "stubborn" applies until its context
// ends, "badplan" and "badapply" break the protocol's rules, "invalid" fails validation.
type fake6 struct {
	tf6.UnimplementedProviderServer
	noMetadata bool // answer GetMetadata with Unimplemented, as old servers do
	json       bool // answer with JSON DynamicValues where they can be

	mu               sync.Mutex
	calls            map[string]int
	stopped          chan struct{}
	region           string
	lastPlanProposed cty.Value
}

var (
	fakeSettingsTy = cty.Object(map[string]cty.Type{"mode": cty.String, "token": cty.String})
	fakeItemTy     = cty.Object(map[string]cty.Type{"key": cty.String, "derived": cty.String})
	fakeRuleTy     = cty.Object(map[string]cty.Type{"port": cty.Number, "proto": cty.String})
	fakeThingTy    = cty.Object(map[string]cty.Type{"id": cty.String, "name": cty.String, "secret": cty.String,
		"tags": cty.Map(cty.String), "settings": fakeSettingsTy, "items": cty.List(fakeItemTy), "rule": cty.Set(fakeRuleTy)})
	fakeDataTy = cty.Object(map[string]cty.Type{"input": cty.String, "output": cty.String})
)

const fakeThingVersion = 2

func newFake6() *fake6 { return &fake6{calls: map[string]int{}, stopped: make(chan struct{})} }

func (f *fake6) count(m string) {
	f.mu.Lock()
	f.calls[m]++
	f.mu.Unlock()
}

func (f *fake6) called(m string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[m]
}

// serve starts the fake on an in-memory listener and returns a provider over it.
func (f *fake6) serve(t *testing.T, opts Options) *Provider {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	tf6.RegisterProviderServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient("passthrough:///fake", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if opts.Name == "" {
		opts.Name = "fake"
	}
	p, err := NewFromConn(cc, 6, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fakeAttr(name, ty string, req, opt, comp, sens bool) *tf6.Schema_Attribute {
	return &tf6.Schema_Attribute{Name: name, Type: []byte(ty), Required: req, Optional: opt, Computed: comp, Sensitive: sens}
}

func (f *fake6) GetMetadata(ctx context.Context, _ *tf6.GetMetadata_Request) (*tf6.GetMetadata_Response, error) {
	f.count("GetMetadata")
	if f.noMetadata {
		return f.UnimplementedProviderServer.GetMetadata(ctx, nil)
	}
	return &tf6.GetMetadata_Response{ServerCapabilities: &tf6.ServerCapabilities{PlanDestroy: true, GetProviderSchemaOptional: true},
		Resources: []*tf6.GetMetadata_ResourceMetadata{{TypeName: "fake_thing"}}}, nil
}

func (f *fake6) GetProviderSchema(context.Context, *tf6.GetProviderSchema_Request) (*tf6.GetProviderSchema_Response, error) {
	f.count("GetProviderSchema")
	thing := &tf6.Schema_Block{
		Attributes: []*tf6.Schema_Attribute{
			fakeAttr("id", `"string"`, false, false, true, false),
			fakeAttr("name", `"string"`, true, false, false, false),
			fakeAttr("secret", `"string"`, false, true, false, true),
			fakeAttr("tags", `["map","string"]`, false, true, false, false),
			{Name: "settings", Optional: true, NestedType: &tf6.Schema_Object{Nesting: tf6.Schema_Object_SINGLE, Attributes: []*tf6.Schema_Attribute{
				fakeAttr("mode", `"string"`, false, true, false, false),
				fakeAttr("token", `"string"`, false, true, false, true),
			}}},
			{Name: "items", Optional: true, NestedType: &tf6.Schema_Object{Nesting: tf6.Schema_Object_LIST, Attributes: []*tf6.Schema_Attribute{
				fakeAttr("key", `"string"`, true, false, false, false),
				fakeAttr("derived", `"string"`, false, false, true, false),
			}}},
		},
		BlockTypes: []*tf6.Schema_NestedBlock{{TypeName: "rule", Nesting: tf6.Schema_NestedBlock_SET, Block: &tf6.Schema_Block{
			Attributes: []*tf6.Schema_Attribute{
				fakeAttr("port", `"number"`, true, false, false, false),
				fakeAttr("proto", `"string"`, false, true, true, false),
			}}}},
	}
	data := &tf6.Schema_Block{Attributes: []*tf6.Schema_Attribute{
		fakeAttr("input", `"string"`, true, false, false, false),
		fakeAttr("output", `"string"`, false, false, true, false),
	}}
	return &tf6.GetProviderSchema_Response{
		Provider:           &tf6.Schema{Block: &tf6.Schema_Block{Attributes: []*tf6.Schema_Attribute{fakeAttr("region", `"string"`, false, true, false, false)}}},
		ResourceSchemas:    map[string]*tf6.Schema{"fake_thing": {Version: fakeThingVersion, Block: thing}},
		DataSourceSchemas:  map[string]*tf6.Schema{"fake_data": {Block: data}},
		ServerCapabilities: &tf6.ServerCapabilities{PlanDestroy: true, GetProviderSchemaOptional: !f.noMetadata},
	}, nil
}

func (f *fake6) in(t cty.Type, d *tf6.DynamicValue) cty.Value {
	if d == nil {
		return cty.NullVal(t)
	}
	v, err := msgpack.Unmarshal(d.Msgpack, t)
	if err != nil {
		panic(err)
	}
	return v
}

func (f *fake6) out(v cty.Value) *tf6.DynamicValue {
	if f.json && v.IsWhollyKnown() { // JSON cannot carry unknowns
		b, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			panic(err)
		}
		return &tf6.DynamicValue{Json: b}
	}
	b, err := msgpack.Marshal(v, v.Type())
	if err != nil {
		panic(err)
	}
	return &tf6.DynamicValue{Msgpack: b}
}

func diag6(summary string, steps ...*tf6.AttributePath_Step) *tf6.Diagnostic {
	return &tf6.Diagnostic{Severity: tf6.Diagnostic_ERROR, Summary: summary, Detail: "detail", Attribute: &tf6.AttributePath{Steps: steps}}
}

func attrStep(n string) *tf6.AttributePath_Step {
	return &tf6.AttributePath_Step{Selector: &tf6.AttributePath_Step_AttributeName{AttributeName: n}}
}

func (f *fake6) ValidateProviderConfig(context.Context, *tf6.ValidateProviderConfig_Request) (*tf6.ValidateProviderConfig_Response, error) {
	f.count("ValidateProviderConfig")
	return &tf6.ValidateProviderConfig_Response{}, nil
}

func (f *fake6) ConfigureProvider(_ context.Context, r *tf6.ConfigureProvider_Request) (*tf6.ConfigureProvider_Response, error) {
	f.count("ConfigureProvider")
	v := f.in(cty.Object(map[string]cty.Type{"region": cty.String}), r.Config)
	f.mu.Lock()
	if rv := v.GetAttr("region"); rv.IsKnown() && !rv.IsNull() {
		f.region = rv.AsString()
	}
	f.mu.Unlock()
	return &tf6.ConfigureProvider_Response{}, nil
}

func (f *fake6) ValidateResourceConfig(_ context.Context, r *tf6.ValidateResourceConfig_Request) (*tf6.ValidateResourceConfig_Response, error) {
	f.count("ValidateResourceConfig")
	v := f.in(fakeThingTy, r.Config)
	if n := v.GetAttr("name"); n.IsKnown() && !n.IsNull() && n.AsString() == "invalid" {
		return &tf6.ValidateResourceConfig_Response{Diagnostics: []*tf6.Diagnostic{
			diag6("bad key", attrStep("items"), &tf6.AttributePath_Step{Selector: &tf6.AttributePath_Step_ElementKeyInt{ElementKeyInt: 0}}, attrStep("key")),
			diag6("bad tag", attrStep("tags"), &tf6.AttributePath_Step{Selector: &tf6.AttributePath_Step_ElementKeyString{ElementKeyString: "a.b"}}),
			{Severity: tf6.Diagnostic_WARNING, Summary: "just so you know"},
		}}, nil
	}
	return &tf6.ValidateResourceConfig_Response{}, nil
}

func (f *fake6) ValidateDataResourceConfig(context.Context, *tf6.ValidateDataResourceConfig_Request) (*tf6.ValidateDataResourceConfig_Response, error) {
	f.count("ValidateDataResourceConfig")
	return &tf6.ValidateDataResourceConfig_Response{}, nil
}

func name(v cty.Value) string {
	if v.IsNull() || !v.GetAttr("name").IsKnown() || v.GetAttr("name").IsNull() {
		return ""
	}
	return v.GetAttr("name").AsString()
}

func (f *fake6) PlanResourceChange(_ context.Context, r *tf6.PlanResourceChange_Request) (*tf6.PlanResourceChange_Response, error) {
	f.count("PlanResourceChange")
	prior, proposed := f.in(fakeThingTy, r.PriorState), f.in(fakeThingTy, r.ProposedNewState)
	f.mu.Lock()
	f.lastPlanProposed = proposed
	f.mu.Unlock()
	if proposed.IsNull() {
		return &tf6.PlanResourceChange_Response{PlannedState: f.out(proposed)}, nil
	}
	planned, _ := cty.Transform(proposed, func(p cty.Path, v cty.Value) (cty.Value, error) {
		if !v.IsNull() || len(p) == 0 {
			return v, nil
		}
		last, _ := p[len(p)-1].(cty.GetAttrStep)
		switch last.Name {
		case "id", "derived":
			return cty.UnknownVal(cty.String), nil
		case "proto":
			return cty.StringVal("tcp"), nil
		}
		return v, nil
	})
	resp := &tf6.PlanResourceChange_Response{PlannedPrivate: []byte("planned-private")}
	if name(planned) == "badplan" {
		m := planned.AsValueMap()
		m["secret"] = cty.StringVal("not what you configured")
		planned = cty.ObjectVal(m)
	}
	if !prior.IsNull() && name(prior) != name(planned) {
		resp.RequiresReplace = append(resp.RequiresReplace, &tf6.AttributePath{Steps: []*tf6.AttributePath_Step{attrStep("name")}})
	}
	resp.PlannedState = f.out(planned)
	return resp, nil
}

func (f *fake6) ApplyResourceChange(ctx context.Context, r *tf6.ApplyResourceChange_Request) (*tf6.ApplyResourceChange_Response, error) {
	f.count("ApplyResourceChange")
	planned := f.in(fakeThingTy, r.PlannedState)
	if planned.IsNull() {
		return &tf6.ApplyResourceChange_Response{NewState: f.out(planned)}, nil
	}
	switch name(planned) {
	case "slow":
		select {
		case <-f.stopped:
		case <-ctx.Done():
		}
		return &tf6.ApplyResourceChange_Response{Diagnostics: []*tf6.Diagnostic{diag6("stopped")}}, nil
	case "stubborn":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	state, _ := cty.Transform(planned, func(p cty.Path, v cty.Value) (cty.Value, error) {
		if v.IsKnown() || len(p) == 0 {
			return v, nil
		}
		last, _ := p[len(p)-1].(cty.GetAttrStep)
		if last.Name == "id" {
			return cty.StringVal("id-" + name(planned)), nil
		}
		return cty.StringVal("derived"), nil
	})
	if name(planned) == "badapply" {
		m := state.AsValueMap()
		m["secret"] = cty.StringVal("changed behind your back")
		state = cty.ObjectVal(m)
	}
	return &tf6.ApplyResourceChange_Response{NewState: f.out(state), Private: []byte("applied-private")}, nil
}

func (f *fake6) ReadResource(_ context.Context, r *tf6.ReadResource_Request) (*tf6.ReadResource_Response, error) {
	f.count("ReadResource")
	return &tf6.ReadResource_Response{NewState: r.CurrentState, Private: r.Private}, nil
}

// UpgradeResourceState migrates version 1 states, which had an attribute "old".
func (f *fake6) UpgradeResourceState(_ context.Context, r *tf6.UpgradeResourceState_Request) (*tf6.UpgradeResourceState_Response, error) {
	f.count("UpgradeResourceState")
	var m map[string]any
	if err := json.Unmarshal(r.RawState.Json, &m); err != nil {
		return nil, err
	}
	delete(m, "old")
	b, _ := json.Marshal(m)
	v, err := ctyjson.Unmarshal(b, fakeThingTy)
	if err != nil {
		return &tf6.UpgradeResourceState_Response{Diagnostics: []*tf6.Diagnostic{diag6(err.Error())}}, nil
	}
	return &tf6.UpgradeResourceState_Response{UpgradedState: f.out(v)}, nil
}

func (f *fake6) ImportResourceState(_ context.Context, r *tf6.ImportResourceState_Request) (*tf6.ImportResourceState_Response, error) {
	f.count("ImportResourceState")
	state := cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(r.Id), "name": cty.StringVal("imported"), "secret": cty.StringVal("s"),
		"tags": cty.NullVal(cty.Map(cty.String)), "settings": cty.NullVal(fakeSettingsTy), "items": cty.NullVal(cty.List(fakeItemTy)),
		"rule": cty.SetValEmpty(fakeRuleTy)})
	return &tf6.ImportResourceState_Response{ImportedResources: []*tf6.ImportResourceState_ImportedResource{
		{TypeName: "fake_thing", State: f.out(state), Private: []byte("imported")}}}, nil
}

func (f *fake6) ReadDataSource(_ context.Context, r *tf6.ReadDataSource_Request) (*tf6.ReadDataSource_Response, error) {
	f.count("ReadDataSource")
	v := f.in(fakeDataTy, r.Config)
	return &tf6.ReadDataSource_Response{State: f.out(cty.ObjectVal(map[string]cty.Value{"input": v.GetAttr("input"), "output": v.GetAttr("input")}))}, nil
}

func (f *fake6) StopProvider(context.Context, *tf6.StopProvider_Request) (*tf6.StopProvider_Response, error) {
	f.count("StopProvider")
	f.mu.Lock()
	select {
	case <-f.stopped:
	default:
		close(f.stopped)
	}
	f.mu.Unlock()
	return &tf6.StopProvider_Response{}, nil
}
