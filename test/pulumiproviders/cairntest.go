package main

// cairntest is cairn's own test provider, written against the Pulumi Go SDK's gRPC server
// interface, for what the conformance providers do not exercise: slow operations that honour
// Cancel, a create that fails after making its object (ErrorResourceInitFailed), a resource
// deleted behind the engine's back (Read answers an empty id), previews with unknowns, and
// detailed diffs with replaces, deleteBeforeReplace and stables.
//
// A custom type, cairntest:index:Thing, and a component, cairntest:index:Group
// (cairntest_group.go). The Thing's inputs:
//
//	value               string  changed in place
//	key                 string  a change replaces the thing
//	deleteBeforeReplace bool    Diff asks for delete-before-replace when it replaces
//	sleep               number  seconds Create/Update/Delete wait (the object becoming ready),
//	                            cut short by Cancel
//	failCreate          bool    Create makes the object, then reports it unhealthy
//
// Provider configuration: region (string). A change of region is a replacement (DiffConfig),
// so every thing is made anew in the new region, and the old ones must be deleted through a
// provider still configured with the old region: Create and Delete are logged with
// " region=<r>" when a region is configured, to show which configuration served them.
//
// Outputs: the inputs, plus `out` ("out-" + value; unknown in a preview until value is
// known) and `uid` (the id; stable across updates, unknown in a create's preview).
//
// With CAIRNTEST_DIR set, every object is a file DIR/things/<id>.json (delete the file to
// delete the object behind the engine's back), and every call the provider serves is appended
// to DIR/calls.log as "<Method> <name>[ preview]" so tests see what an engine asked and in
// which order (a Check that got old inputs is "Check(olds)").

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	cairntestVersion = "1.0.0"
	thingType        = "cairntest:index:Thing"
)

type cairntest struct {
	pulumirpc.UnimplementedResourceProviderServer

	dir string // CAIRNTEST_DIR: objects and the call log; "" keeps nothing

	cancelOnce sync.Once
	cancelled  chan struct{} // closed by Cancel: every wait ends early

	logMu sync.Mutex

	region string // the configured region ("" for none)
}

func newCairntest() *cairntest {
	return &cairntest{dir: os.Getenv("CAIRNTEST_DIR"), cancelled: make(chan struct{})}
}

// record appends one line to the call log.
func (p *cairntest) record(method, name string, preview bool) {
	if p.dir == "" {
		return
	}
	line := method
	if name != "" {
		line += " " + name
	}
	if preview {
		line += " preview"
	}
	p.logMu.Lock()
	defer p.logMu.Unlock()
	f, err := os.OpenFile(filepath.Join(p.dir, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

var keep = plugin.MarshalOptions{KeepUnknowns: true, KeepSecrets: true, KeepResources: true}

func unmarshal(s *structpb.Struct) (resource.PropertyMap, error) {
	m, err := plugin.UnmarshalProperties(s, keep)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "cannot decode properties: %v", err)
	}
	return m, nil
}

func marshal(m resource.PropertyMap) *structpb.Struct {
	s, err := plugin.MarshalProperties(m, keep)
	if err != nil {
		panic(err) // values this provider built itself
	}
	return s
}

func (p *cairntest) Handshake(context.Context, *pulumirpc.ProviderHandshakeRequest) (*pulumirpc.ProviderHandshakeResponse, error) {
	p.record("Handshake", "", false)
	return &pulumirpc.ProviderHandshakeResponse{AcceptSecrets: true, AcceptResources: true}, nil
}

func (p *cairntest) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: cairntestVersion}, nil
}

func (p *cairntest) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	return &pulumirpc.GetSchemaResponse{Schema: cairntestSchema}, nil
}

func (p *cairntest) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return &pulumirpc.CheckResponse{Inputs: req.GetNews()}, nil
}

// DiffConfig: a change of region replaces the provider, and so every thing it serves.
func (p *cairntest) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	olds, err := unmarshal(req.GetOldInputs())
	if err != nil {
		return nil, err
	}
	news, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	if o, n := plain(olds["region"]), plain(news["region"]); !o.DeepEquals(n) {
		return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_SOME, Diffs: []string{"region"}, Replaces: []string{"region"}}, nil
	}
	return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
}

func (p *cairntest) Configure(_ context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	p.record("Configure", "", false)
	args, err := unmarshal(req.GetArgs())
	if err != nil {
		return nil, err
	}
	if r := plain(args["region"]); r.IsString() {
		p.region = r.StringValue()
	}
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, AcceptResources: true, SupportsPreview: true}, nil
}

// inRegion is name as Create and Delete log it: with the configured region, when there is one.
func (p *cairntest) inRegion(name string) string {
	if p.region == "" {
		return name
	}
	return name + " region=" + p.region
}

// Cancel ends every wait in progress and every later one: the engine is going away.
func (p *cairntest) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	p.record("Cancel", "", false)
	p.cancelOnce.Do(func() { close(p.cancelled) })
	return &emptypb.Empty{}, nil
}

// Check reports bad inputs per property and fills value's default.
func (p *cairntest) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	method := "Check"
	if len(req.GetOlds().GetFields()) > 0 {
		method = "Check(olds)" // an update's check: the engine sent the stored inputs
	}
	p.record(method, req.GetName(), false)
	news, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	var failures []*pulumirpc.CheckFailure
	kinds := map[resource.PropertyKey]string{"value": "string", "key": "string", "deleteBeforeReplace": "bool", "failCreate": "bool", "sleep": "number"}
	for k, v := range news {
		want, ok := kinds[k]
		switch {
		case !ok:
			failures = append(failures, &pulumirpc.CheckFailure{Property: string(k), Reason: fmt.Sprintf("unknown property %q of %s", k, thingType)})
		case v.ContainsUnknowns():
		case !is(v, want):
			failures = append(failures, &pulumirpc.CheckFailure{Property: string(k), Reason: fmt.Sprintf("%s must be a %s", k, want)})
		case k == "sleep" && plain(v).NumberValue() < 0:
			failures = append(failures, &pulumirpc.CheckFailure{Property: "sleep", Reason: "sleep must not be negative"})
		}
	}
	if _, ok := news["value"]; !ok {
		news["value"] = resource.NewProperty("default")
	}
	return &pulumirpc.CheckResponse{Inputs: marshal(news), Failures: failures}, nil
}

func plain(v resource.PropertyValue) resource.PropertyValue {
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	return v
}

func is(v resource.PropertyValue, kind string) bool {
	v = plain(v)
	switch kind {
	case "string":
		return v.IsString()
	case "bool":
		return v.IsBool()
	default:
		return v.IsNumber()
	}
}

// Diff: value changes in place, key replaces; uid stays what it was unless replaced.
func (p *cairntest) Diff(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	p.record("Diff", req.GetName(), false)
	olds, err := unmarshal(req.GetOldInputs())
	if err != nil {
		return nil, err
	}
	if len(olds) == 0 { // an engine that does not send old inputs: the outputs hold them
		if olds, err = unmarshal(req.GetOlds()); err != nil {
			return nil, err
		}
	}
	news, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	resp := &pulumirpc.DiffResponse{HasDetailedDiff: true, DetailedDiff: map[string]*pulumirpc.PropertyDiff{}}
	for _, k := range []resource.PropertyKey{"value", "key", "deleteBeforeReplace", "sleep", "failCreate"} {
		o, had := olds[k]
		n, has := news[k]
		var kind pulumirpc.PropertyDiff_Kind
		switch {
		case !had && !has:
			continue
		case !had:
			kind = pulumirpc.PropertyDiff_ADD
		case !has:
			kind = pulumirpc.PropertyDiff_DELETE
		case n.ContainsUnknowns() || !plain(o).DeepEquals(plain(n)):
			kind = pulumirpc.PropertyDiff_UPDATE
		default:
			continue
		}
		if k == "key" {
			kind++ // ADD_REPLACE, DELETE_REPLACE, UPDATE_REPLACE follow their kinds
			resp.Replaces = append(resp.Replaces, string(k))
		}
		resp.Diffs = append(resp.Diffs, string(k))
		resp.DetailedDiff[string(k)] = &pulumirpc.PropertyDiff{Kind: kind, InputDiff: true}
	}
	if len(resp.Diffs) == 0 {
		resp.Changes = pulumirpc.DiffResponse_DIFF_NONE
		return resp, nil
	}
	resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	if len(resp.Replaces) > 0 {
		resp.DeleteBeforeReplace = plain(news["deleteBeforeReplace"]).IsBool() && plain(news["deleteBeforeReplace"]).BoolValue()
	} else {
		resp.Stables = []string{"uid"}
	}
	return resp, nil
}

// outputs are the inputs plus out and uid; unknown where the inputs are not known yet.
func outputs(id string, ins resource.PropertyMap) resource.PropertyMap {
	outs := ins.Copy()
	if id == "" {
		outs["uid"] = resource.MakeComputed(resource.NewProperty(""))
	} else {
		outs["uid"] = resource.NewProperty(id)
	}
	v := ins["value"]
	switch {
	case v.ContainsUnknowns():
		outs["out"] = resource.MakeComputed(resource.NewProperty(""))
	case v.IsSecret():
		outs["out"] = resource.MakeSecret(resource.NewProperty("out-" + plain(v).StringValue()))
	default:
		outs["out"] = resource.NewProperty("out-" + plain(v).StringValue())
	}
	return outs
}

func (p *cairntest) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	p.record("Create", p.inRegion(req.GetName()), req.GetPreview())
	ins, err := unmarshal(req.GetProperties())
	if err != nil {
		return nil, err
	}
	if req.GetPreview() {
		return &pulumirpc.CreateResponse{Properties: marshal(outputs("", ins))}, nil
	}
	if ins.ContainsUnknowns() {
		return nil, status.Errorf(codes.InvalidArgument, "Create of %s with unknown inputs outside a preview", req.GetName())
	}
	id := req.GetName() + "-" + suffix()
	outs := outputs(id, ins)
	if err := p.save(id, outs); err != nil {
		return nil, err
	}
	// The object exists from here on: a failure reports it with its id.
	var reasons []string
	if err := p.wait(ctx, ins); err != nil {
		reasons = append(reasons, fmt.Sprintf("%s did not become ready: %v", id, err))
	}
	if b := plain(ins["failCreate"]); b.IsBool() && b.BoolValue() {
		reasons = append(reasons, fmt.Sprintf("%s did not become ready: failCreate is set", id))
	}
	if len(reasons) > 0 {
		return nil, initFailed(id, outs, ins, reasons)
	}
	return &pulumirpc.CreateResponse{Id: id, Properties: marshal(outs)}, nil
}

func (p *cairntest) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	p.record("Update", req.GetName(), req.GetPreview())
	news, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	if req.GetPreview() {
		return &pulumirpc.UpdateResponse{Properties: marshal(outputs(req.GetId(), news))}, nil
	}
	outs := outputs(req.GetId(), news)
	if err := p.save(req.GetId(), outs); err != nil {
		return nil, err
	}
	if err := p.wait(ctx, news); err != nil {
		return nil, initFailed(req.GetId(), outs, news, []string{fmt.Sprintf("%s did not become ready: %v", req.GetId(), err)})
	}
	return &pulumirpc.UpdateResponse{Properties: marshal(outs)}, nil
}

func (p *cairntest) Delete(ctx context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	p.record("Delete", p.inRegion(req.GetName()), false)
	olds, err := unmarshal(req.GetProperties())
	if err != nil {
		return nil, err
	}
	if err := p.wait(ctx, olds); err != nil {
		// Nothing was deleted: Delete is atomic.
		return nil, status.Errorf(codes.Aborted, "delete of %s stopped before it began: %v", req.GetId(), err)
	}
	if p.dir != "" {
		if err := os.Remove(p.path(req.GetId())); err != nil && !os.IsNotExist(err) {
			return nil, status.Errorf(codes.Unavailable, "cannot delete %s: %v", req.GetId(), err)
		}
	}
	return &emptypb.Empty{}, nil
}

// Read answers what exists: with CAIRNTEST_DIR, the object's file (none: an empty id, the
// resource is gone); without it, what the engine sent.
func (p *cairntest) Read(_ context.Context, req *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	p.record("Read", req.GetName(), false)
	if p.dir == "" {
		return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: req.GetProperties(), Inputs: req.GetInputs()}, nil
	}
	b, err := os.ReadFile(p.path(req.GetId()))
	if os.IsNotExist(err) {
		return &pulumirpc.ReadResponse{}, nil
	}
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "cannot read %s: %v", req.GetId(), err)
	}
	var s structpb.Struct
	if err := s.UnmarshalJSON(b); err != nil {
		return nil, status.Errorf(codes.Internal, "object %s is corrupt: %v", req.GetId(), err)
	}
	outs, err := unmarshal(&s)
	if err != nil {
		return nil, err
	}
	ins := resource.PropertyMap{}
	for k, v := range outs {
		if k != "out" && k != "uid" {
			ins[k] = v
		}
	}
	return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: marshal(outs), Inputs: marshal(ins)}, nil
}

// wait sleeps the inputs' sleep seconds; Cancel or the call's end stops it early.
func (p *cairntest) wait(ctx context.Context, props resource.PropertyMap) error {
	s := plain(props["sleep"])
	if !s.IsNumber() || s.NumberValue() <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(s.NumberValue() * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-p.cancelled:
		return fmt.Errorf("the engine cancelled the operation")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func initFailed(id string, outs, ins resource.PropertyMap, reasons []string) error {
	st, err := status.New(codes.Unknown, reasons[0]).WithDetails(&pulumirpc.ErrorResourceInitFailed{
		Id: id, Properties: marshal(outs), Inputs: marshal(ins), Reasons: reasons,
	})
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return st.Err()
}

func (p *cairntest) path(id string) string { return filepath.Join(p.dir, "things", id+".json") }

func (p *cairntest) save(id string, outs resource.PropertyMap) error {
	if p.dir == "" {
		return nil
	}
	b, err := json.Marshal(marshal(outs).AsMap())
	if err != nil {
		return status.Errorf(codes.Internal, "cannot encode %s: %v", id, err)
	}
	if err := os.MkdirAll(filepath.Join(p.dir, "things"), 0o755); err != nil {
		return status.Errorf(codes.Unavailable, "cannot store %s: %v", id, err)
	}
	if err := os.WriteFile(p.path(id), b, 0o644); err != nil {
		return status.Errorf(codes.Unavailable, "cannot store %s: %v", id, err)
	}
	return nil
}

func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var cairntestSchema = func() string {
	prop := func(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }
	inputs := map[string]any{
		"value":               prop("string", "Changed in place."),
		"key":                 prop("string", "A change replaces the thing."),
		"deleteBeforeReplace": prop("boolean", "Ask for delete-before-replace when replaced."),
		"sleep":               prop("number", "Seconds Create, Update and Delete wait; Cancel cuts the wait short."),
		"failCreate":          prop("boolean", "Create makes the thing, then reports it unhealthy."),
	}
	outs := map[string]any{"out": prop("string", "\"out-\" + value."), "uid": prop("string", "The id; stable across updates.")}
	for k, v := range inputs {
		outs[k] = v
	}
	required := []string{"out", "uid", "value"}
	slices.Sort(required)
	b, err := json.Marshal(map[string]any{
		"name": "cairntest", "version": cairntestVersion,
		"description": "cairn's test provider: slow operations, partial failures, deletions behind the engine's back.",
		"provider":    map[string]any{"inputProperties": map[string]any{"region": prop("string", "Where things are made; a change replaces them.")}},
		"resources": map[string]any{thingType: map[string]any{
			"description": "A thing kept in $CAIRNTEST_DIR/things.", "inputProperties": inputs,
			"properties": outs, "required": required,
		}, groupType: groupSchema},
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}()
