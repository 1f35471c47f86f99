package pulumirpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestParameterizedPlugin runs the conformance provider parameterized 1.2.3 as package hi: it
// is Parameterized after the launch, its schema is the subpackage's, its provider resource
// keeps the base plugin under __internal, and the URNs the engine gives are the ones it sees
// (the plugin refuses a resource whose URN type is not its own).
func TestParameterizedPlugin(t *testing.T) {
	exe := providerbin.PulumiPlugin(t, plugins(t), "parameterized", "1.2.3")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pz := &Parameterization{Name: "hi", Version: "2.0.0", Value: []byte("Hello"), Plugin: "parameterized"}
	p, err := Launch(ctx, Options{Package: "hi", Executable: exe, Dir: t.TempDir(), Project: "proj", Stack: "dev", Version: "2.0.0", Parameterization: pz})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	schema, err := p.PackageSchema(ctx)
	if err != nil || !strings.Contains(string(schema), `"hi:index:Hello"`) {
		t.Fatalf("PackageSchema = %s, %v: want the subpackage hi's", schema, err)
	}

	provRes := provider.Resource{StackName: "dev", Name: "prov", Type: "pulumi:providers:hi", URN: "urn:pulumi:dev::proj::pulumi:providers:hi::prov"}
	checked, err := p.Check(ctx, provider.CheckRequest{Resource: provRes, Props: obj(map[string]cty.Value{"text": cty.StringVal("there")})})
	if err != nil || len(checked.Failures) > 0 {
		t.Fatalf("CheckConfig: %v %+v", err, checked.Failures)
	}
	internal := checked.Props.GetAttr(internalKey)
	want := obj(map[string]cty.Value{"name": cty.StringVal("parameterized"), "version": cty.StringVal("1.2.3"), "parameterization": cty.StringVal("SGVsbG8=")})
	if !internal.RawEquals(want) || checked.Props.GetAttr("version") != cty.StringVal("2.0.0") {
		t.Errorf("checked provider inputs = %#v, want version 2.0.0 and __internal %#v", checked.Props, want)
	}
	if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: checked.Props, URN: provRes.URN}); err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
	}

	hello := provider.Resource{StackName: "dev", Name: "h", Type: "hi:index:Hello", URN: "urn:pulumi:dev::proj::hi:index:Hello::h"}
	c, err := p.Check(ctx, provider.CheckRequest{Resource: hello, Props: cty.EmptyObjectVal})
	if err != nil || len(c.Failures) > 0 {
		t.Fatalf("Check: %v %+v", err, c.Failures)
	}
	created, err := p.Create(ctx, provider.CreateRequest{Resource: hello, Props: c.Props})
	if err != nil || created.Outputs.GetAttr("parameterValue") != cty.StringVal("Hello there") {
		t.Fatalf("Create = %#v, %v: want the parameter and the provider's text", created.Outputs, err)
	}

	// the URN the engine gives is the one sent: one naming another type is refused by the plugin
	other := hello
	other.URN = "urn:pulumi:dev::proj::my:index:Component$hi:index:Other::h"
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: other, Props: cty.EmptyObjectVal}); err == nil || !strings.Contains(err.Error(), "does not match URN") {
		t.Errorf("Check with another URN: %v, want the plugin to refuse the URN the engine gave", err)
	}
}
