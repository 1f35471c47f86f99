package pulumirpc

import (
	"context"
	"slices"
	"testing"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	psig "github.com/pulumi/pulumi/sdk/v3/go/common/resource/sig"
)

// What a plugin (or anything reaching a Construct's monitor) may send that must neither pass
// for success, nor orphan objects, nor crash the server. Found by a review of the monitor.

// A Construct that fails (a child's Check refused) fails the create; an update whose Construct
// fails keeps the children it did not reach, and deletes none of them.
func TestFailedConstructIsAFailure(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := provider.Resource{StackName: "dev", Name: "g", Type: group}
	if c, err := p.Create(ctx, provider.CreateRequest{Resource: provider.Resource{StackName: "dev", Name: "f", Type: group},
		Props: groupOf(cty.StringVal("a"), cty.NumberIntVal(5))}); err == nil && !c.Diagnostics.HasErrors() {
		t.Errorf("a failed Construct created: %#v", c.Outputs)
	}
	in := groupOf(cty.StringVal("a"), cty.StringVal("b"))
	c, err := p.Create(ctx, provider.CreateRequest{Resource: res, Props: in})
	if err != nil || c.Diagnostics.HasErrors() {
		t.Fatal(err, c.Diagnostics)
	}
	u, err := p.Update(ctx, provider.UpdateRequest{Resource: res, ID: c.ID, OldProps: in, OldOutputs: c.Outputs, Private: c.Private,
		NewProps: groupOf(cty.NumberIntVal(5), cty.StringVal("b"))})
	if err == nil && !u.Diagnostics.HasErrors() {
		t.Errorf("a failed Construct updated")
	}
	if slices.Contains(calls(t, dir), "Delete g-1") {
		t.Errorf("a failed Construct deleted a child: %v", calls(t, dir))
	}
	if st, _, _ := DecodeComponentState(u.Private); len(st.Children) != 2 {
		t.Errorf("children kept after the failed update: %+v", st.Children)
	}
}

// Secret signatures and secret byte-string values in a plugin's reply are values, not a panic.
func TestSecretSignaturesDoNotPanic(t *testing.T) {
	s, _ := structpb.NewStruct(map[string]any{"x": map[string]any{
		psig.Key: map[string]any{psig.Key: psig.Secret, "value": psig.ResourceReference}, "urn": "u"}})
	v, err := fromStruct(s)
	if err != nil {
		t.Fatal(err)
	}
	canonicalRefs(v)
	b := cty.ObjectVal(map[string]cty.Value{"b": cty.ObjectVal(map[string]cty.Value{
		psig.Key: cty.StringVal(psig.ByteString), "value": value.Secret(cty.StringVal("aGk="))})})
	if _, err := (encoder{secrets: true}).toStruct(b); err != nil {
		t.Fatal(err)
	}
}

// monitorClient serves a Construct's monitor for g and dials it as a plugin would.
func monitorClient(t *testing.T, p *Provider) (*monitor, pulumirpc.ResourceMonitorClient) {
	t.Helper()
	m, err := serveMonitor(context.Background(), p, provider.Resource{StackName: "dev", Name: "g", Type: group}, ComponentState{}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.stop)
	conn, err := grpc.NewClient(m.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return m, pulumirpc.NewResourceMonitorClient(conn)
}

// A URN registered twice is refused before a second object is made; a component registered
// as a custom child is refused, not constructed inside the Construct.
func TestMonitorRefusesBeforeItMakes(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, mon := monitorClient(t, p)
	obj, _ := structpb.NewStruct(map[string]any{"value": "x"})
	for range 2 {
		_, _ = mon.RegisterResource(ctx, &pulumirpc.RegisterResourceRequest{Type: thing, Name: "dup", Custom: true, Object: obj})
	}
	if n, rec := things(t, dir), len(m.state().Children); n != 1 || rec != 1 {
		t.Errorf("a URN registered twice: %d objects, %d recorded", n, rec)
	}
	nested, _ := structpb.NewStruct(map[string]any{"values": []any{"a"}})
	if _, err := mon.RegisterResource(ctx, &pulumirpc.RegisterResourceRequest{Type: group, Name: "nested", Custom: true, Object: nested}); err == nil {
		t.Errorf("a component registered as a custom child was accepted")
	}
	if slices.Contains(calls(t, dir), "Construct nested") {
		t.Errorf("a component was constructed inside a Construct: %v", calls(t, dir))
	}
}

// A caller of the monitor that hangs up in the middle of a child's create does not Cancel the
// plugin: the create finishes and is recorded.
func TestMonitorCallerHangupDoesNotCancelThePlugin(t *testing.T) {
	p, dir := launchCairntest(t)
	m, mon := monitorClient(t, p)
	obj, _ := structpb.NewStruct(map[string]any{"value": "x", "sleep": 2})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _ = mon.RegisterResource(ctx, &pulumirpc.RegisterResourceRequest{Type: thing, Name: "slow", Custom: true, Object: obj})
	for deadline := time.Now().Add(time.Minute); len(m.state().Children) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if slices.Contains(calls(t, dir), "Cancel") || len(m.state().Children) != 1 {
		t.Errorf("calls %v, recorded %+v", calls(t, dir), m.state().Children)
	}
}

// A provider configuration that is secret as a whole, or whose __internal is, is a value to
// pass on, not a panic (a program's explicit provider may be given either).
func TestSecretConfigurationsDoNotPanic(t *testing.T) {
	whole := value.Secret(cty.ObjectVal(map[string]cty.Value{internalKey: cty.EmptyObjectVal, "k": cty.StringVal("v")}))
	if got := withoutInternal(whole); !got.IsMarked() || got.Type().HasAttribute(internalKey) {
		t.Errorf("withoutInternal = %#v", got)
	}
	if got := withInternalOf(value.Secret(cty.ObjectVal(map[string]cty.Value{"k": cty.StringVal("v")})), whole); !got.IsMarked() {
		t.Errorf("withInternalOf lost the mark: %#v", got)
	}
	p := &Provider{opts: Options{Package: "x", Version: "1.0.0", Parameterization: &Parameterization{Name: "x", Version: "1.0.0", Plugin: "base"}}}
	inner := cty.ObjectVal(map[string]cty.Value{internalKey: value.Secret(cty.EmptyObjectVal)})
	if got := p.withSettings(whole); !got.IsMarked() || !got.Type().HasAttribute("version") {
		t.Errorf("withSettings of a secret configuration = %#v, want it secret, with its version", got)
	}
	if got := p.withSettings(inner); !got.Type().HasAttribute(internalKey) {
		t.Errorf("withSettings of a secret __internal = %#v", got)
	}
}
