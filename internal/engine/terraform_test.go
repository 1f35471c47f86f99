package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2/hcldec"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/template"
)

// tfFake is a plugin-like provider: the fake, with a schema of one optional string.
type tfFake struct {
	*providertest.Fake
	mu     sync.Mutex
	counts map[string]int // "Check name", "Diff name"
}

func (f *tfFake) count(what string) {
	f.mu.Lock()
	f.counts[what]++
	f.mu.Unlock()
}

func (f *tfFake) Schema(_ context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	if req.Kind == provider.SchemaProvider {
		return provider.Schema{Spec: hcldec.ObjectSpec{}, ImpliedType: cty.EmptyObject}, nil
	}
	return provider.Schema{Spec: hcldec.ObjectSpec{"value": &hcldec.AttrSpec{Name: "value", Type: cty.String}},
		ImpliedType: cty.Object(map[string]cty.Type{"value": cty.String})}, nil
}

func (f *tfFake) Configure(context.Context, provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	return provider.ConfigureResponse{}, nil
}

func (f *tfFake) Close() error { return nil }

// StateCurrent says every stored state is of the current schema (provider.StateVersioner).
func (f *tfFake) StateCurrent(context.Context, string, []byte) bool { return true }

type fakePlugins struct{ p provider.Provider }

func (f fakePlugins) Resolve(_ context.Context, reqs []*template.ProviderRequirement, _ []byte, _ bool) (map[string]engine.Plugin, []byte, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	for _, r := range reqs {
		out[r.Source] = fakePlugin(f)
	}
	return out, nil, nil
}

type fakePlugin struct{ p provider.Provider }

func (f fakePlugin) Version() string                       { return "1.0.0" }
func (f fakePlugin) Open(string, string) provider.Provider { return f.p }

// newTFHarness is a harness whose engine serves the Terraform language from f (a fresh tfFake
// when nil), with o's other options.
func newTFHarness(t *testing.T, f *tfFake, o engine.Options) (*harness, *tfFake) {
	t.Helper()
	if f == nil {
		f = &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}
	}
	h := newHarness(t, nil)
	o.Store, o.Providers, o.Plugins = h.store, provider.NewRegistry(), fakePlugins{f}
	e, err := engine.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h.e, h.fake = e, f.Fake
	return h, f
}

func tfConfig(values ...string) string {
	s := "terraform {\n  required_providers {\n    fake = { source = \"example.com/test/fake\" }\n  }\n}\n"
	for i, v := range values {
		s += fmt.Sprintf("resource \"fake_thing\" \"r%d\" {\n  value = %q\n}\n", i, v)
	}
	return s
}

// TestTerraformUnchangedIsNotChecked: a redeploy checks and plans only the resources whose
// configuration changed since their last apply; --upgrade checks everything again.
func TestTerraformUnchangedIsNotChecked(t *testing.T) {
	f := &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}
	f.CheckFn = func(_ context.Context, req provider.CheckRequest) (provider.CheckResponse, error) {
		f.count("Check " + req.Resource.Name)
		return provider.CheckResponse{}, nil
	}
	f.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		f.count("Diff " + req.Resource.Name)
		return provider.DiffResponse{Changed: !req.NewProps.RawEquals(req.OldProps)}, nil
	}
	h, _ := newTFHarness(t, f, engine.Options{})
	e := h.e
	deploy := func(upgrade bool, values ...string) {
		t.Helper()
		f.mu.Lock()
		f.counts = map[string]int{}
		f.mu.Unlock()
		op, err := e.Deploy(context.Background(), "tf", api.DeployRequest{Files: map[string]string{"main.tf": tfConfig(values...)}, Upgrade: upgrade})
		if err != nil {
			t.Fatal(err)
		}
		if done := h.wait(op.ID); done.Status != "SUCCEEDED" && done.StackStatus[len(done.StackStatus)-8:] != "COMPLETE" {
			t.Fatalf("deploy = %+v", done)
		}
	}
	deploy(false, "a", "b")
	if f.counts["Check fake_thing.r0"] == 0 || f.counts["Check fake_thing.r1"] == 0 {
		t.Fatalf("the first deploy did not check: %v", f.counts)
	}
	deploy(false, "a", "B")
	// r1 is checked when loading and before applying, and diffed; r0 is not even diffed: its
	// configuration and schema version are those of its last apply.
	want := map[string]int{"Check fake_thing.r1": 2, "Diff fake_thing.r1": 1}
	if fmt.Sprint(f.counts) != fmt.Sprint(want) {
		t.Errorf("redeploy with r1 changed: calls %v, want %v", f.counts, want)
	}
	// A preview decides as the deploy would: r0 is neither checked nor planned.
	f.mu.Lock()
	f.counts = map[string]int{}
	f.mu.Unlock()
	pr, err := e.Preview(context.Background(), "tf", api.DeployRequest{Files: map[string]string{"main.tf": tfConfig("a", "C")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Changes) != 1 || pr.Changes[0].LogicalID != "fake_thing.r1" {
		t.Errorf("preview changes = %+v", pr.Changes)
	}
	if f.counts["Check fake_thing.r0"] != 0 || f.counts["Diff fake_thing.r0"] != 0 || f.counts["Diff fake_thing.r1"] != 1 {
		t.Errorf("preview calls: %v", f.counts)
	}
	deploy(true, "a", "B")
	if f.counts["Check fake_thing.r0"] == 0 || f.counts["Check fake_thing.r1"] == 0 {
		t.Errorf("--upgrade did not check everything again: %v", f.counts)
	}
}

// TestReplacementDestroysDependentsFirst: when a replacement forces its dependent to be
// replaced too, the dependent is destroyed first, as terraform orders it: nothing is deleted
// while something still uses it.
func TestReplacementDestroysDependentsFirst(t *testing.T) {
	f := &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}
	f.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		changed := !req.NewProps.RawEquals(req.OldProps)
		return provider.DiffResponse{Changed: changed, Replace: changed}, nil // every change replaces
	}
	h, _ := newTFHarness(t, f, engine.Options{})
	e := h.e
	cfg := func(v string) map[string]string {
		return map[string]string{"main.tf": `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "a" {
  value = "` + v + `"
}
resource "fake_thing" "b" {
  value = "${fake_thing.a.value}-b"
}
resource "fake_thing" "c" {
  value = "independent"
}
`}
	}
	for _, v := range []string{"one", "two"} {
		op, err := e.Deploy(context.Background(), "tf", api.DeployRequest{Files: cfg(v)})
		if err != nil {
			t.Fatal(err)
		}
		if done := h.wait(op.ID); done.StackStatus[len(done.StackStatus)-8:] != "COMPLETE" {
			t.Fatalf("deploy %s = %+v", v, done)
		}
	}
	var order []string
	for _, c := range f.Calls()[3:] { // the second deploy's calls
		order = append(order, c.Method+" "+c.Name)
	}
	want := []string{"Delete fake_thing.b", "Delete fake_thing.a", "Create fake_thing.a", "Create fake_thing.b"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("calls = %v, want %v", order, want)
	}
}
