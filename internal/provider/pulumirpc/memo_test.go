package pulumirpc

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"

	"github.com/cairn-dev/cairn/internal/provider"
)

// countingClient counts the calls cairn sends to a real plugin.
type countingClient struct {
	pulumirpc.ResourceProviderClient
	check, checkConfig, configure atomic.Int32
}

func (c *countingClient) Check(ctx context.Context, in *pulumirpc.CheckRequest, opts ...grpc.CallOption) (*pulumirpc.CheckResponse, error) {
	c.check.Add(1)
	return c.ResourceProviderClient.Check(ctx, in, opts...)
}

func (c *countingClient) CheckConfig(ctx context.Context, in *pulumirpc.CheckRequest, opts ...grpc.CallOption) (*pulumirpc.CheckResponse, error) {
	c.checkConfig.Add(1)
	return c.ResourceProviderClient.CheckConfig(ctx, in, opts...)
}

func (c *countingClient) Configure(ctx context.Context, in *pulumirpc.ConfigureRequest, opts ...grpc.CallOption) (*pulumirpc.ConfigureResponse, error) {
	c.configure.Add(1)
	return c.ResourceProviderClient.Configure(ctx, in, opts...)
}

func counting(p *Provider) *countingClient {
	c := &countingClient{ResourceProviderClient: p.proc.client}
	p.proc.client = c
	return c
}

// TestCheckOncePerRequest: the engine's second Check of the same resource and inputs (load,
// then apply) is answered without a round trip; other inputs, another resource, or any Check
// after the plugin was configured anew are sent.
func TestCheckOncePerRequest(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "simple", "2.0.0")
	c := counting(p)
	r := res("simple:index:Resource", "res")
	in := obj(map[string]cty.Value{"value": cty.True})
	for range 2 {
		chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
		if err != nil || len(chk.Failures) > 0 || !chk.Props.RawEquals(in) {
			t.Fatalf("check: %v %v %#v", err, chk.Failures, chk.Props)
		}
	}
	if n := c.check.Load(); n != 1 {
		t.Errorf("two Checks of the same inputs sent %d calls, want 1", n)
	}
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: obj(map[string]cty.Value{"value": cty.False})}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: res("simple:index:Resource", "other"), Props: in}); err != nil {
		t.Fatal(err)
	}
	if n := c.check.Load(); n != 3 {
		t.Errorf("Checks of other inputs and another resource: %d calls, want 3", n)
	}
	// Configured anew (here with the version spelt out): earlier answers do not stand.
	version := cty.ObjectVal(map[string]cty.Value{"version": cty.StringVal("2.0.0")})
	if cr, err := p.Configure(ctx, provider.ConfigureRequest{Config: version}); err != nil || cr.Diagnostics.HasErrors() {
		t.Fatalf("configure: %v %v", err, cr.Diagnostics)
	}
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in}); err != nil {
		t.Fatal(err)
	}
	if n := c.check.Load(); n != 4 {
		t.Errorf("Check after a new configuration: %d calls, want 4", n)
	}
}

// TestConfigureOnce: a plugin configured (here by its first call, with the default
// configuration) is not configured again with the same configuration; another one is sent.
func TestConfigureOnce(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "simple", "2.0.0")
	c := counting(p)
	r := res("simple:index:Resource", "res")
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: obj(map[string]cty.Value{"value": cty.True})}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if cr, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal}); err != nil || cr.Diagnostics.HasErrors() {
			t.Fatalf("configure: %v %v", err, cr.Diagnostics)
		}
	}
	if a, b := c.checkConfig.Load(), c.configure.Load(); a != 1 || b != 1 {
		t.Errorf("CheckConfig %d, Configure %d times; want once each", a, b)
	}
	cr, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.ObjectVal(map[string]cty.Value{"version": cty.StringVal("1.0.0")})})
	if err != nil || !cr.Diagnostics.HasErrors() {
		t.Fatalf("another configuration was not sent: %v %v", err, cr.Diagnostics)
	}
}

// TestLazyConfiguration: a configuration handed over lazily starts nothing; the first call
// starts the plugin and configures it, and a configuration the plugin refuses fails that call
// and every later one.
func TestLazyConfiguration(t *testing.T) {
	ctx := context.Background()
	exe := plugins(t) + "/resource-simple-v2.0.0/pulumi-resource-simple"
	r := res("simple:index:Resource", "res")
	in := obj(map[string]cty.Value{"value": cty.True})

	l := Open(Options{Package: "simple", Executable: exe, Stack: "dev", Version: "2.0.0"})
	defer l.Close()
	l.ConfigureLazily(provider.ConfigureRequest{Config: cty.EmptyObjectVal})
	if !l.StateCurrent(ctx, r.Type, nil) {
		t.Error("StateCurrent: a Pulumi resource's state has no schema version to upgrade")
	}
	if l.p != nil {
		t.Fatal("ConfigureLazily started the plugin")
	}
	if chk, err := l.Check(ctx, provider.CheckRequest{Resource: r, Props: in}); err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check: %v %v", err, chk.Failures)
	}
	if !l.p.configuredAs.RawEquals(cty.EmptyObjectVal) {
		t.Errorf("configured with %#v, want the lazy configuration", l.p.configuredAs)
	}

	bad := Open(Options{Package: "simple", Executable: exe, Stack: "dev", Version: "2.0.0"})
	defer bad.Close()
	bad.ConfigureLazily(provider.ConfigureRequest{Config: cty.ObjectVal(map[string]cty.Value{"version": cty.StringVal("1.0.0")})})
	_, err1 := bad.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
	_, err2 := bad.Create(ctx, provider.CreateRequest{Resource: r, Props: in})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() || !strings.Contains(err1.Error(), "version is not 2.0.0") {
		t.Fatalf("calls after a refused lazy configuration: %v / %v", err1, err2)
	}
}
