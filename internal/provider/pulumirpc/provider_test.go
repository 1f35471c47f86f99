package pulumirpc

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/zclconf/go-cty/cty"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
	"github.com/cairn-dev/cairn/test/providerbin"
)

var (
	pluginsOnce sync.Once
	pluginsDir  string
)

// plugins is one plugin cache of the real conformance providers for the whole package.
func plugins(t *testing.T) string {
	t.Helper()
	bin := providerbin.PulumiConformance(t) // skips without the module proxy
	pluginsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cairn-pulumi-plugins-")
		if err != nil {
			t.Fatal(err)
		}
		pluginsDir = dir
		if b, err := runInstall(bin, dir); err != nil {
			t.Fatalf("install: %v\n%s", err, b)
		}
	})
	return pluginsDir
}

func TestMain(m *testing.M) {
	switch os.Getenv(fakePluginEnv) { // providerres_test.go
	case "1":
		serveFakePlugin()
		return
	case "exit":
		os.Exit(3) // a plugin that cannot start
	}
	code := m.Run()
	if pluginsDir != "" {
		_ = os.RemoveAll(pluginsDir)
	}
	os.Exit(code)
}

func launch(t *testing.T, pkg, version string) *Provider {
	t.Helper()
	exe := providerbin.PulumiPlugin(t, plugins(t), pkg, version)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Launch(ctx, Options{Package: pkg, Executable: exe, Dir: t.TempDir(), Project: "proj", Stack: "dev", Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func res(typ, name string) provider.Resource {
	return provider.Resource{StackName: "dev", Name: name, Type: typ}
}

func obj(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }

func TestSimpleLifecycle(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "simple", "2.0.0")
	// The conformance providers other than bytesink/bytesource answer Handshake with
	// Unimplemented: this is the fallback path, flags from Configure.
	if p.Handshook() || p.Version() != "2.0.0" {
		t.Fatalf("handshook=%v version=%q", p.Handshook(), p.Version())
	}
	cr, err := p.Configure(ctx, provider.ConfigureRequest{Config: cty.EmptyObjectVal})
	if err != nil || cr.Diagnostics.HasErrors() {
		t.Fatalf("configure: %v %v", err, cr.Diagnostics)
	}
	if !p.acceptSecrets {
		t.Fatal("flags were not taken from Configure")
	}
	r := res("simple:index:Resource", "res")
	in := obj(map[string]cty.Value{"value": cty.True})
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check: %v %v", err, chk.Failures)
	}
	if !chk.Props.RawEquals(in) {
		t.Fatalf("checked inputs %#v", chk.Props)
	}
	created, err := p.Create(ctx, provider.CreateRequest{Resource: r, Props: chk.Props})
	if err != nil || created.Diagnostics.HasErrors() {
		t.Fatalf("create: %v %v", err, created.Diagnostics)
	}
	if created.ID != "id" || !created.Outputs.GetAttr("value").True() {
		t.Fatalf("created %q %#v", created.ID, created.Outputs)
	}

	read, err := p.Read(ctx, provider.ReadRequest{Resource: r, ID: created.ID, Props: chk.Props, Outputs: created.Outputs})
	if err != nil || read.ID != "id" || !read.Outputs.GetAttr("value").True() || !read.Props.GetAttr("value").True() {
		t.Fatalf("read: %v %+v", err, read)
	}

	// The simple provider answers DIFF_UNKNOWN: cairn compares the inputs itself.
	newIn := obj(map[string]cty.Value{"value": cty.False})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: r, ID: "id", OldProps: in, OldOutputs: created.Outputs, NewProps: newIn})
	if err != nil || !d.Changed || d.Replace || strings.Join(d.ChangedKeys, ",") != "value" {
		t.Fatalf("diff: %v %+v", err, d)
	}
	same, err := p.Diff(ctx, provider.DiffRequest{Resource: r, ID: "id", OldProps: in, OldOutputs: created.Outputs, NewProps: in})
	if err != nil || same.Changed {
		t.Fatalf("diff of equal inputs: %v %+v", err, same)
	}
	up, err := p.Update(ctx, provider.UpdateRequest{Resource: r, ID: "id", OldProps: in, OldOutputs: created.Outputs, NewProps: newIn})
	if err != nil || up.Diagnostics.HasErrors() || up.ID != "id" || up.Outputs.GetAttr("value").True() {
		t.Fatalf("update: %v %+v", err, up)
	}
	del, err := p.Delete(ctx, provider.DeleteRequest{Resource: r, ID: "id", Props: newIn, Outputs: up.Outputs})
	if err != nil || del.Diagnostics.HasErrors() {
		t.Fatalf("delete: %v %v", err, del.Diagnostics)
	}
	schema, err := p.PackageSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Name      string                     `json:"name"`
		Resources map[string]json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Name != "simple" || s.Resources["simple:index:Resource"] == nil {
		t.Fatalf("schema: %v %s", err, schema)
	}
}

func TestCheckFailuresPerProperty(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "simple", "2.0.0")
	r := res("simple:index:Resource", "res")
	for _, tc := range []struct {
		props          cty.Value
		path, contains string
	}{
		{obj(map[string]cty.Value{"value": cty.StringVal("yes")}), "value", "value is not a boolean"},
		{cty.EmptyObjectVal, "value", "missing value"},
		{obj(map[string]cty.Value{"value": cty.True, "extra": cty.NumberIntVal(1)}), "", "too many properties"},
	} {
		chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: tc.props})
		if err != nil {
			t.Fatal(err)
		}
		if len(chk.Failures) != 1 || chk.Failures[0].Property != tc.path || !strings.Contains(chk.Failures[0].Reason, tc.contains) {
			t.Errorf("%#v: failures %+v, want %q at %q", tc.props, chk.Failures, tc.contains, tc.path)
		}
	}

	// the primitive provider checks each property's type
	pp := launch(t, "primitive", "7.0.0")
	good := map[string]cty.Value{
		"boolean": cty.True, "float": cty.NumberFloatVal(3.5), "integer": cty.NumberIntVal(42), "string": cty.StringVal("s"),
		"numberArray": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)}),
		"booleanMap":  obj(map[string]cty.Value{"t": cty.True, "f": cty.False}),
	}
	pr := res("primitive:index:Resource", "prim")
	chk, err := pp.Check(ctx, provider.CheckRequest{Resource: pr, Props: obj(good)})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("primitive check: %v %+v", err, chk.Failures)
	}
	created, err := pp.Create(ctx, provider.CreateRequest{Resource: pr, Props: chk.Props})
	if err != nil || created.Diagnostics.HasErrors() {
		t.Fatalf("primitive create: %v %v", err, created.Diagnostics)
	}
	if created.ID != "s" || !created.Outputs.GetAttr("float").RawEquals(cty.NumberFloatVal(3.5)) ||
		!created.Outputs.GetAttr("booleanMap").GetAttr("f").RawEquals(cty.False) {
		t.Fatalf("primitive outputs %q %#v", created.ID, created.Outputs)
	}
	bad := map[string]cty.Value{}
	for k, v := range good {
		bad[k] = v
	}
	bad["numberArray"] = cty.TupleVal([]cty.Value{cty.StringVal("x")})
	chk, err = pp.Check(ctx, provider.CheckRequest{Resource: pr, Props: obj(bad)})
	if err != nil || len(chk.Failures) != 1 || chk.Failures[0].Property != "numberArray" {
		t.Fatalf("primitive bad array: %v %+v", err, chk.Failures)
	}
}

func TestConfigureFailureNamesTheKey(t *testing.T) {
	exe := providerbin.PulumiPlugin(t, plugins(t), "simple", "2.0.0")
	p, err := Launch(context.Background(), Options{Package: "simple", Executable: exe, Stack: "dev", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cr, err := p.Configure(context.Background(), provider.ConfigureRequest{Config: cty.EmptyObjectVal})
	if err != nil || !cr.Diagnostics.HasErrors() || cr.Diagnostics[0].Path != "version" ||
		!strings.Contains(cr.Diagnostics.Error(), "version is not 2.0.0") {
		t.Fatalf("configure with a wrong version: %v %v", err, cr.Diagnostics)
	}
}

// A provider configured with a number where a string is due fails Diff replacement tests of
// the output provider: DIFF_SOME with the changed key.
func TestProviderDiffSome(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "output", "23.0.0")
	r := res("output:index:Resource", "out")
	one := obj(map[string]cty.Value{"value": cty.NumberIntVal(1)})
	two := obj(map[string]cty.Value{"value": cty.NumberIntVal(2)})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: r, ID: "x", OldProps: one, OldOutputs: one, NewProps: two})
	if err != nil || !d.Changed || d.Replace || strings.Join(d.ChangedKeys, ",") != "value" {
		t.Fatalf("diff: %v %+v", err, d)
	}
	d, err = p.Diff(ctx, provider.DiffRequest{Resource: r, ID: "x", OldProps: one, OldOutputs: one, NewProps: one})
	if err != nil || d.Changed {
		t.Fatalf("diff none: %v %+v", err, d)
	}
}

func TestUnknownsInPreview(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "simple", "2.0.0")
	r := res("simple:index:Resource", "res")
	unknown := obj(map[string]cty.Value{"value": cty.UnknownVal(cty.Bool)})
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: unknown})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check with an unknown: %v %+v", err, chk.Failures)
	}
	if v := chk.Props.GetAttr("value"); v.IsKnown() || v.Type() != cty.Bool {
		t.Fatalf("checked unknown came back as %#v", v)
	}
	pc, err := p.PreviewCreate(ctx, provider.CreateRequest{Resource: r, Props: chk.Props})
	if err != nil || pc.Diagnostics.HasErrors() || pc.ID != "" || pc.Outputs.GetAttr("value").IsKnown() {
		t.Fatalf("preview create: %v %+v", err, pc)
	}
	known := obj(map[string]cty.Value{"value": cty.True})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: r, ID: "id", OldProps: known, OldOutputs: known, NewProps: unknown})
	if err != nil || !d.Changed {
		t.Fatalf("diff towards an unknown: %v %+v", err, d)
	}
	// outside a preview an unknown is refused before it reaches the plugin
	if _, err := p.Create(ctx, provider.CreateRequest{Resource: r, Props: unknown}); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Fatalf("create with an unknown: %v", err)
	}
}

func TestSecretRoundTrip(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "secret", "14.0.0")
	r := res("secret:index:Resource", "sec")
	data := func() cty.Value {
		return obj(map[string]cty.Value{"private": cty.StringVal("p"), "public": cty.StringVal("q")})
	}
	in := obj(map[string]cty.Value{
		"private":          value.Secret(cty.StringVal("hunter2")),
		"public":           cty.StringVal("open"),
		"privateData":      value.Secret(data()),
		"publicData":       data(),
		"privateArray":     value.Secret(cty.TupleVal([]cty.Value{cty.StringVal("a")})),
		"privateMap":       value.Secret(obj(map[string]cty.Value{"k": cty.StringVal("v")})),
		"privateDataArray": value.Secret(cty.TupleVal([]cty.Value{data()})),
		"privateDataMap":   value.Secret(obj(map[string]cty.Value{"d": data()})),
	})
	// The provider refuses these inputs unless each secret arrives as Pulumi's secret object.
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check: %v %+v", err, chk.Failures)
	}
	created, err := p.Create(ctx, provider.CreateRequest{Resource: r, Props: chk.Props})
	if err != nil || created.Diagnostics.HasErrors() {
		t.Fatalf("create: %v %v", err, created.Diagnostics)
	}
	for _, k := range []string{"private", "privateData", "privateArray", "privateMap", "privateDataArray", "privateDataMap"} {
		if !created.Outputs.GetAttr(k).IsMarked() {
			t.Errorf("output %s lost its secret mark", k)
		}
	}
	if created.Outputs.GetAttr("public").IsMarked() {
		t.Error("public output marked secret")
	}
	if v, _ := created.Outputs.GetAttr("private").Unmark(); v.AsString() != "hunter2" {
		t.Errorf("secret value %#v", v)
	}

	plain := obj(map[string]cty.Value{
		"private": cty.StringVal("hunter2"), "public": cty.StringVal("open"), "privateData": data(), "publicData": data(),
		"privateArray": cty.TupleVal([]cty.Value{cty.StringVal("a")}), "privateMap": obj(map[string]cty.Value{"k": cty.StringVal("v")}),
		"privateDataArray": cty.TupleVal([]cty.Value{data()}), "privateDataMap": obj(map[string]cty.Value{"d": data()}),
	})
	chk, err = p.Check(ctx, provider.CheckRequest{Resource: r, Props: plain})
	if err != nil || len(chk.Failures) != 1 || chk.Failures[0].Property != "privateData" {
		t.Fatalf("check of plain values: %v %+v", err, chk.Failures)
	}
}

func TestFailingCreateIsADiagnostic(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "fail_on_create", "4.0.0")
	r := res("fail_on_create:index:Resource", "boom")
	in := obj(map[string]cty.Value{"value": cty.False})
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check: %v %+v", err, chk.Failures)
	}
	created, err := p.Create(ctx, provider.CreateRequest{Resource: r, Props: chk.Props})
	if err != nil || !created.Diagnostics.HasErrors() || created.ID != "" {
		t.Fatalf("create: %v %+v", err, created)
	}
}

func TestCloseEndsThePlugin(t *testing.T) {
	exe := providerbin.PulumiPlugin(t, plugins(t), "simple", "2.0.0")
	p, err := Launch(context.Background(), Options{Package: "simple", Executable: exe, Stack: "dev", Version: "2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.proc.exited:
	default:
		t.Fatal("plugin still running after Close")
	}
	if _, err := p.Check(context.Background(), provider.CheckRequest{Resource: res("simple:index:Resource", "x"),
		Props: obj(map[string]cty.Value{"value": cty.True})}); err == nil {
		t.Fatal("call after Close succeeded")
	}
}

func TestLaunchOfANonPlugin(t *testing.T) {
	_, err := Launch(context.Background(), Options{Package: "none", Executable: "/bin/true"})
	if err == nil || !strings.Contains(err.Error(), "did not print its port") {
		t.Fatalf("launch of /bin/true: %v", err)
	}
}

func runInstall(bin, dir string) ([]byte, error) {
	return exec.Command(bin, "install", dir).CombinedOutput()
}

// bytesink handshakes and does not accept secrets: a secret goes plain and comes back marked.
func TestHandshakeWithoutSecrets(t *testing.T) {
	ctx := context.Background()
	p := launch(t, "bytesink", "47.0.0")
	if !p.Handshook() || p.acceptSecrets {
		t.Fatalf("handshook=%v acceptSecrets=%v", p.Handshook(), p.acceptSecrets)
	}
	r := res("bytesink:index:Resource", "sink")
	in := obj(map[string]cty.Value{"bytes": value.Secret(cty.StringVal("hi")), "expectBase64": cty.StringVal("aGk=")})
	chk, err := p.Check(ctx, provider.CheckRequest{Resource: r, Props: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check: %v %+v", err, chk.Failures)
	}
	if !chk.Props.GetAttr("bytes").IsMarked() || chk.Props.GetAttr("expectBase64").IsMarked() {
		t.Fatalf("secret not re-marked by key: %#v", chk.Props)
	}
}

// The plugin polls the engine's health service and logs through it: both are served at the
// address it was started with, for as long as it runs.
func TestEngineEndpointServesHealth(t *testing.T) {
	p := launch(t, "simple", "2.0.0")
	cc, err := grpc.NewClient(p.proc.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", err, h)
	}
	if _, err := pulumirpc.NewEngineClient(cc).Log(ctx, &pulumirpc.LogRequest{Message: "hello"}); err != nil {
		t.Fatalf("log: %v", err)
	}
}

func TestCheckSendsOlds(t *testing.T) {
	p := launch(t, "simple", "2.0.0")
	in := obj(map[string]cty.Value{"value": cty.False})
	chk, err := p.Check(context.Background(), provider.CheckRequest{Resource: res("simple:index:Resource", "r"), Props: in,
		OldProps: obj(map[string]cty.Value{"value": cty.True})})
	if err != nil || len(chk.Failures) > 0 || !chk.Props.RawEquals(in) {
		t.Fatalf("check with olds: %v %+v", err, chk)
	}
}
