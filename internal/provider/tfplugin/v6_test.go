package tfplugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/value"
)

// These tests drive the tfplugin6 adapter against the in-process fake6 server over a plain
// gRPC connection (NewFromConn), covering what no real provider at hand does on demand.

var fakeThing = provider.Resource{Type: "fake_thing", Name: "f"}

const fakeSrc = `
name     = %q
secret   = "pw"
settings = { mode = "m", token = "tok" }
items    = [{ key = "k1" }, { key = "k2" }]
rule { port = 80 }
rule {
  port  = 443
  proto = "udp"
}`

func fakeConfig(t *testing.T, p *Provider, name string) cty.Value {
	return decodeConfig(t, p, provider.SchemaResource, "fake_thing", fmt.Sprintf(fakeSrc, name))
}

func TestFake6Lifecycle(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{SchemaCacheKey: t.Name()})
	ctx := testCtx(t)
	cfg := decodeConfig(t, p, provider.SchemaProvider, "", `region = "eu"`)
	conf, err := p.Configure(ctx, provider.ConfigureRequest{Config: cfg})
	noErrors(t, "Configure", conf.Diagnostics, err)
	if f.region != "eu" {
		t.Errorf("region = %q", f.region)
	}
	s, err := p.Schema(ctx, provider.SchemaRequest{Kind: provider.SchemaResource, Type: "fake_thing"})
	if err != nil || !s.ImpliedType.Equals(fakeThingTy) {
		t.Fatalf("implied type = %#v, %v", s.ImpliedType, err)
	}

	tc := fakeConfig(t, p, "x")
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: tc})
	noErrors(t, "Create", cr.Diagnostics, err)
	if cr.ID != "id-x" {
		t.Errorf("ID = %q", cr.ID)
	}
	settings := cr.Outputs.GetAttr("settings")
	if !value.IsSecret(cr.Outputs.GetAttr("secret")) || !value.IsSecret(settings.GetAttr("token")) || value.IsSecret(settings.GetAttr("mode")) {
		t.Errorf("marks: %#v", cr.Outputs)
	}
	items := attr(cr.Outputs, "items")
	if items.LengthInt() != 2 || str(items.Index(cty.NumberIntVal(1)).GetAttr("derived")) != "derived" {
		t.Errorf("items = %#v", items)
	}
	env, ok := unwrapPrivate(cr.Private)
	if !ok || env.Version != fakeThingVersion || string(env.Private) != "applied-private" {
		t.Errorf("Private = %s", cr.Private)
	}
	outs := stored(t, cr.Outputs)

	same, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, NewProps: tc, OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(same)", same.Diagnostics, err)
	if same.Changed {
		t.Errorf("Diff(same) = %+v", same)
	}
	// ProposedNew kept the computed values: the set element without proto got its prior "tcp"
	rules := f.lastPlanProposed.GetAttr("rule")
	if !rules.HasElement(cty.ObjectVal(map[string]cty.Value{"port": cty.NumberIntVal(80), "proto": cty.StringVal("tcp")})).True() {
		t.Errorf("proposed rules = %#v", rules)
	}
	if d := f.lastPlanProposed.GetAttr("items").Index(cty.NumberIntVal(0)).GetAttr("derived"); !d.RawEquals(cty.StringVal("derived")) {
		t.Errorf("proposed items[0].derived = %#v", d)
	}

	d, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, NewProps: fakeConfig(t, p, "y"), OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(name)", d.Diagnostics, err)
	if !d.Replace || !slices.Equal(d.ReplacePaths, []string{"name"}) || attr(d.Planned, "id").IsKnown() || !value.IsSecret(d.Planned.GetAttr("secret")) {
		t.Errorf("Diff(name) = %+v", d)
	}

	im, err := p.Import(ctx, provider.ImportRequest{Resource: fakeThing, ID: "abc"})
	noErrors(t, "Import", im.Diagnostics, err)
	if im.ID != "abc" || str(attr(im.Outputs, "name")) != "imported" {
		t.Errorf("Import = %+v", im)
	}

	plans := f.called("PlanResourceChange")
	del, err := p.Delete(ctx, provider.DeleteRequest{Resource: fakeThing, ID: cr.ID, Outputs: outs, Private: cr.Private})
	noErrors(t, "Delete", del.Diagnostics, err)
	if f.called("PlanResourceChange") != plans+1 || !f.lastPlanProposed.IsNull() {
		t.Errorf("Delete did not plan the destroy (plan_destroy): proposed %#v", f.lastPlanProposed)
	}

	data, err := p.ReadData(ctx, provider.ReadDataRequest{Resource: provider.Resource{Type: "fake_data"},
		Config: decodeConfig(t, p, provider.SchemaData, "fake_data", `input = "i"`)})
	noErrors(t, "ReadData", data.Diagnostics, err)
	if str(attr(data.State, "output")) != "i" {
		t.Errorf("ReadData = %#v", data.State)
	}
	if n := f.called("UpgradeResourceState"); n != 0 {
		t.Errorf("UpgradeResourceState called %d times for current states", n)
	}
}

func TestFake6Check(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{})
	resp, err := p.Check(testCtx(t), provider.CheckRequest{Resource: fakeThing, Props: fakeConfig(t, p, "invalid")})
	if err != nil {
		t.Fatal(err)
	}
	var props []string
	for _, f := range resp.Failures {
		props = append(props, f.Property)
		if f.Reason != "bad key: detail" && f.Reason != "bad tag: detail" {
			t.Errorf("reason = %q", f.Reason)
		}
	}
	if !slices.Equal(props, []string{"items.0.key", `tags["a.b"]`}) || len(resp.Warnings) != 1 || resp.Warnings[0].Property != "" {
		t.Errorf("Check = %+v", resp)
	}
	// a required attribute inside a nested attribute type, from another dialect
	bad := cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal("n"), "items": cty.TupleVal([]cty.Value{cty.EmptyObjectVal})})
	resp, err = p.Check(testCtx(t), provider.CheckRequest{Resource: fakeThing, Props: bad})
	if err != nil || len(resp.Failures) != 1 || resp.Failures[0].Property != "items.0.key" || !strings.HasPrefix(resp.Failures[0].Reason, "Missing required argument") {
		t.Errorf("Check(missing nested key) = %+v, %v", resp, err)
	}
}

func TestFake6ProviderBugs(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{})
	ctx := testCtx(t)
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, NewProps: fakeConfig(t, p, "badplan")})
	if err != nil || !d.Diagnostics.HasErrors() || d.Diagnostics[0].Summary != "Provider produced invalid plan" || d.Diagnostics[0].Path != "secret" ||
		strings.Contains(d.Diagnostics[0].Detail, "not what you configured") {
		t.Errorf("Diff(badplan) = %+v, %v; want an invalid plan on secret that does not show the value", d.Diagnostics, err)
	}
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: fakeConfig(t, p, "badapply")})
	if err != nil || !cr.Diagnostics.HasErrors() || cr.Diagnostics[0].Summary != "Provider produced inconsistent result after apply" ||
		!strings.Contains(cr.Diagnostics[0].Detail, "inconsistent values for sensitive attribute") || cr.ID != "id-badapply" {
		t.Errorf("Create(badapply) = %+v, %v", cr.Diagnostics, err)
	}
}

// TestFake6UpgradeAndJSON: a state written by schema version 1 (with an attribute the
// provider has since dropped) is upgraded by the provider; answers in JSON are accepted.
func TestFake6UpgradeAndJSON(t *testing.T) {
	f := newFake6()
	f.json = true
	p := f.serve(t, Options{})
	ctx := testCtx(t)
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: fakeConfig(t, p, "x")})
	noErrors(t, "Create", cr.Diagnostics, err)
	old := cr.Outputs.AsValueMap()
	old["old"] = cty.StringVal("gone in v2")
	outs := stored(t, cty.ObjectVal(old))
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, NewProps: fakeConfig(t, p, "x"), OldOutputs: outs,
		Private: wrapPrivate(1, []byte("applied-private"))})
	noErrors(t, "Diff(v1 state)", d.Diagnostics, err)
	if d.Changed || f.called("UpgradeResourceState") != 1 {
		t.Errorf("Diff(v1 state) = %+v after %d upgrades", d, f.called("UpgradeResourceState"))
	}
	// a current-version envelope over a state the schema cannot read is upgraded too
	d, err = p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, NewProps: fakeConfig(t, p, "x"), OldOutputs: outs,
		Private: cr.Private})
	noErrors(t, "Diff(extra attribute)", d.Diagnostics, err)
	if d.Changed || f.called("UpgradeResourceState") != 2 {
		t.Errorf("Diff(extra attribute) = %+v", d)
	}
}

// TestSchemaCache: the second provider over the same build skips GetProviderSchema when the
// server allows it, and not otherwise.
func TestSchemaCache(t *testing.T) {
	for _, noMetadata := range []bool{false, true} {
		f := newFake6()
		f.noMetadata = noMetadata
		key := fmt.Sprintf("%s-%v", t.Name(), noMetadata)
		for range 2 {
			p := f.serve(t, Options{SchemaCacheKey: key})
			if _, err := p.Schema(testCtx(t), provider.SchemaRequest{Kind: provider.SchemaResource, Type: "fake_thing"}); err != nil {
				t.Fatal(err)
			}
		}
		want := 1
		if noMetadata {
			want = 2
		}
		if n := f.called("GetProviderSchema"); n != want {
			t.Errorf("noMetadata=%v: GetProviderSchema called %d times, want %d", noMetadata, n, want)
		}
	}
}

// TestFake6Cancel cancels three applies in flight: StopProvider is sent once, the provider
// gives up, every Create returns context.Canceled promptly.
func TestFake6Cancel(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{})
	cfg := fakeConfig(t, p, "slow")
	if _, err := p.ready(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: cfg})
		}()
	}
	for f.called("ApplyResourceChange") < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	wg.Wait()
	for _, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Create = %v; want context.Canceled", err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled creates took %s", d)
	}
	if n := f.called("StopProvider"); n != 1 {
		t.Errorf("StopProvider called %d times, want 1", n)
	}
	// a call on a context that already ended is not made
	before := f.called("PlanResourceChange")
	if _, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: cfg}); !errors.Is(err, context.Canceled) || f.called("PlanResourceChange") != before {
		t.Errorf("Create on a cancelled context = %v", err)
	}
}

// TestFake6StopGrace: a provider that ignores Stop is abandoned after the grace period.
func TestFake6StopGrace(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{StopGrace: 200 * time.Millisecond})
	cfg := fakeConfig(t, p, "stubborn")
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: cfg})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Create = %v; want the deadline", err)
	}
	if d := time.Since(start); d < 450*time.Millisecond || d > 5*time.Second {
		t.Errorf("Create returned after %s; want about 500ms (deadline + grace)", d)
	}
}
