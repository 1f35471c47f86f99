package engine_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/diag"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// harness is an engine over a fresh SQLite store with a Fake provider serving Test::*.
type harness struct {
	t     *testing.T
	e     *engine.Engine
	store state.Store
	fake  *providertest.Fake
}

func newHarness(t *testing.T, fake *providertest.Fake) *harness {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newHarnessOn(t, store, fake)
}

func newHarnessOn(t *testing.T, store state.Store, fake *providertest.Fake) *harness {
	t.Helper()
	reg := provider.NewRegistry()
	reg.Register("Test::*", fake)
	e, err := engine.New(engine.Options{Store: store, Providers: reg, LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return &harness{t: t, e: e, store: store, fake: fake}
}

// deploy deploys tmpl and waits for the operation to end.
func (h *harness) deploy(stack, tmpl string, mods ...func(*api.DeployRequest)) api.Operation {
	h.t.Helper()
	req := api.DeployRequest{TemplateName: "stack.yaml", Template: tmpl}
	for _, m := range mods {
		m(&req)
	}
	op, err := h.e.Deploy(context.Background(), stack, req)
	if err != nil {
		h.t.Fatalf("Deploy: %v", err)
	}
	return h.wait(op.ID)
}

func (h *harness) wait(id string) api.Operation {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op, err := h.e.Wait(ctx, id)
	if err != nil || op.Status == state.Running {
		h.t.Fatalf("Wait(%s) = %+v, %v", id, op, err)
	}
	return op
}

func (h *harness) describe(stack string) api.Stack {
	h.t.Helper()
	st, err := h.e.Stack(context.Background(), stack)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// statuses lists "LogicalId STATUS" for every event of stack.
func (h *harness) statuses(stack string) []string {
	h.t.Helper()
	evs, err := h.e.Events(context.Background(), stack, 0, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, ev.LogicalID+" "+ev.Status)
	}
	return out
}

// calls lists "Method Name ID" for every provider call.
func (h *harness) calls() []string {
	var out []string
	for _, c := range h.fake.Calls() {
		out = append(out, c.Method+" "+c.Name+" "+c.ID)
	}
	return out
}

const chain = `
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Size: {Type: Number, Default: 1}
Resources:
  A:
    Type: Test::Thing
    Properties: {Size: !Ref Size}
  B:
    Type: Test::Thing
    Properties: {Parent: !Ref A, Label: b}
  C:
    Type: Test::Thing
    Properties: {FromB: !GetAtt B.Label}
Outputs:
  CId: {Value: !Ref C}
  Label: {Value: !Sub "${B.Label}-${A}"}
`

func TestCreateUpdateDelete(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	if op := h.deploy("s", chain); op.Status != state.Succeeded || op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("create: %+v", op)
	}
	st := h.describe("s")
	wantOut := []api.Output{{Name: "CId", Value: "C-3"}, {Name: "Label", Value: "b-A-1"}}
	if diff := cmp.Diff(wantOut, st.Outputs); diff != "" {
		t.Errorf("outputs: -want +got\n%s", diff)
	}
	wantEvents := []string{"s CREATE_IN_PROGRESS", "A CREATE_IN_PROGRESS", "A CREATE_COMPLETE", "B CREATE_IN_PROGRESS",
		"B CREATE_COMPLETE", "C CREATE_IN_PROGRESS", "C CREATE_COMPLETE", "s CREATE_COMPLETE"}
	if diff := cmp.Diff(wantEvents, h.statuses("s")); diff != "" {
		t.Errorf("create events: -want +got\n%s", diff)
	}

	// Changing only B's label updates B and C (which reads it), never A.
	if op := h.deploy("s", strings.Replace(chain, "Label: b}", "Label: bb}", 1)); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("update: %+v", op)
	}
	// Re-deploying the same template calls nothing.
	h.deploy("s", strings.Replace(chain, "Label: b}", "Label: bb}", 1))
	bb := strings.Replace(chain, "Label: b}", "Label: bb}", 1)
	if op := h.deploy("s", bb[:strings.Index(bb, "  C:")]); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("remove C: %+v", op)
	}
	op, err := h.e.Delete(context.Background(), "s", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if op := h.wait(op.ID); op.StackStatus != "DELETE_COMPLETE" {
		t.Fatalf("delete: %+v", op)
	}
	want := []string{"Create A A-1", "Create B B-2", "Create C C-3", "Update B B-2", "Update C C-3",
		"Delete C C-3", "Delete B B-2", "Delete A A-1"}
	if diff := cmp.Diff(want, h.calls()); diff != "" {
		t.Errorf("provider calls: -want +got\n%s", diff)
	}
	if got := h.fake.Live(); len(got) != 0 {
		t.Errorf("live after delete: %v", got)
	}
	if _, err := h.e.Stacks(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReplacementDeletesOldCopyAfterSuccess(t *testing.T) {
	fake := &providertest.Fake{}
	fake.UpdateFn = func(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
		return provider.UpdateResponse{ID: req.ID + "-new", Outputs: req.NewProps}, nil
	}
	h := newHarness(t, fake)
	h.deploy("s", chain)
	// Size= takes the new Default: not given, Size would keep its value of the last deploy.
	op := h.deploy("s", strings.Replace(chain, "Default: 1", "Default: 2", 1), withParams("Size", ""))
	if op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("update: %+v", op)
	}
	// A is replaced; B references A's id so it updates (and is replaced by this fake) too; C
	// reads B.Label, unchanged. Old copies go only after every update succeeded, dependents first.
	want := []string{"Create A A-1", "Create B B-2", "Create C C-3", "Update A A-1", "Update B B-2", "Delete B B-2", "Delete A A-1"}
	if diff := cmp.Diff(want, h.calls()); diff != "" {
		t.Errorf("calls: -want +got\n%s", diff)
	}
	if diff := cmp.Diff([]string{"A-1-new", "B-2-new", "C-3"}, h.fake.Live()); diff != "" {
		t.Errorf("live: -want +got\n%s", diff)
	}
}

func failOn(name string) func(context.Context, provider.CreateRequest) (provider.CreateResponse, error) {
	return func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == name {
			return provider.CreateResponse{ID: "partial-" + name, Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "handler said no")}}, nil
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-x", Outputs: req.Props}, nil
	}
}

func TestCreateFailureRollsBack(t *testing.T) {
	h := newHarness(t, &providertest.Fake{CreateFn: failOn("B")})
	op := h.deploy("s", chain)
	if op.Status != state.Failed || op.StackStatus != "ROLLBACK_COMPLETE" {
		t.Fatalf("op = %+v", op)
	}
	want := []string{"Create A A-x", "Create B partial-B", "Delete B partial-B", "Delete A A-x"}
	if diff := cmp.Diff(want, h.calls()); diff != "" {
		t.Errorf("calls: -want +got\n%s", diff)
	}
	if !strings.Contains(op.StatusReason, "[B]") {
		t.Errorf("reason %q does not name B", op.StatusReason)
	}
	if st := h.describe("s"); len(st.Resources) != 0 {
		t.Errorf("resources left after rollback: %+v", st.Resources)
	}
	// A stack whose creation rolled back is created anew by the next deploy.
	h.fake.CreateFn = nil
	if op := h.deploy("s", chain); op.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("redeploy: %+v", op)
	}
}

// TestRollbackFailedRefusesUpdates: as CloudFormation, a stack whose creation could not be
// rolled back accepts only a delete.
func TestRollbackFailedRefusesUpdates(t *testing.T) {
	h := newHarness(t, &providertest.Fake{CreateFn: failOn("B"), DeleteFn: func(_ context.Context, req provider.DeleteRequest) (provider.DeleteResponse, error) {
		if req.Resource.Name == "A" {
			return provider.DeleteResponse{}, errors.New("A is stuck")
		}
		return provider.DeleteResponse{}, nil
	}})
	if op := h.deploy("s", chain); op.StackStatus != "ROLLBACK_FAILED" {
		t.Fatalf("op = %+v", op)
	}
	_, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{TemplateName: "stack.yaml", Template: chain})
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "ROLLBACK_FAILED state and can not be updated") {
		t.Fatalf("deploy of a ROLLBACK_FAILED stack: %v", err)
	}
	h.fake.DeleteFn = nil
	op, err := h.e.Delete(context.Background(), "s", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if op := h.wait(op.ID); op.StackStatus != "DELETE_COMPLETE" {
		t.Fatalf("delete: %+v", op)
	}
}

func TestDisableRollbackKeepsWhatWasCreated(t *testing.T) {
	h := newHarness(t, &providertest.Fake{CreateFn: failOn("B")})
	op := h.deploy("s", chain, func(r *api.DeployRequest) { r.DisableRollback = true })
	if op.StackStatus != "CREATE_FAILED" {
		t.Fatalf("op = %+v", op)
	}
	if diff := cmp.Diff([]string{"Create A A-x", "Create B partial-B"}, h.calls()); diff != "" {
		t.Errorf("calls: -want +got\n%s", diff)
	}
}

func TestUpdateFailureRollsBackWithSwappedProperties(t *testing.T) {
	fake := &providertest.Fake{}
	h := newHarness(t, fake)
	h.deploy("s", chain)
	fake.UpdateFn = func(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
		if req.Resource.Name == "B" && req.NewProps.GetAttr("Label").AsString() == "broken" {
			return provider.UpdateResponse{Diagnostics: diag.Diagnostics{diag.Errorf(diag.Range{}, "", "cannot")}}, nil
		}
		id := req.ID
		if req.Resource.Name == "A" {
			id += "-new"
		}
		return provider.UpdateResponse{ID: id, Outputs: req.NewProps}, nil
	}
	tmpl := strings.Replace(strings.Replace(chain, "Default: 1", "Default: 2", 1), "Label: b}", "Label: broken}", 1)
	op := h.deploy("s", tmpl, withParams("Size", "")) // the new Default (params_test.go)
	if op.StackStatus != "UPDATE_ROLLBACK_COMPLETE" {
		t.Fatalf("op = %+v", op)
	}
	var rollbackB *providertest.Call
	calls := fake.Calls()
	for i := range calls {
		if c := calls[i]; c.Method == "Update" && c.Name == "B" && c.Props.GetAttr("Label").AsString() == "b" {
			rollbackB = &calls[i]
		}
	}
	if rollbackB == nil || rollbackB.OldProps.GetAttr("Label").AsString() != "broken" {
		t.Fatalf("no rollback Update of B with swapped properties in %v", h.calls())
	}
	// A was replaced (A-1 -> A-1-new) and rolled back by an Update that returned yet another
	// id: the copies made during the update are deleted in the rollback cleanup.
	want := []string{"Update A A-1", "Update B B-2", "Update B B-2", "Update A A-1-new", "Delete A A-1-new"}
	if diff := cmp.Diff(want, h.calls()[3:]); diff != "" {
		t.Errorf("calls after create: -want +got\n%s", diff)
	}
	wantTail := []string{"s UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", "A DELETE_IN_PROGRESS", "A DELETE_COMPLETE", "s UPDATE_ROLLBACK_COMPLETE"}
	got := h.statuses("s")
	if diff := cmp.Diff(wantTail, got[len(got)-4:]); diff != "" {
		t.Errorf("last events: -want +got\n%s", diff)
	}
}

func TestBusyStackIsRefused(t *testing.T) {
	release := make(chan struct{})
	fake := &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		<-release
		return provider.CreateResponse{ID: "x", Outputs: cty.EmptyObjectVal}, nil
	}}
	h := newHarness(t, fake)
	op, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	var busy *state.BusyError
	if !errors.As(err, &busy) || busy.Operation != op.ID {
		t.Fatalf("second deploy: err = %v, want BusyError naming %s", err, op.ID)
	}
	if !strings.Contains(err.Error(), "stack s is busy with operation "+op.ID) {
		t.Errorf("message %q", err)
	}
	close(release)
	h.wait(op.ID)
}

func TestResumeAfterShutdownReusesTokens(t *testing.T) {
	started := make(chan string, 10)
	fake := &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == "B" {
			started <- req.Token
			<-ctx.Done() // the engine stops mid-call
			return provider.CreateResponse{}, ctx.Err()
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-1", Outputs: req.Props}, nil
	}}
	h := newHarness(t, fake)
	op, err := h.e.Deploy(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	token := <-started
	if err := h.e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if o, _ := h.store.GetOperation(context.Background(), op.ID); o.Status != state.Running {
		t.Fatalf("after shutdown the operation is %s, want still running", o.Status)
	}

	var resumedToken string
	fake2 := &providertest.Fake{CreateFn: func(ctx context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		if req.Resource.Name == "B" {
			resumedToken = req.Token
		}
		return provider.CreateResponse{ID: req.Resource.Name + "-2", Outputs: req.Props}, nil
	}}
	h2 := newHarnessOn(t, h.store, fake2)
	if err := h2.e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h2.wait(op.ID); got.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("resumed op = %+v", got)
	}
	if resumedToken != token {
		t.Errorf("resumed create of B used token %q, want the journaled %q", resumedToken, token)
	}
	// A finished before the restart and is not created again.
	if diff := cmp.Diff([]string{"Create B B-2", "Create C C-2"}, h2.calls()); diff != "" {
		t.Errorf("calls after resume: -want +got\n%s", diff)
	}
}

func TestPreview(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	pv, err := h.e.Preview(context.Background(), "s", api.DeployRequest{Template: chain})
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Changes) != 3 || pv.Changes[1].Details[1].After != api.UnknownMarker {
		t.Errorf("preview of a new stack: %+v", pv.Changes)
	}
	h.deploy("s", chain)
	tmpl := strings.Replace(chain[:strings.Index(chain, "  C:")], "Label: b}", "Label: c}", 1)
	pv, err = h.e.Preview(context.Background(), "s", api.DeployRequest{Template: tmpl})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Change{
		{LogicalID: "B", PhysicalID: "B-2", Type: "Test::Thing", Action: api.ActionModify, Replacement: api.ReplaceFalse,
			Details: []api.PropertyChange{{Name: "Label", Before: "b", After: "c"}}},
		{LogicalID: "C", PhysicalID: "C-3", Type: "Test::Thing", Action: api.ActionRemove},
	}
	if diff := cmp.Diff(want, pv.Changes); diff != "" {
		t.Errorf("preview: -want +got\n%s", diff)
	}
	if len(h.fake.Calls()) != 3 {
		t.Errorf("preview called the provider: %v", h.calls())
	}
}

func TestValidateListsServedTypes(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	resp, err := h.e.Validate(context.Background(), api.ValidateRequest{TemplateName: "t.yaml",
		Template: "Resources:\n  X:\n    Type: Nope::Thing\n"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Valid || len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Summary, "Test::*") ||
		resp.Diagnostics[0].Path != "Resources.X.Type" || resp.Diagnostics[0].Line == 0 {
		t.Errorf("Validate = %+v", resp)
	}
}

// TestParallelismBoundsProviderCalls: a deploy's --parallelism bounds the provider calls in
// flight, as terraform's -parallelism does.
func TestParallelismBoundsProviderCalls(t *testing.T) {
	var mu sync.Mutex
	running, most := 0, 0
	h := newHarness(t, &providertest.Fake{CreateFn: func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return provider.CreateResponse{ID: req.Resource.Name + "-x", Outputs: req.Props}, nil
	}})
	var b strings.Builder
	b.WriteString("Resources:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  R%d: {Type: Test::Thing, Properties: {N: %d}}\n", i, i)
	}
	for _, par := range []int{2, 0} {
		mu.Lock()
		most = 0
		mu.Unlock()
		op := h.deploy(fmt.Sprintf("p%d", par), b.String(), func(r *api.DeployRequest) { r.Parallelism = par })
		if op.StackStatus != "CREATE_COMPLETE" {
			t.Fatalf("op = %+v", op)
		}
		mu.Lock()
		got := most
		mu.Unlock()
		if par == 2 && got > 2 {
			t.Errorf("--parallelism 2: %d creates at once", got)
		}
		if par == 0 && got <= 2 {
			t.Errorf("default parallelism: only %d creates at once", got)
		}
	}
}
