package statetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cairn-dev/cairn/internal/state"
)

func testStacks(t *testing.T, s state.Store) {
	ctx := t.Context()
	got, err := s.ListStacks(ctx, "")
	must(t, "ListStacks", err)
	if len(got) != 0 {
		t.Errorf("ListStacks of an empty store: got %d stacks, want none", len(got))
	}
	_, err = s.GetStack(ctx, "missing")
	wantNotFound(t, "GetStack(missing)", err)
	_, err = s.StackStatus(ctx, "missing")
	wantNotFound(t, "StackStatus(missing)", err)

	for _, name := range []string{"b", "c", "a"} {
		must(t, "PutStack", s.PutStack(ctx, stack(name)))
	}
	a, err := s.GetStack(ctx, "a")
	must(t, "GetStack", err)
	if diff := cmp.Diff(stack("a"), a, opts); diff != "" {
		t.Errorf("GetStack(a) after PutStack: -want +got:\n%s", diff)
	}
	wantUTC(t, "GetStack", a.CreatedAt, a.UpdatedAt)

	// PutStack replaces by name, every field.
	a2 := state.Stack{Tenant: state.DefaultTenant, Name: "a", ID: "other-id", Dialect: "ros", Status: "UPDATE_COMPLETE", UpdatedAt: t0.Add(time.Hour)}
	must(t, "PutStack", s.PutStack(ctx, a2))
	got, err = s.ListStacks(ctx, "")
	must(t, "ListStacks", err)
	want := []state.Stack{a2, stack("b"), stack("c")}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("ListStacks must be sorted by name and show the replaced row: -want +got:\n%s", diff)
	}
	for key, status := range map[string]string{"a": "UPDATE_COMPLETE", "b": "CREATE_COMPLETE"} {
		if got, err := s.StackStatus(ctx, key); err != nil || got != status {
			t.Errorf("StackStatus(%s) = %q, %v; want %q", key, got, err, status)
		}
	}
}

// testStackOperationField: Stack.Operation is kept by the store. It names the stack's
// running operation from StartOperation to FinishOperation, whatever order StartOperation and
// PutStack come in (the engine starts the operation of a new stack before writing its row),
// and PutStack neither sets nor clears it.
func testStackOperationField(t *testing.T, s state.Store) {
	ctx := t.Context()
	must(t, "StartOperation", s.StartOperation(ctx, operation("op1", "new")))
	row := stack("new")
	row.Operation = "ignored"
	must(t, "PutStack", s.PutStack(ctx, row))
	wantOp := func(when, want string) {
		t.Helper()
		got, err := s.GetStack(ctx, "new")
		must(t, "GetStack", err)
		if got.Operation != want {
			t.Errorf("%s: GetStack().Operation = %q, want %q", when, got.Operation, want)
		}
		list, err := s.ListStacks(ctx, "")
		must(t, "ListStacks", err)
		if len(list) != 1 || list[0].Operation != want {
			t.Errorf("%s: ListStacks() = %+v, want one stack with Operation %q", when, list, want)
		}
	}
	wantOp("after StartOperation then PutStack", "op1")

	row.Operation = ""
	must(t, "PutStack", s.PutStack(ctx, row))
	wantOp("after PutStack with an empty Operation", "op1")

	must(t, "FinishOperation", s.FinishOperation(ctx, "op1", state.Succeeded, "", t0))
	wantOp("after FinishOperation", "")

	must(t, "StartOperation", s.StartOperation(ctx, operation("op2", "new")))
	wantOp("after a second StartOperation on an existing row", "op2")
}

func testDeleteStack(t *testing.T, s state.Store) {
	ctx := t.Context()
	fill := func(name string) {
		must(t, "PutStack", s.PutStack(ctx, stack(name)))
		must(t, "StartOperation", s.StartOperation(ctx, operation("old-"+name, name)))
		_, err := s.Append(ctx, entry("old-"+name, name, "create/A", state.End), state.Write{Put: ptr(resource(name, "A"))})
		must(t, "Append", err)
		must(t, "FinishOperation", s.FinishOperation(ctx, "old-"+name, state.Succeeded, "", t0))
		must(t, "StartOperation", s.StartOperation(ctx, operation("run-"+name, name)))
		_, err = s.Append(ctx, entry("run-"+name, name, "create/B", state.End), state.Write{Put: ptr(resource(name, "B"))})
		must(t, "Append", err)
		_, err = s.AppendEvent(ctx, event(name, "A", "CREATE_COMPLETE"))
		must(t, "AppendEvent", err)
	}
	fill("doomed")
	fill("kept")

	must(t, "DeleteStack", s.DeleteStack(ctx, "doomed"))

	_, err := s.GetStack(ctx, "doomed")
	wantNotFound(t, "GetStack after DeleteStack", err)
	for _, id := range []string{"old-doomed", "run-doomed"} {
		_, err := s.GetOperation(ctx, id)
		wantNotFound(t, "GetOperation("+id+") after DeleteStack", err)
		j, err := s.ListJournal(ctx, id)
		must(t, "ListJournal", err)
		if len(j) != 0 {
			t.Errorf("ListJournal(%s) after DeleteStack: got %d entries, want none", id, len(j))
		}
	}
	res, err := s.ListResources(ctx, "doomed")
	must(t, "ListResources", err)
	ev, err := s.ListEvents(ctx, "doomed", 0, 0)
	must(t, "ListEvents", err)
	if len(res) != 0 || len(ev) != 0 {
		t.Errorf("after DeleteStack: %d resources and %d events left, want none", len(res), len(ev))
	}
	running, err := s.ListRunningOperations(ctx)
	must(t, "ListRunningOperations", err)
	if len(running) != 1 || running[0].ID != "run-kept" {
		t.Errorf("ListRunningOperations after DeleteStack = %+v, want only run-kept", running)
	}

	// The other stack is untouched.
	res, err = s.ListResources(ctx, "kept")
	must(t, "ListResources", err)
	ev, err = s.ListEvents(ctx, "kept", 0, 0)
	must(t, "ListEvents", err)
	j, err := s.ListJournal(ctx, "old-kept")
	must(t, "ListJournal", err)
	if len(res) != 2 || len(ev) != 1 || len(j) != 1 {
		t.Errorf("DeleteStack touched another stack: it has %d resources, %d events, %d journal entries; want 2, 1, 1",
			len(res), len(ev), len(j))
	}
	if _, err := s.GetStack(ctx, "kept"); err != nil {
		t.Errorf("GetStack(kept) after deleting another stack: %v", err)
	}

	// The name is free again, with no running operation left behind.
	must(t, "PutStack", s.PutStack(ctx, stack("doomed")))
	must(t, "StartOperation after DeleteStack", s.StartOperation(ctx, operation("again", "doomed")))
	must(t, "DeleteStack", s.DeleteStack(ctx, "doomed"))

	wantNotFound(t, "DeleteStack of a deleted stack", s.DeleteStack(ctx, "doomed"))
	wantNotFound(t, "DeleteStack(never)", s.DeleteStack(ctx, "never"))
}

func testResources(t *testing.T, s state.Store) {
	ctx := t.Context()
	_, err := s.GetResource(ctx, "s", "missing")
	wantNotFound(t, "GetResource(missing)", err)

	bare := state.Resource{Stack: "s", Name: "Bare"} // nil slices, zero time
	noDeps := resource("s", "NoDeps")
	noDeps.Deps = []string{}
	unknown := resource("s", "Unknown") // written before the protect flag was kept
	unknown.Protect, unknown.ProtectUnknown = false, true
	writes := []state.Write{{Put: ptr(resource("s", "Zeta"))}, {Put: &bare}, {Put: ptr(resource("s", "Alpha"))},
		{Put: &noDeps}, {Put: ptr(resource("t", "Alpha"))}, {Put: &unknown}}
	for _, w := range writes {
		_, err := s.Append(ctx, entry("op", w.Put.Stack, "create/"+w.Put.Name, state.End), w)
		must(t, "Append", err)
	}
	got, err := s.ListResources(ctx, "s")
	must(t, "ListResources", err)
	want := []state.Resource{resource("s", "Alpha"), bare, noDeps, unknown, resource("s", "Zeta")}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("ListResources must be sorted by name and hold only the stack's rows: -want +got:\n%s", diff)
	}
	one, err := s.GetResource(ctx, "s", "Zeta")
	must(t, "GetResource", err)
	if diff := cmp.Diff(resource("s", "Zeta"), one, opts); diff != "" {
		t.Errorf("GetResource: -want +got:\n%s", diff)
	}
	wantUTC(t, "GetResource", one.UpdatedAt)
	if len(one.Deps) != 2 || one.Deps[0] != "Other" {
		t.Errorf("GetResource().Deps = %q, want the order written", one.Deps)
	}
	empty, err := s.ListResources(ctx, "none")
	must(t, "ListResources", err)
	if len(empty) != 0 {
		t.Errorf("ListResources of an unknown stack: got %d rows, want none", len(empty))
	}
}

func ptr[T any](v T) *T { return &v }

// testTenants: stacks of two tenants may share a name; each tenant lists only its own, and
// everything of a stack is reached through its key.
func testTenants(t *testing.T, s state.Store) {
	ctx := t.Context()
	a, b := stack("app"), stack("app")
	b.Tenant, b.ID = "team-b", "arn:cairn:stack/b-app"
	must(t, "PutStack", s.PutStack(ctx, a))
	must(t, "PutStack", s.PutStack(ctx, b))
	keyB := state.StackKey("team-b", "app")
	if keyB == "app" {
		t.Fatalf("StackKey of another tenant must differ from the default tenant's")
	}
	gotB, err := s.GetStack(ctx, keyB)
	must(t, "GetStack", err)
	if diff := cmp.Diff(b, gotB, opts); diff != "" {
		t.Errorf("GetStack(team-b/app): -want +got:\n%s", diff)
	}
	for tenant, want := range map[string][]state.Stack{"": {a}, "default": {a}, "team-b": {b}, "team-c": nil} {
		got, err := s.ListStacks(ctx, tenant)
		must(t, "ListStacks", err)
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("ListStacks(%q): -want +got:\n%s", tenant, diff)
		}
	}
	must(t, "StartOperation", s.StartOperation(ctx, operation("op-b", keyB)))
	must(t, "StartOperation", s.StartOperation(ctx, operation("op-a", "app")))
	must(t, "DeleteStack", s.DeleteStack(ctx, keyB))
	if _, err := s.GetStack(ctx, "app"); err != nil {
		t.Errorf("deleting team-b's app deleted the default tenant's: %v", err)
	}
	if _, err := s.GetOperation(ctx, "op-a"); err != nil {
		t.Errorf("deleting team-b's app deleted the default tenant's operation: %v", err)
	}
}

// testTakeOverOperation: a dead holder's lease is taken at once; a live one's is not.
func testTakeOverOperation(t *testing.T, s state.Store) {
	ctx := t.Context()
	must(t, "StartOperation", s.StartOperation(ctx, operation("op1", "x"))) // owner server-1, lease an hour
	var busy *state.BusyError
	if err := s.ClaimOperation(ctx, "op1", "server-2", time.Now().Add(time.Minute)); !errors.As(err, &busy) || busy.Owner != "server-1" {
		t.Fatalf("ClaimOperation of a live lease: %v, want a *BusyError naming server-1", err)
	}
	if err := s.TakeOverOperation(ctx, "op1", "server-3", "server-2", time.Now().Add(time.Minute)); !errors.As(err, &busy) {
		t.Errorf("TakeOverOperation from a holder that does not hold it: %v, want a *BusyError", err)
	}
	must(t, "TakeOverOperation", s.TakeOverOperation(ctx, "op1", "server-1", "server-2", time.Now().Add(time.Minute)))
	op, err := s.GetOperation(ctx, "op1")
	must(t, "GetOperation", err)
	if op.Owner != "server-2" {
		t.Errorf("after TakeOverOperation the owner is %q, want server-2", op.Owner)
	}
}
