package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

// TestProgressEvents: what a provider reports with provider.ReportProgress during a call
// becomes an event of the step's in-progress status (a custom resource whose function returned
// without answering says it keeps waiting for the answer).
func TestProgressEvents(t *testing.T) {
	fake := &providertest.Fake{}
	fake.CreateFn = func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		provider.ReportProgress(ctx, "waiting for the answer")
		return provider.CreateResponse{ID: "A-1", Outputs: req.Props}, nil
	}
	fake.DeleteFn = func(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
		provider.ReportProgress(ctx, "still deleting")
		return provider.DeleteResponse{}, nil
	}
	h := newHarness(t, fake)
	if op := h.deploy("s", "Resources:\n  A:\n    Type: Test::Thing\n    Properties:\n      Size: 1\n"); op.Status != state.Succeeded {
		t.Fatalf("deploy: %+v", op)
	}
	op, err := h.e.Delete(context.Background(), "s", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(op.ID)
	var got []string
	for _, ev := range h.events("s") {
		if ev.LogicalID == "A" {
			got = append(got, ev.Status+" "+ev.Reason)
		}
	}
	want := []string{"CREATE_IN_PROGRESS ", "CREATE_IN_PROGRESS waiting for the answer", "CREATE_COMPLETE ",
		"DELETE_IN_PROGRESS ", "DELETE_IN_PROGRESS still deleting", "DELETE_COMPLETE "}
	if !slices.Equal(got, want) {
		t.Errorf("events of A:\n got %q\nwant %q", got, want)
	}
}
