package engine_test

import (
	"context"
	"errors"
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
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/template"
)

// pcFake is a plugin-like provider whose provider block has a "tag" (think AWS default_tags):
// its plan of a resource depends on the configured tag, not only on the resource's config.
type pcFake struct {
	*providertest.Fake
	mu      sync.Mutex
	tag     string
	diffs   int
	updates int
}

func (f *pcFake) Schema(_ context.Context, req provider.SchemaRequest) (provider.Schema, error) {
	if req.Kind == provider.SchemaProvider {
		return provider.Schema{Spec: hcldec.ObjectSpec{"tag": &hcldec.AttrSpec{Name: "tag", Type: cty.String}},
			ImpliedType: cty.Object(map[string]cty.Type{"tag": cty.String})}, nil
	}
	return provider.Schema{Spec: hcldec.ObjectSpec{"value": &hcldec.AttrSpec{Name: "value", Type: cty.String}},
		ImpliedType: cty.Object(map[string]cty.Type{"value": cty.String})}, nil
}

func (f *pcFake) Configure(_ context.Context, req provider.ConfigureRequest) (provider.ConfigureResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v := req.Config.GetAttr("tag"); !v.IsNull() {
		f.tag = v.AsString()
	}
	return provider.ConfigureResponse{}, nil
}

func (f *pcFake) Close() error                                      { return nil }
func (f *pcFake) StateCurrent(context.Context, string, []byte) bool { return true }

func (f *pcFake) outputs(props cty.Value) cty.Value {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cty.ObjectVal(map[string]cty.Value{"value": props.GetAttr("value"), "tags_all": cty.StringVal(f.tag)})
}

type pcPlugins struct {
	p       provider.Provider
	version *string
}

func (f pcPlugins) Resolve(_ context.Context, reqs []*template.ProviderRequirement, _ []byte, _ bool) (map[string]engine.Plugin, []byte, diag.Diagnostics) {
	out := map[string]engine.Plugin{}
	for _, r := range reqs {
		out[r.Source] = pcPlugin{p: f.p, version: *f.version}
	}
	return out, nil, nil
}

type pcPlugin struct {
	p       provider.Provider
	version string
}

func (f pcPlugin) Version() string                       { return f.version }
func (f pcPlugin) Open(string, string) provider.Provider { return f.p }

func pcConfig(tag, version string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    fake = { source = "example.com/test/fake", version = %q }
  }
}
provider "fake" {
  tag = %q
}
resource "fake_thing" "r0" {
  value = "a"
}
`, version, tag)
}

func newPCEngine(t *testing.T, version *string) (*pcFake, *harness) {
	f := &pcFake{Fake: &providertest.Fake{}}
	f.CreateFn = func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		return provider.CreateResponse{ID: "id-" + req.Resource.Name, Outputs: f.outputs(req.Props)}, nil
	}
	// The plan depends on the provider's configuration: tags_all follows the provider's tag.
	f.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		f.mu.Lock()
		f.diffs++
		tag := f.tag
		f.mu.Unlock()
		changed := !req.NewProps.RawEquals(req.OldProps) || req.OldOutputs.GetAttr("tags_all").AsString() != tag
		return provider.DiffResponse{Changed: changed}, nil
	}
	f.UpdateFn = func(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
		f.mu.Lock()
		f.updates++
		f.mu.Unlock()
		return provider.UpdateResponse{ID: req.ID, Outputs: f.outputs(req.NewProps)}, nil
	}
	h := newHarness(t, nil)
	e, err := engine.New(engine.Options{Store: h.store, Providers: provider.NewRegistry(), Plugins: pcPlugins{p: f, version: version}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h.e = e
	return f, h
}

func (h *harness) tfDeploy(files map[string]string) {
	h.t.Helper()
	op, err := h.e.Deploy(context.Background(), "tf", api.DeployRequest{Files: files})
	if err != nil {
		h.t.Fatal(err)
	}
	if done := h.wait(op.ID); done.StackStatus[len(done.StackStatus)-8:] != "COMPLETE" {
		h.t.Fatalf("deploy = %+v", done)
	}
}

// TestProviderConfigChangeIsPlanned: changing only the provider block (as changing AWS
// default_tags does) must plan the resources it serves; terraform calls PlanResourceChange
// with the newly configured provider, which plans tags_all to change.
func TestProviderConfigChangeIsPlanned(t *testing.T) {
	v := "1.0.0"
	f, h := newPCEngine(t, &v)
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-a", "1.0.0")})
	f.mu.Lock()
	f.diffs, f.updates = 0, 0
	f.mu.Unlock()
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-b", "1.0.0")})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.diffs == 0 || f.updates == 0 {
		t.Errorf("provider block changed (tag team-a -> team-b): %d diffs, %d updates; want the resource planned and updated", f.diffs, f.updates)
	}
}

// TestProviderVersionChangeIsPlanned: a new provider version (required_providers bumped,
// no lock file sent, no --upgrade: e.g. a private provider, whose exact version is in the
// template and never in the lock) must plan the resources it serves again.
func TestProviderVersionChangeIsPlanned(t *testing.T) {
	v := "1.0.0"
	f, h := newPCEngine(t, &v)
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-a", "1.0.0")})
	f.mu.Lock()
	f.diffs = 0
	f.mu.Unlock()
	v = "2.0.0"
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-a", "2.0.0")})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.diffs == 0 {
		t.Errorf("provider 1.0.0 -> 2.0.0 without --upgrade: the unchanged resource was not planned by the new version")
	}
}

// TestProviderConfigChangeControl: the same change with --upgrade (which disables the
// shortcut) is planned and updated: the fake itself behaves as intended.
func TestProviderConfigChangeControl(t *testing.T) {
	v := "1.0.0"
	f, h := newPCEngine(t, &v)
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-a", "1.0.0")})
	op, err := h.e.Deploy(context.Background(), "tf", api.DeployRequest{Files: map[string]string{"main.tf": pcConfig("team-b", "1.0.0")}, Upgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(op.ID)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.diffs == 0 || f.updates == 0 {
		t.Errorf("control: %d diffs, %d updates", f.diffs, f.updates)
	}
}

// closeCounter counts Close calls of the provider instances the engine opened.
type closeCounter struct {
	*pcFake
	closes *int
	mu     *sync.Mutex
}

func (c closeCounter) Close() error {
	c.mu.Lock()
	*c.closes++
	c.mu.Unlock()
	return nil
}

// failingDelete is a store whose DeleteStack fails (a busy database, a cancelled request).
type failingDelete struct {
	state.Store
	fail bool
}

func (s *failingDelete) DeleteStack(ctx context.Context, name string) error {
	if s.fail {
		return errors.New("database is locked")
	}
	return s.Store.DeleteStack(ctx, name)
}

// TestDeployClosesProvidersOnError: when Deploy fails after loading (here: replacing a
// DELETE_COMPLETE stack and the store refuses), the providers its checks started are closed.
// Before the handoff, Deploy closed them right after loading.
func TestDeployClosesProvidersOnError(t *testing.T) {
	v := "1.0.0"
	f, h := newPCEngine(t, &v)
	var mu sync.Mutex
	closes := 0
	store := &failingDelete{Store: h.store}
	e, err := engine.New(engine.Options{Store: store, Providers: provider.NewRegistry(),
		Plugins: pcPlugins{p: closeCounter{pcFake: f, closes: &closes, mu: &mu}, version: &v}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h.e = e
	h.tfDeploy(map[string]string{"main.tf": pcConfig("team-a", "1.0.0")})
	op, err := e.Delete(context.Background(), "tf", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(op.ID)
	mu.Lock()
	closes = 0
	mu.Unlock()
	store.fail = true
	if _, err := e.Deploy(context.Background(), "tf", api.DeployRequest{Files: map[string]string{"main.tf": pcConfig("team-a", "1.0.0")}}); err == nil {
		t.Fatal("Deploy succeeded; the test premise is wrong")
	}
	mu.Lock()
	defer mu.Unlock()
	if closes == 0 {
		t.Errorf("Deploy failed after loading and closed none of the provider instances it started (plugin processes leak)")
	}
}
