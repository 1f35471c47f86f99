package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/plan"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

// savedPlan previews tmpl for stack and returns the plan a deploy --plan would send.
func (h *harness) savedPlan(stack, tmpl string) (api.PreviewResponse, json.RawMessage) {
	h.t.Helper()
	p, err := h.e.Preview(context.Background(), stack, api.DeployRequest{TemplateName: "stack.yaml", Template: tmpl})
	if err != nil {
		h.t.Fatalf("Preview: %v", err)
	}
	if len(p.Plan) == 0 {
		h.t.Fatal("the preview has no plan")
	}
	return p, p.Plan
}

func TestSavedPlanAppliesExactly(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	h.deploy("s", chain)
	bb := strings.Replace(chain, "Label: b}", "Label: bb}", 1)
	p, saved := h.savedPlan("s", bb)
	var pl plan.Plan
	if err := json.Unmarshal(saved, &pl); err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range pl.Steps {
		steps = append(steps, s.Resource+" "+string(s.Action))
	}
	// C reads B.Label, unknown until B is updated: the plan updates it too.
	if diff := cmp.Diff([]string{"B update", "C update"}, steps); diff != "" { // A stays: no step
		t.Errorf("plan steps: -want +got\n%s", diff)
	}
	if diff := cmp.Diff([]api.OutputChange{{Name: "Label", Action: api.ActionModify, Before: "b-A-1", After: api.UnknownMarker}}, p.Outputs); diff != "" {
		t.Errorf("output changes: -want +got\n%s", diff)
	}
	before := len(h.calls())
	op := h.deploy("s", bb, func(r *api.DeployRequest) { r.Plan = saved })
	if op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("deploy --plan: %+v", op)
	}
	if diff := cmp.Diff([]string{"Update B B-2", "Update C C-3"}, h.calls()[before:]); diff != "" {
		t.Errorf("calls of deploy --plan: -want +got\n%s", diff)
	}
	if got := h.describe("s").Outputs; len(got) != 2 || got[1].Value != "bb-A-1" {
		t.Errorf("outputs after deploy --plan: %+v", got)
	}
}

func TestSavedPlanRefusedWhenStateMoved(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	h.deploy("s", chain)
	bb := strings.Replace(chain, "Label: b}", "Label: bb}", 1)
	_, saved := h.savedPlan("s", bb)
	// Someone else deploys in between.
	h.deploy("s", strings.Replace(chain, "Label: b}", "Label: other}", 1))
	before := len(h.calls())
	_, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{TemplateName: "stack.yaml", Template: bb, Plan: saved})
	var stale *plan.StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("Deploy of a stale plan = %v, want a *plan.StaleError", err)
	}
	for _, want := range []string{"the stack's state changed", "resource B changed", "resource C changed", "Preview again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "resource A changed") {
		t.Errorf("refusal %q names A, which did not move", err)
	}
	if got := h.calls()[before:]; len(got) != 0 {
		t.Errorf("a refused plan called the provider: %v", got)
	}
	// Another template than the plan's.
	_, saved = h.savedPlan("s", bb)
	_, err = h.e.Deploy(context.Background(), "s", api.DeployRequest{TemplateName: "stack.yaml", Template: chain, Plan: saved})
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "the template or its parameters changed") {
		t.Errorf("Deploy of another template's plan = %v", err)
	}
	// A plan for another stack.
	_, err = h.e.Deploy(context.Background(), "t", api.DeployRequest{TemplateName: "stack.yaml", Template: bb, Plan: saved})
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "made for stack s") {
		t.Errorf("Deploy of another stack's plan = %v", err)
	}
}

// A provider that answers differently at apply time than when the plan was checked: the
// step that would do more than planned fails, naming the plan.
func TestSavedPlanHeldDuringTheRun(t *testing.T) {
	var diffs atomic.Int32
	fake := &providertest.Fake{}
	fake.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		n := diffs.Add(1)
		// Previews (the saved one and the deploy's check) see an update; the run a replacement.
		return provider.DiffResponse{Changed: true, Replace: n > 2, ChangedKeys: []string{"Size"}}, nil
	}
	h := newHarness(t, fake)
	h.deploy("s", "Resources:\n  A:\n    Type: Test::Thing\n    Properties: {Size: 1}\n")
	diffs.Store(0)
	tmpl := "Resources:\n  A:\n    Type: Test::Thing\n    Properties: {Size: 2}\n"
	_, saved := h.savedPlan("s", tmpl)
	op := h.deploy("s", tmpl, func(r *api.DeployRequest) { r.Plan = saved })
	if op.Status != state.Failed {
		t.Fatalf("deploy --plan with another answer: %+v", op)
	}
	var reason string
	evs, _ := h.e.Events(context.Background(), "s", 0, 0)
	for _, ev := range evs {
		if ev.LogicalID == "A" && ev.Status == "UPDATE_FAILED" {
			reason = ev.Reason
		}
	}
	if !strings.Contains(reason, "the saved plan said A would update; it would now update (replacement: True)") {
		t.Errorf("A's failure = %q", reason)
	}
}

const cascadeTF = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "a" {
  value = "A"
}
resource "fake_thing" "b" {
  value = fake_thing.a.value
}
`

// replacingDiff replaces every existing object whose configuration changed.
func replacingDiff(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
	changed := req.OldProps.IsNull() || !req.OldProps.RawEquals(req.NewProps)
	return provider.DiffResponse{Changed: changed, Replace: changed && req.ID != "", Planned: req.NewProps,
		ChangedKeys: []string{"value"}, ReplacePaths: []string{"value"}}, nil
}

// A delete-first replacement cascading to its dependent applies under the plan that showed it:
// the dependent destroyed first is created again at its own step, the second half of its
// planned replacement.
func TestSavedPlanCascade(t *testing.T) {
	h, f := newTFHarness(t, nil, engine.Options{})
	f.DiffFn = replacingDiff
	h.deployTF(map[string]string{"main.tf": cascadeTF}, false)
	files := map[string]string{"main.tf": strings.Replace(cascadeTF, `value = "A"`, `value = "A2"`, 1)}
	pr, err := h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var pl plan.Plan
	if err := json.Unmarshal(pr.Plan, &pl); err != nil {
		t.Fatal(err)
	}
	if s, _ := pl.Step("fake_thing.a"); !slices.Equal(s.DestroyFirst, []string{"fake_thing.b"}) {
		t.Errorf("a's step = %+v, want b destroyed first", s)
	}
	op, err := h.e.Deploy(context.Background(), "tf", api.DeployRequest{Files: files, Plan: pr.Plan})
	if err != nil {
		t.Fatalf("Deploy: %v", err)
	}
	if op = h.wait(op.ID); op.Status != state.Succeeded {
		t.Fatalf("deploy --plan of its own fresh plan: %+v\n%v", op, h.statuses("tf"))
	}
}

// An import block whose object the configuration replaces applies under its plan.
func TestSavedPlanImportThenReplace(t *testing.T) {
	f := newImportFake()
	f.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		return provider.DiffResponse{Changed: true, Replace: req.ID != "", Planned: req.NewProps, ChangedKeys: []string{"value"}, ReplacePaths: []string{"value"}}, nil
	}
	h := newHarness(t, nil)
	h.e = importEngine(t, h.store, f)
	req := api.DeployRequest{Files: map[string]string{"main.tf": importTF}}
	pr, err := h.e.Preview(context.Background(), "s", req)
	if err != nil {
		t.Fatal(err)
	}
	req.Plan = pr.Plan
	op, err := h.e.Deploy(context.Background(), "s", req)
	if err != nil {
		t.Fatal(err)
	}
	if op = h.wait(op.ID); op.Status != state.Succeeded {
		t.Errorf("deploy --plan of an import that replaces: %+v\n%v", op, h.statuses("s"))
	}
}

// Another deploy that lands between the plan's check and the run's lease: the run refuses
// before it changes anything, and deletes nothing the plan never showed.
func TestSavedPlanRaceRefused(t *testing.T) {
	plain, fake := &providertest.Fake{}, &providertest.Fake{}
	var armed atomic.Bool
	var h *harness
	fake.DiffFn = func(ctx context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		if armed.CompareAndSwap(true, false) { // inside the deploy's check of the plan: someone else deploys (adds B)
			h.deploy("s", "Resources:\n  A:\n    Type: Test::Thing\n    Properties: {Size: 1}\n  B:\n    Type: Test::Thing\n    Properties: {Size: 9}\n")
		}
		return plain.Diff(ctx, req)
	}
	h = newHarness(t, fake)
	h.deploy("s", "Resources:\n  A:\n    Type: Test::Thing\n    Properties: {Size: 1}\n")
	tmpl := "Resources:\n  A:\n    Type: Test::Thing\n    Properties: {Size: 2}\n"
	_, saved := h.savedPlan("s", tmpl)
	armed.Store(true)
	before := len(h.calls())
	op := h.deploy("s", tmpl, func(r *api.DeployRequest) { r.Plan = saved })
	if op.Status != state.Failed || !strings.Contains(op.StatusReason, "resource B was added") {
		t.Errorf("deploy --plan after another deploy landed: %+v", op)
	}
	if got := h.calls()[before:]; len(got) != 1 || got[0] != "Create B B-2" {
		t.Errorf("calls = %v, want only the other deploy's", got)
	}
}
