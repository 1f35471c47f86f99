package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/state"
	"github.com/cairn-dev/cairn/internal/state/sqlite"
	"github.com/cairn-dev/cairn/internal/value"
)

// driftFake is a plugin-like provider whose objects can be changed or deleted "outside
// cairn": Read returns what the test set, by physical id.
type driftFake struct {
	*tfFake
	mu      sync.Mutex
	outside map[string]string // id -> value now
	gone    map[string]bool
	reads   int
	hook    func() // called in every Read, before it answers
}

func (f *driftFake) Capabilities() provider.Capabilities { return provider.Capabilities{Read: true} }

func (f *driftFake) Read(_ context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
	f.mu.Lock()
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.gone[req.ID] {
		return provider.ReadResponse{}, nil
	}
	outs, _ := req.Outputs.UnmarkDeep() // a plugin's answer carries its schema's marks only
	if v, ok := f.outside[req.ID]; ok {
		outs = cty.ObjectVal(map[string]cty.Value{"value": cty.StringVal(v)})
	}
	return provider.ReadResponse{ID: req.ID, Props: req.Props, Outputs: outs, Private: req.Private}, nil
}

func (f *driftFake) change(id, v string) {
	f.mu.Lock()
	f.outside[id] = v
	f.mu.Unlock()
}

func (f *driftFake) remove(id string) {
	f.mu.Lock()
	f.gone[id] = true
	f.mu.Unlock()
}

func (f *driftFake) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// newDriftHarness is an engine serving the Terraform language from a driftFake whose Diff
// plans the configuration as the new state (Changed when it differs from the stored one).
func newDriftHarness(t *testing.T) (*harness, *driftFake) {
	t.Helper()
	f := &driftFake{tfFake: &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}, outside: map[string]string{}, gone: map[string]bool{}}
	f.DiffFn = func(_ context.Context, req provider.DiffRequest) (provider.DiffResponse, error) {
		changed := req.OldOutputs == cty.NilVal || req.OldOutputs.IsNull() || !req.NewProps.IsWhollyKnown() ||
			!req.OldOutputs.GetAttr("value").RawEquals(req.NewProps.GetAttr("value"))
		return provider.DiffResponse{Changed: changed, Planned: req.NewProps}, nil
	}
	f.CreateFn = func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		return provider.CreateResponse{ID: "id-" + req.Resource.Name, Outputs: req.Props}, nil
	}
	h := newHarness(t, nil)
	e, err := engine.New(engine.Options{Store: h.store, Providers: provider.NewRegistry(), Plugins: fakePlugins{f}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h.e, h.fake = e, f.Fake
	return h, f
}

// driftConfig: b's value is derived from a's, c stands alone.
func driftConfig(a, b string) map[string]string {
	return map[string]string{"main.tf": `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "a" {
  value = "` + a + `"
}
resource "fake_thing" "b" {
  value = "${fake_thing.a.value}-` + b + `"
}
resource "fake_thing" "c" {
  value = "c"
}
output "a" { value = fake_thing.a.value }
`}
}

func (h *harness) deployTF(files map[string]string, refresh bool) api.Operation {
	h.t.Helper()
	op, err := h.e.Deploy(context.Background(), "tf", api.DeployRequest{Files: files, Refresh: refresh})
	if err != nil {
		h.t.Fatal(err)
	}
	done := h.wait(op.ID)
	if !strings.HasSuffix(done.StackStatus, "_COMPLETE") {
		h.t.Fatalf("deploy = %+v", done)
	}
	return done
}

func (h *harness) value(name string) string {
	h.t.Helper()
	row, err := h.store.GetResource(context.Background(), state.StackKey("default", "tf"), name)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(row.Outputs)
}

func changesOf(cs []api.Change) string {
	var out []string
	for _, c := range cs {
		s := c.Action + " " + c.LogicalID
		for _, d := range c.Details {
			s += fmt.Sprintf(" %s:%v->%v", d.Name, d.Before, d.After)
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// TestPreviewRefresh: without --refresh a preview reads nothing and sees no change; with it,
// the preview reads every resource, plans against what it read (repairing a's value,
// re-creating c), shows the drift the plan depends on, and stores nothing.
func TestPreviewRefresh(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(driftConfig("a", "b"), false)
	f.change("id-fake_thing.a", "edited")
	f.remove("id-fake_thing.c")
	before := h.value("fake_thing.a")

	plain, err := h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: driftConfig("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Changes) != 0 || len(plain.Drift) != 0 || f.readCount() != 0 {
		t.Fatalf("preview without --refresh: changes %s, drift %s, %d reads", changesOf(plain.Changes), changesOf(plain.Drift), f.readCount())
	}

	pr, err := h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: driftConfig("a", "b"), Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changesOf(pr.Changes), "Modify fake_thing.a value:edited->a; Add fake_thing.c value:<nil>->c"; got != want {
		t.Errorf("preview --refresh changes = %s, want %s", got, want)
	}
	// Nothing that changes depends on a or c: terraform shows no drift then.
	if len(pr.Drift) != 0 {
		t.Errorf("drift = %s, want none (no planned change depends on it)", changesOf(pr.Drift))
	}
	if f.readCount() != 3 {
		t.Errorf("reads = %d, want 3", f.readCount())
	}
	if h.value("fake_thing.a") != before || h.value("fake_thing.c") == "" || strings.HasPrefix(h.value("fake_thing.c"), "<") {
		t.Errorf("preview --refresh stored something: a = %s, c = %s", h.value("fake_thing.a"), h.value("fake_thing.c"))
	}

	// b changes and depends on a: a's drift is relevant to the plan and shown.
	pr, err = h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: driftConfig("a", "B"), Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changesOf(pr.Drift), "Changed fake_thing.a value:a->edited"; got != want {
		t.Errorf("drift = %s, want %s", got, want)
	}
}

// TestDeployRefreshRepairsDrift: deploy --refresh stores what it read, journalled, and repairs
// it: the edited object is updated back, the deleted one created again.
func TestDeployRefreshRepairsDrift(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(driftConfig("a", "b"), false)
	f.change("id-fake_thing.a", "edited")
	f.remove("id-fake_thing.c")
	n := len(f.Calls())

	// Without --refresh the deploy trusts its state: nothing to do.
	h.deployTF(driftConfig("a", "b"), false)
	if len(f.Calls()) != n || f.readCount() != 0 {
		t.Fatalf("a deploy without --refresh called the provider: %v, %d reads", f.Calls()[n:], f.readCount())
	}

	op := h.deployTF(driftConfig("a", "b"), true)
	var calls []string
	for _, c := range f.Calls()[n:] {
		calls = append(calls, c.Method+" "+c.Name)
	}
	sort.Strings(calls)
	if got, want := strings.Join(calls, ", "), "Create fake_thing.c, Update fake_thing.a"; got != want {
		t.Errorf("deploy --refresh calls = %s, want %s", got, want)
	}
	if got := h.value("fake_thing.a"); !strings.Contains(got, `{"value":"a"}`) {
		t.Errorf("a after deploy --refresh = %s", got)
	}
	journal, err := h.store.ListJournal(context.Background(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, je := range journal {
		if strings.HasPrefix(je.Step, "refresh") {
			steps = append(steps, je.Step)
		}
	}
	sort.Strings(steps) // one step per resource read in parallel, then the marker
	if got, want := strings.Join(steps, " "), "refresh refresh/fake_thing.a refresh/fake_thing.c"; got != want {
		t.Errorf("refresh journal = %s, want %s", got, want)
	}
	var reasons []string
	for _, ev := range h.events("tf") {
		if ev.Status == "REFRESH_COMPLETE" {
			reasons = append(reasons, ev.LogicalID+": "+ev.Reason)
		}
	}
	if len(reasons) != 2 || !strings.Contains(reasons[0]+reasons[1], "deleted outside of cairn") {
		t.Errorf("refresh events = %q", reasons)
	}
}

// TestRefreshStoresDriftOnly: refresh stores what it reads and changes no object; the next
// deploy (no --refresh) plans against the stored drift and repairs it.
func TestRefreshStoresDriftOnly(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(driftConfig("a", "b"), false)
	f.change("id-fake_thing.a", "edited")
	f.remove("id-fake_thing.c")
	n := len(f.Calls())

	resp, err := h.e.Refresh(context.Background(), "tf", api.RefreshRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changesOf(resp.Drift), "Changed fake_thing.a value:a->edited; Deleted fake_thing.c value:c-><nil>"; got != want {
		t.Errorf("refresh drift = %s, want %s", got, want)
	}
	if len(resp.OutputChanges) != 1 || resp.OutputChanges[0].After != "edited" {
		t.Errorf("output changes = %+v", resp.OutputChanges)
	}
	if len(f.Calls()) != n {
		t.Errorf("refresh changed objects: %v", f.Calls()[n:])
	}
	if got := h.value("fake_thing.a"); !strings.Contains(got, `{"value":"edited"}`) {
		t.Errorf("a after refresh = %s", got)
	}
	if got := h.value("fake_thing.c"); !strings.Contains(got, "not found") {
		t.Errorf("c after refresh = %s, want it gone from the state", got)
	}
	if st := h.describe("tf"); len(st.Outputs) != 1 || st.Outputs[0].Value != "edited" {
		t.Errorf("outputs after refresh = %+v", st.Outputs)
	}
	again, err := h.e.Refresh(context.Background(), "tf", api.RefreshRequest{})
	if err != nil || len(again.Drift) != 0 {
		t.Errorf("a second refresh = %+v, %v; want no drift", again, err)
	}

	pr, err := h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: driftConfig("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changesOf(pr.Changes), "Modify fake_thing.a value:edited->a; Add fake_thing.c value:<nil>->c"; got != want {
		t.Errorf("preview after refresh = %s, want %s", got, want)
	}
	h.deployTF(driftConfig("a", "b"), false)
	if got := h.value("fake_thing.a"); !strings.Contains(got, `{"value":"a"}`) {
		t.Errorf("a after the next deploy = %s", got)
	}
}

// TestRefreshCloudFormationNotChecked: a CloudFormation stack's custom resources have no Read;
// refresh lists them as not checked (CloudFormation's NOT_CHECKED) and changes nothing.
func TestRefreshCloudFormationNotChecked(t *testing.T) {
	h := newHarness(t, &providertest.Fake{})
	h.deploy("cfn", "Resources:\n  A:\n    Type: Test::Thing\n    Properties:\n      Size: 1\n")
	resp, err := h.e.Refresh(context.Background(), "cfn", api.RefreshRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Note, "no Read") || len(resp.Drift) != 0 || !slices.Equal(resp.NotChecked, []string{"A"}) {
		t.Errorf("refresh of a CloudFormation stack = %+v", resp)
	}
	pr, err := h.e.Preview(context.Background(), "cfn", api.DeployRequest{TemplateName: "stack.yaml",
		Template: "Resources:\n  A:\n    Type: Test::Thing\n    Properties:\n      Size: 1\n", Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(pr.Diagnostics) != 1 || pr.Diagnostics[0].Summary != "Not checked for drift: A" || len(pr.Changes) != 0 {
		t.Errorf("preview --refresh of a CloudFormation stack = %+v", pr)
	}
}

// TestRefreshCloudFormationReads: in a CloudFormation stack, resources whose provider can read
// are read back like a Terraform-language stack's: refresh stores the drift, preview --refresh
// plans against it, the next deploy repairs it; custom resources beside them are not checked.
func TestRefreshCloudFormationReads(t *testing.T) {
	var mu sync.Mutex
	live := map[string]int64{} // the "real" Size of each object
	readable := &providertest.Fake{}
	readable.CreateFn = func(_ context.Context, req provider.CreateRequest) (provider.CreateResponse, error) {
		size, _ := req.Props.GetAttr("Size").AsBigFloat().Int64()
		mu.Lock()
		live["r-1"] = size
		mu.Unlock()
		return provider.CreateResponse{ID: "r-1", Outputs: req.Props}, nil
	}
	readable.UpdateFn = func(_ context.Context, req provider.UpdateRequest) (provider.UpdateResponse, error) {
		size, _ := req.NewProps.GetAttr("Size").AsBigFloat().Int64()
		mu.Lock()
		live[req.ID] = size
		mu.Unlock()
		return provider.UpdateResponse{ID: req.ID, Outputs: req.NewProps}, nil
	}
	readable.ReadFn = func(_ context.Context, req provider.ReadRequest) (provider.ReadResponse, error) {
		mu.Lock()
		size, ok := live[req.ID]
		mu.Unlock()
		if !ok {
			return provider.ReadResponse{}, nil
		}
		v := cty.ObjectVal(map[string]cty.Value{"Size": cty.NumberIntVal(size)})
		return provider.ReadResponse{ID: req.ID, Props: v, Outputs: v}, nil
	}
	custom := &providertest.Fake{}
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{Keyring: secrets.Generate()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := provider.NewRegistry()
	reg.Register("Test::*", readable)
	reg.Register("Custom::*", custom)
	e, err := engine.New(engine.Options{Store: store, Providers: reg, LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	h := &harness{t: t, e: e, store: store, fake: readable}
	tmpl := "Resources:\n  R:\n    Type: Test::Thing\n    Properties:\n      Size: 1\n  C:\n    Type: Custom::Thing\n    Properties:\n      Label: c\n"
	h.deploy("cfn", tmpl)
	mu.Lock()
	live["r-1"] = 7 // changed outside cairn
	mu.Unlock()

	pr, err := h.e.Preview(context.Background(), "cfn", api.DeployRequest{TemplateName: "stack.yaml", Template: tmpl, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := changesOf(pr.Changes), "Modify R Size:7->1"; got != want {
		t.Errorf("preview --refresh = %s, want %s", got, want)
	}
	resp, err := h.e.Refresh(context.Background(), "cfn", api.RefreshRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Drift) != 1 || resp.Drift[0].LogicalID != "R" || resp.Drift[0].Action != api.DriftChanged || !slices.Equal(resp.NotChecked, []string{"C"}) {
		t.Errorf("refresh = %+v", resp)
	}
	if op := h.deploy("cfn", tmpl); op.StackStatus != "UPDATE_COMPLETE" {
		t.Fatalf("deploy after refresh: %+v", op)
	}
	mu.Lock()
	got := live["r-1"]
	mu.Unlock()
	if got != 1 {
		t.Errorf("R's Size after the repairing deploy = %d, want 1", got)
	}
	if calls := h.calls(); calls[len(calls)-1] != "Update R r-1" {
		t.Errorf("calls = %v, want the deploy to update R", calls)
	}
}

func (h *harness) events(stack string) []api.Event {
	h.t.Helper()
	evs, err := h.e.Events(context.Background(), stack, 0, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

// sensitiveConfig sets fake_thing.a's value from a sensitive variable: the provider's schema
// does not make it sensitive, the configuration does.
var sensitiveConfig = map[string]string{"main.tf": `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
variable "pw" {
  sensitive = true
  default   = "hunter2-secret"
}
resource "fake_thing" "a" {
  value = var.pw
}
`}

// TestRefreshKeepsSensitivity: what was sensitive in the state stays so after a refresh reads
// it back, as terraform re-applies the prior state's marks after ReadResource: in the stored
// row, the stack's view, the drift of refresh and of preview --refresh.
func TestRefreshKeepsSensitivity(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(sensitiveConfig, false)
	masked := func(when string) {
		t.Helper()
		row, err := h.store.GetResource(context.Background(), state.StackKey("default", "tf"), "fake_thing.a")
		if err != nil {
			t.Fatal(err)
		}
		v, err := value.Unmarshal(row.Outputs)
		if err != nil {
			t.Fatal(err)
		}
		if !v.GetAttr("value").HasMark(value.Sensitive) {
			t.Errorf("%s: the stored value is no longer sensitive: %s", when, row.Outputs)
		}
		for _, r := range h.describe("tf").Resources {
			if b, _ := json.Marshal(r.Attributes); strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "other-secret") {
				t.Errorf("%s: the stack shows the secret: %s", when, b)
			}
		}
	}
	masked("after the deploy")
	// Read back unchanged (a plugin's answer carries the schema's marks only).
	if _, err := h.e.Refresh(context.Background(), "tf", api.RefreshRequest{}); err != nil {
		t.Fatal(err)
	}
	masked("after a refresh without drift")
	// Changed outside: the drift shows no secret, before or after.
	f.change("id-fake_thing.a", "other-secret")
	pr, err := h.e.Preview(context.Background(), "tf", api.DeployRequest{Files: sensitiveConfig, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.e.Refresh(context.Background(), "tf", api.RefreshRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for what, cs := range map[string][]api.Change{"preview --refresh changes": pr.Changes, "preview --refresh drift": pr.Drift, "refresh drift": resp.Drift} {
		if got := changesOf(cs); strings.Contains(got, "secret") {
			t.Errorf("%s show the secret: %s", what, got)
		}
	}
	if len(resp.Drift) != 1 {
		t.Errorf("refresh drift = %s, want a's change", changesOf(resp.Drift))
	}
	masked("after a refresh with drift")
}

// TestRefreshOutlivesItsClient: a client that goes away in the middle of a refresh leaves no
// running operation behind: the refresh runs to its end and the stack takes deploys again.
func TestRefreshOutlivesItsClient(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(driftConfig("a", "b"), false)
	f.change("id-fake_thing.a", "edited")
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	f.mu.Lock()
	f.hook = func() { once.Do(cancel) }
	f.mu.Unlock()
	_, err := h.e.Refresh(ctx, "tf", api.RefreshRequest{})
	t.Logf("refresh of a client gone: %v", err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := h.describe("tf")
		if st.Operation == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s still running 10s after its client went away", st.Operation)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := h.value("fake_thing.a"); !strings.Contains(got, `"edited"`) {
		t.Errorf("a after the refresh = %s, want what was read", got)
	}
	h.deployTF(driftConfig("a", "b"), false)
}

// TestRefreshCancel: Cancel stops a refresh in the middle; it ends failed, once, and the
// stack takes deploys again.
func TestRefreshCancel(t *testing.T) {
	h, f := newDriftHarness(t)
	h.deployTF(driftConfig("a", "b"), false)
	reading, release := make(chan struct{}, 8), make(chan struct{})
	f.mu.Lock()
	f.hook = func() {
		reading <- struct{}{}
		<-release
	}
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := h.e.Refresh(context.Background(), "tf", api.RefreshRequest{})
		done <- err
	}()
	<-reading
	op, err := h.e.Cancel(context.Background(), "tf")
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("cancelled refresh = %v, want it to say it was cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled refresh did not end")
	}
	if got := h.wait(op.ID); got.Status != state.Failed {
		t.Errorf("cancelled refresh operation = %+v", got)
	}
	f.mu.Lock()
	f.hook = nil
	f.mu.Unlock()
	h.deployTF(driftConfig("a", "b"), false)
}
