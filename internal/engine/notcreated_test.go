package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

// TestRollbackSkipsDeleteOfCreateNotCreated: a failed create whose provider reports that
// nothing was created (CreateResponse.NotCreated: a custom-resource handler that never
// accepted the request) gets no Delete in the rollback, which completes; the event says why.
// A created resource is still deleted; without NotCreated a failed create is deleted as
// before (TestCreateFailureRollsBack).
func TestRollbackSkipsDeleteOfCreateNotCreated(t *testing.T) {
	const why = "the endpoint never accepted the Create request (it answered 500), so nothing was created"
	fake := &providertest.Fake{
		CreateFn: func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
			if req.Resource.Name == "B" {
				return provider.CreateResponse{NotCreated: why,
					Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "the endpoint answered 500")}}, nil
			}
			return provider.CreateResponse{ID: req.Resource.Name + "-x", Outputs: req.Props}, nil
		},
		DeleteFn: func(_ context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
			if req.Resource.Name == "B" { // what today's rollback ran into: ROLLBACK_FAILED
				return provider.DeleteResponse{}, errors.New("the endpoint answered 500 to the Delete request")
			}
			return provider.DeleteResponse{}, nil
		},
	}
	h := newHarness(t, fake)
	op := h.deploy("s", chain)
	if op.Status != state.Failed || op.StackStatus != "ROLLBACK_COMPLETE" {
		t.Fatalf("op = %+v, want ROLLBACK_COMPLETE", op)
	}
	if diff := cmp.Diff([]string{"Create A A-x", "Create B ", "Delete A A-x"}, h.calls()); diff != "" {
		t.Errorf("calls: -want +got\n%s", diff)
	}
	evs, err := h.e.Events(context.Background(), "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.LogicalID == "B" {
			got = append(got, ev.Status+": "+ev.Reason)
		}
	}
	want := []string{"CREATE_IN_PROGRESS: ", "CREATE_FAILED: the endpoint answered 500", "DELETE_SKIPPED: Delete skipped: " + why}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events of B: -want +got\n%s", diff)
	}
	if st := h.describe("s"); len(st.Resources) != 0 {
		t.Errorf("resources left after rollback: %+v", st.Resources)
	}
}
