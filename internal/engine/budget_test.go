package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/budget"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestBudgetFailsAStepNotTheProcess: an expression whose size is known only once a resource
// is applied (setproduct of three 1,000-element ranges, the third sized by fake_thing.a's
// value) passes validate and preview, where it is unknown; during the run it used to ask cty
// for a 24 GB slice and kill the process at every restart. Now its step fails naming the
// elements limit, the operation ends failed as any failure does, and the engine goes on.
func TestBudgetFailsAStepNotTheProcess(t *testing.T) {
	h, f := newTFHarness(t, nil, engine.Options{})
	e := h.e
	files := map[string]string{"main.tf": tfConfig("x") + `
resource "fake_thing" "b" {
  value = tostring(length(setproduct(range(1000), range(1000), range(length(fake_thing.r0.value) > 0 ? 1000 : 0))))
}
`}
	ctx := context.Background()
	if v, err := e.Validate(ctx, api.ValidateRequest{Files: files}); err != nil || !v.Valid {
		t.Fatalf("Validate = %+v, %v; want valid (the product is unknown)", v, err)
	}
	if _, err := e.Preview(ctx, "tf", api.DeployRequest{Files: files}); err != nil {
		t.Fatalf("Preview: %v", err)
	}
	op, err := e.Deploy(ctx, "tf", api.DeployRequest{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	done := h.wait(op.ID)
	if done.Status != "failed" || done.StackStatus != "CREATE_FAILED" {
		t.Fatalf("deploy = %s, stack %s; want failed, CREATE_FAILED", done.Status, done.StackStatus)
	}
	evs, err := e.Events(ctx, "tf", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, ev := range evs {
		if ev.LogicalID == "fake_thing.b" && ev.Status == "CREATE_FAILED" {
			reason = ev.Reason
		}
	}
	t.Logf("fake_thing.b: %q", reason)
	if !strings.Contains(reason, "setproduct: exceeds the elements limit") || !strings.Contains(reason, "--max-elements") {
		t.Errorf("fake_thing.b failed with %q, want the elements limit named", reason)
	}
	for _, c := range f.Calls() {
		if c.Name == "fake_thing.b" && c.Method == "Create" {
			t.Errorf("fake_thing.b was created")
		}
	}
	// The engine still runs operations.
	op, err = e.Deploy(ctx, "other", api.DeployRequest{Files: map[string]string{"main.tf": tfConfig("y")}})
	if err != nil {
		t.Fatal(err)
	}
	if done := h.wait(op.ID); done.StackStatus != "CREATE_COMPLETE" {
		t.Errorf("a deploy after the failure = %s", done.StackStatus)
	}
}

// TestLimitsOption: engine.Options.Limits bounds requests: a count past --max-instances is a
// validation error naming the limit, at its place.
func TestLimitsOption(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{Limits: budget.Limits{Instances: 5}})
	e := h.e
	files := map[string]string{"main.tf": tfConfig() + "resource \"fake_thing\" \"n\" {\n  count = 6\n}\n"}
	v, err := e.Validate(context.Background(), api.ValidateRequest{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if v.Valid || len(v.Diagnostics) != 1 || !strings.Contains(v.Diagnostics[0].Detail, "count: exceeds the instances limit of this server (5)") ||
		v.Diagnostics[0].Line != 7 || v.Diagnostics[0].Column != 11 {
		t.Errorf("Validate = %+v, want the instances limit at main.tf:7:11", v)
	}
}

// TestOutputOverLimit: an output past a limit is a validation error at its place, not a stack
// that fails after its resources were made.
func TestOutputOverLimit(t *testing.T) {
	h, f := newTFHarness(t, nil, engine.Options{})
	e := h.e
	files := map[string]string{"main.tf": tfConfig("x") +
		"output \"o\" {\n  value = length(flatten([for a in range(1000): [for b in range(1000): [for c in range(1000): c]]]))\n}\n"}
	_, err := e.Deploy(context.Background(), "tf", api.DeployRequest{Files: files})
	var ve *engine.ValidationError
	if !errors.As(err, &ve) || len(ve.Diagnostics) != 1 || !strings.Contains(ve.Diagnostics[0].Detail, "for expression: exceeds the elements limit") ||
		ve.Diagnostics[0].Range.Line != 10 {
		t.Fatalf("Deploy: %v, want the elements limit at main.tf:10", err)
	}
	if len(f.Calls()) != 0 {
		t.Errorf("provider calls %v, want none", f.Calls())
	}
}
