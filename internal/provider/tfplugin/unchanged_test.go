package tfplugin

import (
	"slices"
	"testing"

	"github.com/cairn-dev/cairn/internal/provider"
)

// TestUnchangedSkipsPlan: a configuration equal to the one the stored state was applied from,
// under the same schema version, is answered without PlanResourceChange; any difference in
// configuration or schema version plans as terraform does. Validations are memoised.
func TestUnchangedSkipsPlan(t *testing.T) {
	f := newFake6()
	p := f.serve(t, Options{})
	ctx := testCtx(t)
	tc := fakeConfig(t, p, "x")
	for range 2 {
		ck, err := p.Check(ctx, provider.CheckRequest{Resource: fakeThing, Props: tc})
		if err != nil || len(ck.Failures) > 0 {
			t.Fatalf("Check = %+v, %v", ck, err)
		}
	}
	if n := f.called("ValidateResourceConfig"); n != 1 {
		t.Errorf("ValidateResourceConfig called %d times for one configuration, want 1", n)
	}
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: tc})
	noErrors(t, "Create", cr.Diagnostics, err)
	outs := stored(t, cr.Outputs)
	// As the engine hands it back: decoded from storage, where nulls lost their types.
	oldProps := stored(t, tc)

	plans := f.called("PlanResourceChange")
	same, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, OldProps: oldProps, NewProps: tc,
		OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(same)", same.Diagnostics, err)
	if same.Changed || f.called("PlanResourceChange") != plans {
		t.Errorf("unchanged configuration: Changed=%v, %d plans", same.Changed, f.called("PlanResourceChange")-plans)
	}

	older := wrapPrivate(fakeThingVersion-1, nil)
	if _, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, OldProps: oldProps, NewProps: tc,
		OldOutputs: outs, Private: older}); err != nil {
		t.Fatal(err)
	}
	if f.called("PlanResourceChange") != plans+1 {
		t.Errorf("a state of another schema version was not planned")
	}
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, OldProps: oldProps, NewProps: fakeConfig(t, p, "y"),
		OldOutputs: outs, Private: cr.Private})
	noErrors(t, "Diff(name)", d.Diagnostics, err)
	if !d.Replace || f.called("PlanResourceChange") < plans+2 {
		t.Errorf("a changed configuration was not planned: %+v", d)
	}
}

func TestQuietSDK(t *testing.T) {
	env := quietSDK([]string{"HOME=/h"})
	if !slices.Contains(env, "TF_LOG_SDK=OFF") || !slices.Contains(env, "TF_LOG_SDK_PROTO=OFF") {
		t.Errorf("quietSDK = %v", env)
	}
	user := []string{"HOME=/h", "TF_LOG=debug"}
	if got := quietSDK(user); !slices.Equal(got, user) {
		t.Errorf("a user's TF_LOG was overridden: %v", got)
	}
}
