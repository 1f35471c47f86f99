package tfplugin

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/provider"
)

// TestValidationMemoAndStateCurrent: one configuration is validated once per provider
// instance; StateCurrent tells a state of the current schema version from an older one.
func TestValidationMemoAndStateCurrent(t *testing.T) {
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
	if _, err := p.Check(ctx, provider.CheckRequest{Resource: fakeThing, Props: fakeConfig(t, p, "y")}); err != nil {
		t.Fatal(err)
	}
	if n := f.called("ValidateResourceConfig"); n != 2 {
		t.Errorf("a second configuration was not validated: %d calls", n)
	}
	cr, err := p.Create(ctx, provider.CreateRequest{Resource: fakeThing, Props: tc})
	noErrors(t, "Create", cr.Diagnostics, err)
	if !p.StateCurrent(ctx, "fake_thing", cr.Private) {
		t.Errorf("a state just written is not current")
	}
	if p.StateCurrent(ctx, "fake_thing", wrapPrivate(fakeThingVersion-1, nil)) || p.StateCurrent(ctx, "fake_thing", []byte("raw")) {
		t.Errorf("an older or unversioned state counts as current")
	}
	// Diff always plans: whether a configuration may be skipped is the engine's call.
	plans := f.called("PlanResourceChange")
	if _, err := p.Diff(ctx, provider.DiffRequest{Resource: fakeThing, ID: cr.ID, OldProps: stored(t, tc), NewProps: tc,
		OldOutputs: stored(t, cr.Outputs), Private: cr.Private}); err != nil {
		t.Fatal(err)
	}
	if f.called("PlanResourceChange") != plans+1 {
		t.Errorf("Diff did not plan")
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

// TestPluginEnvHasNoCairnVariables: a plugin never gets cairn's CAIRN_* variables, also when
// cairn logs at debug level (they were passed on then); only without debug are the SDKs
// quietened.
func TestPluginEnvHasNoCairnVariables(t *testing.T) {
	environ := []string{"HOME=/h", "CAIRN_TOKEN=t0ken", "CAIRN_SECRETS_KEY=k3y"}
	for _, debug := range []bool{false, true} {
		env := pluginEnv(environ, debug)
		for _, kv := range env {
			if strings.HasPrefix(kv, "CAIRN_") {
				t.Errorf("debug=%v: the plugin gets %s", debug, kv)
			}
		}
		if quiet := !slices.Equal(env, []string{"HOME=/h"}); quiet == debug {
			t.Errorf("debug=%v: env %v; the SDKs' logging should be off only without debug", debug, env)
		}
	}
}
