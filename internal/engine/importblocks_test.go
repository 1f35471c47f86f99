package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

// importFake is a tfFake whose objects can be imported: ImportFn answers, by default with
// the object {value = "old"} under the id asked for.
type importFake struct {
	*tfFake
	ImportFn func(context.Context, provider.ImportRequest) (provider.ImportResponse, error)
	imports  int
}

func (f *importFake) Import(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
	f.mu.Lock()
	f.imports++
	f.mu.Unlock()
	if f.ImportFn != nil {
		return f.ImportFn(ctx, req)
	}
	return provider.ImportResponse{ID: req.ID, Outputs: cty.ObjectVal(map[string]cty.Value{"value": cty.StringVal("old")})}, nil
}

func newImportFake() *importFake {
	return &importFake{tfFake: &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}}
}

// importEngine is an engine on store serving the Terraform language from f.
func importEngine(t *testing.T, store state.Store, f *importFake) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{Store: store, Providers: provider.NewRegistry(), Plugins: fakePlugins{f}, LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

const importTF = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "r" {
  value = "new"
}
import {
  to = fake_thing.r
  id = "obj-1"
}
`

// TestImportBlockResumes: an engine stopped in the middle of an import block's import
// imports again when the operation resumes (the row was never written), then updates the
// imported object to its configuration; nothing is created.
func TestImportBlockResumes(t *testing.T) {
	started := make(chan struct{}, 1)
	f1 := newImportFake()
	f1.ImportFn = func(ctx context.Context, req provider.ImportRequest) (provider.ImportResponse, error) {
		started <- struct{}{}
		<-ctx.Done() // the engine stops mid-call
		return provider.ImportResponse{}, ctx.Err()
	}
	h := newHarness(t, nil)
	e1 := importEngine(t, h.store, f1)
	op, err := e1.Deploy(context.Background(), "s", api.DeployRequest{Files: map[string]string{"main.tf": importTF}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := e1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rows, _ := h.store.ListResources(context.Background(), "s"); len(rows) != 0 {
		t.Fatalf("rows after the stop: %+v, want none", rows)
	}

	f2 := newImportFake()
	h.e = importEngine(t, h.store, f2)
	if err := h.e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(op.ID); got.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("resumed op = %+v", got)
	}
	if f2.imports != 1 {
		t.Errorf("the resumed run imported %d times, want once again", f2.imports)
	}
	var calls []string
	for _, c := range f2.Calls() {
		calls = append(calls, c.Method+" "+c.Name+" "+c.ID)
	}
	if diff := cmp.Diff([]string{"Update fake_thing.r obj-1"}, calls); diff != "" {
		t.Errorf("calls after resume: -want +got\n%s", diff)
	}
	want := []string{"s CREATE_IN_PROGRESS", "fake_thing.r IMPORT_IN_PROGRESS", "fake_thing.r IMPORT_COMPLETE",
		"fake_thing.r UPDATE_IN_PROGRESS", "fake_thing.r UPDATE_COMPLETE", "s CREATE_COMPLETE"}
	if diff := cmp.Diff(want, h.statuses("s")); diff != "" {
		t.Errorf("events: -want +got\n%s", diff)
	}

	// The target is in the stack now: the import block does nothing.
	pr, err := h.e.Preview(context.Background(), "s", api.DeployRequest{Files: map[string]string{"main.tf": importTF}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Changes) != 0 || f2.imports != 1 {
		t.Errorf("preview after the deploy: %+v, %d imports; want no changes and no import", pr.Changes, f2.imports)
	}
}

// TestImportBlockPreview: a preview imports to plan (the change says so, with the object's
// id) and stores nothing; an object the provider does not find is an error at the resource.
func TestImportBlockPreview(t *testing.T) {
	f := newImportFake()
	h := newHarness(t, nil)
	e := importEngine(t, h.store, f)
	pr, err := e.Preview(context.Background(), "s", api.DeployRequest{Files: map[string]string{"main.tf": importTF}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Changes) != 1 || pr.Changes[0].Importing != "obj-1" || pr.Changes[0].Action != api.ActionModify || pr.Changes[0].PhysicalID != "obj-1" {
		t.Fatalf("preview changes = %+v, want fake_thing.r modified after importing obj-1", pr.Changes)
	}
	if _, err := h.store.GetStack(context.Background(), "s"); err == nil {
		t.Errorf("the preview stored the stack")
	}
	f.ImportFn = func(context.Context, provider.ImportRequest) (provider.ImportResponse, error) {
		return provider.ImportResponse{}, nil
	}
	_, err = e.Preview(context.Background(), "s", api.DeployRequest{Files: map[string]string{"main.tf": importTF}})
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || ve.Diagnostics[0].Summary != "Cannot import non-existent remote object" || ve.Diagnostics[0].Range.Line != 6 {
		t.Errorf("preview of a missing object: %v, want Cannot import non-existent remote object at main.tf:6", err)
	}
}
