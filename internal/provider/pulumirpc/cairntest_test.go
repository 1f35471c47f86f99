package pulumirpc

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// These tests run cairn's own test provider (test/pulumiproviders/cairntest.go), a plugin
// built with the Pulumi Go SDK, for what the conformance providers do not do: slow operations
// that honour Cancel, partial failures, deletions behind the engine's back, previews with
// unknowns and diffs with replaces, deleteBeforeReplace and stables.

const thing = "cairntest:index:Thing"

// launchCairntest starts cairntest with its objects and call log in a directory of its own.
func launchCairntest(t *testing.T) (*Provider, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("CAIRNTEST_DIR", dir) // the plugin inherits cairn's environment, as from Pulumi's
	exe := providerbin.PulumiPlugin(t, plugins(t), "cairntest", "1.0.0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Launch(ctx, Options{Package: "cairntest", Executable: exe, Dir: dir, Project: "proj", Stack: "dev", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p, dir
}

// calls is the plugin's call log so far.
func calls(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// waitForCall polls the call log until it holds line, for up to a generous minute.
func waitForCall(t *testing.T, dir, line string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
		if slices.Contains(strings.Split(string(b), "\n"), line) {
			return
		}
	}
	t.Fatalf("the plugin never logged %q", line)
}

func props(kv map[string]cty.Value) cty.Value { return cty.ObjectVal(kv) }

func checked(t *testing.T, p *Provider, name string, in cty.Value) cty.Value {
	t.Helper()
	chk, err := p.Check(context.Background(), provider.CheckRequest{Resource: res(thing, name), Props: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check %s: %v %+v", name, err, chk.Failures)
	}
	return chk.Props
}

// A cancelled run (Ctrl-C) sends Cancel to the plugin instead of cutting the call off: the
// slow create returns at once, and the object it made comes back with its id, as Pulumi's
// engine gets it.
func TestCancelStopsASlowCreateAndKeepsItsObject(t *testing.T) {
	p, dir := launchCairntest(t)
	in := checked(t, p, "slow", props(map[string]cty.Value{"value": cty.StringVal("v"), "sleep": cty.NumberIntVal(3600)}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan provider.CreateResponse)
	errc := make(chan error, 1)
	go func() {
		resp, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "slow"), Props: in})
		errc <- err
		done <- resp
	}()
	waitForCall(t, dir, "Create slow")
	cancel()
	var resp provider.CreateResponse
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("create after Cancel: %v", err)
		}
		resp = <-done
	case <-time.After(time.Minute):
		t.Fatal("the create still runs a minute after its context ended: Cancel did not reach the plugin")
	}
	if resp.ID == "" || !strings.HasPrefix(resp.ID, "slow-") {
		t.Fatalf("the object the cancelled create made has no id: %+v", resp)
	}
	if !resp.Diagnostics.HasErrors() || !strings.Contains(resp.Diagnostics.Err().Error(), "cancelled") {
		t.Errorf("diagnostics = %v, want the plugin's reason", resp.Diagnostics)
	}
	if resp.NotCreated != "" {
		t.Errorf("NotCreated = %q for a create that made its object", resp.NotCreated)
	}
	if got := resp.Outputs.GetAttr("uid"); got.AsString() != resp.ID {
		t.Errorf("outputs of the partial object: uid = %#v", got)
	}
	if got := calls(t, dir); !slices.Contains(got, "Cancel") {
		t.Errorf("calls = %v, want Cancel", got)
	}
}

// Cancel reaches the plugin once however many calls were in flight, and a call started after
// the run was cancelled is not sent.
func TestCancelIsSentOnceAndLaterCallsAreRefused(t *testing.T) {
	p, dir := launchCairntest(t)
	in := checked(t, p, "s", props(map[string]cty.Value{"sleep": cty.NumberIntVal(3600)}))
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	for _, name := range []string{"s1", "s2"} {
		go func() {
			_, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, name), Props: in})
			errs <- err
		}()
	}
	waitForCall(t, dir, "Create s1")
	waitForCall(t, dir, "Create s2")
	cancel()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	if _, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "s3"), Props: in}); err == nil {
		t.Error("a create after the cancellation went through")
	}
	n := 0
	for _, c := range calls(t, dir) {
		if c == "Cancel" {
			n++
		}
		if c == "Create s3" {
			t.Errorf("s3 reached the plugin: %v", calls(t, dir))
		}
	}
	if n != 1 {
		t.Errorf("Cancel sent %d times, want once: %v", n, calls(t, dir))
	}
}

// A create that made its object and then failed (ErrorResourceInitFailed) reports the id, the
// outputs and the plugin's reasons; the object can then be updated, as Pulumi's next `up` does.
func TestPartialCreateThenUpdate(t *testing.T) {
	p, _ := launchCairntest(t)
	ctx := context.Background()
	in := checked(t, p, "part", props(map[string]cty.Value{"value": cty.StringVal("a"), "failCreate": cty.True}))
	resp, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "part"), Props: in})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID == "" || resp.Outputs.GetAttr("out").AsString() != "out-a" || resp.NotCreated != "" {
		t.Fatalf("partial create: %+v", resp)
	}
	if !resp.Diagnostics.HasErrors() || !strings.Contains(resp.Diagnostics.Err().Error(), resp.ID+" did not become ready: failCreate is set") {
		t.Fatalf("diagnostics = %v", resp.Diagnostics)
	}
	fixed := checked(t, p, "part", props(map[string]cty.Value{"value": cty.StringVal("a"), "failCreate": cty.False}))
	up, err := p.Update(ctx, provider.UpdateRequest{Resource: res(thing, "part"), ID: resp.ID, OldProps: in, NewProps: fixed, OldOutputs: resp.Outputs})
	if err != nil || up.Diagnostics.HasErrors() {
		t.Fatalf("update of the partial object: %v %v", err, up.Diagnostics)
	}
	if up.Outputs.GetAttr("uid").AsString() != resp.ID {
		t.Errorf("update outputs: %#v", up.Outputs)
	}
}

// Read of an object deleted behind the engine's back answers an empty id: refresh drops it.
func TestReadOfADeletedObject(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx := context.Background()
	in := checked(t, p, "gone", props(map[string]cty.Value{"value": cty.StringVal("x")}))
	c, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "gone"), Props: in})
	if err != nil || c.Diagnostics.HasErrors() {
		t.Fatalf("create: %v %v", err, c.Diagnostics)
	}
	r, err := p.Read(ctx, provider.ReadRequest{Resource: res(thing, "gone"), ID: c.ID, Props: in, Outputs: c.Outputs})
	if err != nil || r.ID != c.ID || r.Outputs.GetAttr("out").AsString() != "out-x" {
		t.Fatalf("read of a live object: %v %+v", err, r)
	}
	if err := os.Remove(filepath.Join(dir, "things", c.ID+".json")); err != nil {
		t.Fatal(err)
	}
	r, err = p.Read(ctx, provider.ReadRequest{Resource: res(thing, "gone"), ID: c.ID, Props: in, Outputs: c.Outputs})
	if err != nil || r.ID != "" || r.Diagnostics.HasErrors() {
		t.Fatalf("read of a deleted object: %v %+v", err, r)
	}
}

// In a preview, unknown inputs pass Check and Diff and reach Create(preview=true); outputs the
// plugin cannot know yet come back unknown, the others known.
func TestPreviewWithUnknowns(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx := context.Background()
	unknown := checked(t, p, "u", props(map[string]cty.Value{"value": cty.UnknownVal(cty.String)}))
	pc, err := p.PreviewCreate(ctx, provider.CreateRequest{Resource: res(thing, "u"), Props: unknown})
	if err != nil || pc.Diagnostics.HasErrors() {
		t.Fatalf("preview create: %v %v", err, pc.Diagnostics)
	}
	if pc.Outputs.GetAttr("out").IsKnown() || pc.Outputs.GetAttr("uid").IsKnown() {
		t.Errorf("outputs of a preview with an unknown value: %#v", pc.Outputs)
	}
	known := checked(t, p, "k", props(map[string]cty.Value{"value": cty.StringVal("v")}))
	pc, err = p.PreviewCreate(ctx, provider.CreateRequest{Resource: res(thing, "k"), Props: known})
	if err != nil || pc.Outputs.GetAttr("out").AsString() != "out-v" || pc.Outputs.GetAttr("uid").IsKnown() {
		t.Fatalf("preview create with known inputs: %v %#v", err, pc.Outputs)
	}
	olds := props(map[string]cty.Value{"value": cty.StringVal("v")})
	d, err := p.Diff(ctx, provider.DiffRequest{Resource: res(thing, "k"), ID: "k-1", OldProps: olds, OldOutputs: olds, NewProps: unknown})
	if err != nil || !d.Changed || d.Replace {
		t.Fatalf("diff towards an unknown: %v %+v", err, d)
	}
	pu, err := p.PreviewUpdate(ctx, provider.UpdateRequest{Resource: res(thing, "k"), ID: "k-1", OldProps: olds, OldOutputs: olds, NewProps: unknown})
	if err != nil || pu.Outputs.GetAttr("out").IsKnown() || pu.Outputs.GetAttr("uid").AsString() != "k-1" {
		t.Fatalf("preview update: %v %#v", err, pu.Outputs)
	}
	for _, want := range []string{"Create u preview", "Create k preview", "Update k preview"} {
		waitForCall(t, dir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "things")); !os.IsNotExist(err) {
		t.Errorf("a preview made objects: %v", err)
	}
}

// Diff's detailed diff: a key change replaces (delete-before-replace when the inputs ask for
// it); a value change is in place and keeps uid stable.
func TestDiffReplacesAndStables(t *testing.T) {
	p, _ := launchCairntest(t)
	ctx := context.Background()
	olds := props(map[string]cty.Value{"value": cty.StringVal("v"), "key": cty.StringVal("k1")})
	cases := map[string]struct {
		news cty.Value
		want provider.DiffResponse
	}{
		"KeyReplaces": {
			news: props(map[string]cty.Value{"value": cty.StringVal("v"), "key": cty.StringVal("k2")}),
			want: provider.DiffResponse{Changed: true, Replace: true, ChangedKeys: []string{"key"}, ReplacePaths: []string{"key"}},
		},
		"DeleteBeforeReplace": {
			news: props(map[string]cty.Value{"value": cty.StringVal("v"), "key": cty.StringVal("k2"), "deleteBeforeReplace": cty.True}),
			want: provider.DiffResponse{Changed: true, Replace: true, ChangedKeys: []string{"deleteBeforeReplace", "key"},
				ReplacePaths: []string{"key"}, DeleteBeforeReplace: true},
		},
		"ValueInPlace": {
			news: props(map[string]cty.Value{"value": cty.StringVal("w"), "key": cty.StringVal("k1")}),
			want: provider.DiffResponse{Changed: true, ChangedKeys: []string{"value"}, Stables: []string{"uid"}},
		},
		"Same": {
			news: olds,
			want: provider.DiffResponse{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := p.Diff(ctx, provider.DiffRequest{Resource: res(thing, "d"), ID: "d-1", OldProps: olds, OldOutputs: olds, NewProps: tc.news})
			if err != nil {
				t.Fatal(err)
			}
			d.Planned = cty.NilVal
			if diff := cmp.Diff(tc.want, d, cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })); diff != "" {
				t.Errorf("Diff: -want +got:\n%s", diff)
			}
		})
	}
}

// Check failures name the property they are about.
func TestCairntestCheckFailures(t *testing.T) {
	p, _ := launchCairntest(t)
	chk, err := p.Check(context.Background(), provider.CheckRequest{Resource: res(thing, "bad"),
		Props: props(map[string]cty.Value{"sleep": cty.NumberIntVal(-1), "value": cty.True})})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range chk.Failures {
		got = append(got, f.Property)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"sleep", "value"}, got); diff != "" {
		t.Errorf("failures: -want +got:\n%s\n%+v", diff, chk.Failures)
	}
}

// A Diff of a resource that does not exist yet (a preview planning its create) is answered
// with Create(preview=true): Planned holds what the plugin can tell.
func TestDiffOfANewResourcePreviewsItsCreate(t *testing.T) {
	p, dir := launchCairntest(t)
	in := checked(t, p, "n", props(map[string]cty.Value{"value": cty.StringVal("v")}))
	d, err := p.Diff(context.Background(), provider.DiffRequest{Resource: res(thing, "n"), NewProps: in})
	if err != nil || !d.Changed || d.Diagnostics.HasErrors() {
		t.Fatalf("diff of a new resource: %v %+v", err, d)
	}
	if d.Planned.GetAttr("out").AsString() != "out-v" || d.Planned.GetAttr("uid").IsKnown() {
		t.Errorf("planned = %#v", d.Planned)
	}
	waitForCall(t, dir, "Create n preview")
}

// Check sends the stored inputs as olds when the engine gives them (an update), and empty
// olds otherwise (a create, or a replacement's new object checked again), as Pulumi's engine.
func TestCairntestCheckSendsOlds(t *testing.T) {
	p, dir := launchCairntest(t)
	in := props(map[string]cty.Value{"value": cty.StringVal("one")})
	checked(t, p, "created", in)
	chk, err := p.Check(context.Background(), provider.CheckRequest{Resource: res(thing, "updated"), Props: in, OldProps: in})
	if err != nil || len(chk.Failures) > 0 {
		t.Fatalf("check with olds: %v %+v", err, chk.Failures)
	}
	got := slices.DeleteFunc(calls(t, dir), func(c string) bool { return !strings.HasPrefix(c, "Check") })
	if want := []string{"Check created", "Check(olds) updated"}; !slices.Equal(got, want) {
		t.Errorf("checks = %v, want %v", got, want)
	}
}

// The Read of a stored resource (a refresh) is followed by the Diff Pulumi's engine makes of
// what was read against the stored inputs; the inputs read are the ones to store, and the
// stored ones when the plugin reads none. A Read that imports (nothing stored) has no Diff.
func TestRefreshReadIsFollowedByItsDiff(t *testing.T) {
	p, dir := launchCairntest(t)
	ctx := context.Background()
	in := checked(t, p, "r", props(map[string]cty.Value{"value": cty.StringVal("x")}))
	c, err := p.Create(ctx, provider.CreateRequest{Resource: res(thing, "r"), Props: in})
	if err != nil || c.Diagnostics.HasErrors() {
		t.Fatalf("create: %v %v", err, c.Diagnostics)
	}
	_ = os.Remove(filepath.Join(dir, "calls.log"))
	r, err := p.Read(ctx, provider.ReadRequest{Resource: res(thing, "r"), ID: c.ID, Props: in, Outputs: c.Outputs})
	if err != nil || !r.PropsRead || !r.Props.RawEquals(in) {
		t.Fatalf("read: %v %+v", err, r)
	}
	if _, err := p.Import(ctx, provider.ImportRequest{Resource: res(thing, "r"), ID: c.ID}); err != nil {
		t.Fatalf("import: %v", err)
	}
	if got, want := calls(t, dir), []string{"Read r", "Diff r", "Read r"}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
}
