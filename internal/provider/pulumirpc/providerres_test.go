package pulumirpc

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"testing"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// fakePluginEnv makes this test binary serve fakePlugin instead of running the tests (see
// TestMain): a plugin whose DiffConfig answers replace when "region" changes, which none of
// the conformance providers does.
const fakePluginEnv = "PULUMIRPC_TEST_FAKE_PLUGIN" // not CAIRN_: plugins do not get cairn's settings

type fakePlugin struct {
	pulumirpc.UnimplementedResourceProviderServer
}

func (fakePlugin) Handshake(context.Context, *pulumirpc.ProviderHandshakeRequest) (*pulumirpc.ProviderHandshakeResponse, error) {
	return &pulumirpc.ProviderHandshakeResponse{AcceptSecrets: true, AcceptResources: true}, nil
}

func (fakePlugin) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: "1.0.0"}, nil
}

// CheckConfig refuses a secret object, as a plugin that has not yet said it takes secrets may.
func (fakePlugin) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	for k, v := range req.GetNews().GetFields() {
		if isSecretObject(v) {
			return &pulumirpc.CheckResponse{Failures: []*pulumirpc.CheckFailure{{Property: k, Reason: "CheckConfig got a secret object"}}}, nil
		}
	}
	return &pulumirpc.CheckResponse{Inputs: req.GetNews()}, nil
}

func isSecretObject(v *structpb.Value) bool {
	return v.GetStructValue().GetFields()["4dabf18193072939515e22adb298388d"].GetStringValue() == "1b47061264138c4ac30d75fd1eb44270"
}

func (fakePlugin) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	if req.GetOldInputs().GetFields()["region"].GetStringValue() != req.GetNews().GetFields()["region"].GetStringValue() {
		return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_SOME, Replaces: []string{"region"}}, nil
	}
	return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
}

// Configure refuses a password that is not a secret object: Pulumi's engine sends the checked
// configuration with its secrets marked again.
func (fakePlugin) Configure(_ context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	if pw, ok := req.GetArgs().GetFields()["password"]; ok && !isSecretObject(pw) {
		return nil, status.Error(codes.InvalidArgument, "Configure got the password plain")
	}
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, SupportsPreview: true}, nil
}

func (fakePlugin) Diff(context.Context, *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}, nil
}

// serveFakePlugin is the plugin's main: the port on stdout, then serve until killed.
func serveFakePlugin() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	pulumirpc.RegisterResourceProviderServer(srv, fakePlugin{})
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)
	_ = srv.Serve(lis)
}

func launchFake(t *testing.T) *Provider {
	t.Helper()
	t.Setenv(fakePluginEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Launch(ctx, Options{Package: "fake", Executable: exe, Dir: t.TempDir(), Project: "proj", Stack: "dev", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func region(r string) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal(r), "version": cty.StringVal("1.0.0")})
}

// TestProviderResourceLifecycle: a provider resource's Check is CheckConfig (the version
// added), Create gives a UUID, and a DiffConfig that says replace replaces every resource the
// same instance serves, as Pulumi replaces the resources of a replaced provider.
func TestProviderResourceLifecycle(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		from, to    string
		wantReplace bool
	}{
		"RegionChanged": {"a", "b", true},
		"Same":          {"a", "a", false},
	} {
		t.Run(name, func(t *testing.T) {
			p := launchFake(t)
			if resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal(c.to)})}); err != nil || resp.Diagnostics.HasErrors() {
				t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
			}
			prov := res("pulumi:providers:fake", "prov")
			chk, err := p.Check(ctx, provider.CheckRequest{Resource: prov, Props: cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal(c.to)})})
			if err != nil || len(chk.Failures) > 0 || !chk.Props.RawEquals(region(c.to)) {
				t.Fatalf("Check of the provider: %#v %v %v", chk.Props, chk.Failures, err)
			}
			created, err := p.Create(ctx, provider.CreateRequest{Resource: prov, Props: chk.Props})
			if err != nil || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(created.ID) {
				t.Fatalf("Create of the provider: id %q, %v", created.ID, err)
			}
			d, err := p.Diff(ctx, provider.DiffRequest{Resource: prov, ID: created.ID, OldProps: region(c.from), OldOutputs: region(c.from), NewProps: chk.Props})
			if err != nil || d.Replace != c.wantReplace {
				t.Fatalf("Diff of the provider: replace %v, want %v (%v)", d.Replace, c.wantReplace, err)
			}
			thing := cty.ObjectVal(map[string]cty.Value{"size": cty.NumberIntVal(1)})
			d, err = p.Diff(ctx, provider.DiffRequest{Resource: res("fake:index:Thing", "t"), ID: "t1", OldProps: thing, OldOutputs: thing, NewProps: thing})
			if err != nil || d.Replace != c.wantReplace || d.Changed != c.wantReplace {
				t.Errorf("Diff of a resource it serves: changed %v replace %v, want %v (%v)", d.Changed, d.Replace, c.wantReplace, err)
			}
			if _, err := p.Delete(ctx, provider.DeleteRequest{Resource: prov, ID: created.ID}); err != nil {
				t.Errorf("Delete of the provider: %v", err)
			}
		})
	}
}

func (fakePlugin) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	return &pulumirpc.GetSchemaResponse{Schema: `{"name":"fake","resources":{"fake:index:Thing":{}}}`}, nil
}

// TestSchemaCachedOnDisk: the package schema is read from the plugin once, then from the disk
// cache by a later process (here: with the plugin unable to start at all).
func TestSchemaCachedOnDisk(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	opts := Options{Package: "fake", Executable: exe, Dir: t.TempDir(), SchemaCacheDir: cache}
	t.Setenv(fakePluginEnv, "1")
	b, err := Schema(context.Background(), opts)
	if err != nil || string(b) != `{"name":"fake","resources":{"fake:index:Thing":{}}}` {
		t.Fatalf("Schema: %q %v", b, err)
	}
	t.Setenv(fakePluginEnv, "exit") // the plugin now exits at once
	memSchemas.Lock()
	clear(memSchemas.m)
	memSchemas.Unlock()
	again, err := Schema(context.Background(), opts)
	if err != nil || string(again) != string(b) {
		t.Fatalf("Schema from the disk cache: %q %v", again, err)
	}
}

// TestConfigSecretsAsPulumiSendsThem: CheckConfig gets the configuration's secrets plain, the
// checked configuration it returns has them marked again, and Configure gets them as secret
// objects (Pulumi's provider_plugin.go); both for a default provider's Configure and for the
// Check of a provider resource.
func TestConfigSecretsAsPulumiSendsThem(t *testing.T) {
	ctx := context.Background()
	p := launchFake(t)
	config := cty.ObjectVal(map[string]cty.Value{"region": cty.StringVal("a"), "password": value.Secret(cty.StringVal("hunter2"))})
	resp, err := p.Configure(ctx, provider.ConfigureRequest{Config: config})
	if err != nil || resp.Diagnostics.HasErrors() {
		t.Fatalf("Configure: %v %v", err, resp.Diagnostics)
	}
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: res("pulumi:providers:fake", "prov"), Props: config})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("Check of the provider: %v %v", chk.Failures, err)
	}
	attrs := chk.Props.AsValueMap()
	if !value.IsSecret(attrs["password"]) || value.IsSecret(attrs["region"]) {
		t.Errorf("checked configuration: password secret %v, region secret %v; want true, false", value.IsSecret(attrs["password"]), value.IsSecret(attrs["region"]))
	}
}
