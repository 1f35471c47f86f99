package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/api"
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
	if diff := cmp.Diff([]string{"A same", "B update", "C update"}, steps); diff != "" {
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
