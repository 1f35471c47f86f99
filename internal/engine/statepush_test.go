package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/provider"
	"github.com/cairn-dev/cairn/internal/provider/providertest"
	"github.com/cairn-dev/cairn/internal/state"
)

const pushConfig = `terraform {
  required_providers {
    fake = { source = "example.com/test/fake" }
  }
}
resource "fake_thing" "a" {
  value = "a"
}
resource "fake_thing" "b" {
  count = 2
  value = "b"
}
output "a" { value = fake_thing.a.value }
`

const fakeProvider = `provider[\"example.com/test/fake\"]`

// tfstateOf is a terraform state with the given lineage, serial and resources (a JSON list).
func tfstateOf(lineage string, serial int, resources string) []byte {
	return []byte(fmt.Sprintf(`{"version": 4, "terraform_version": "1.11.0", "serial": %d, "lineage": %q,
  "outputs": {"a": {"value": "a", "type": "string"}}, "resources": %s, "check_results": null}`, serial, lineage, resources))
}

// pushResources is pushConfig's resources as terraform's state holds them.
const pushResources = `[
  {"mode": "managed", "type": "fake_thing", "name": "a", "provider": "` + fakeProvider + `",
   "instances": [{"schema_version": 0, "attributes": {"value": "a"}}]},
  {"mode": "managed", "type": "fake_thing", "name": "b", "provider": "` + fakeProvider + `",
   "instances": [{"index_key": 0, "schema_version": 0, "attributes": {"value": "b"}},
                 {"index_key": 1, "schema_version": 0, "attributes": {"value": "b"}}]}
]`

const lineage1 = "11111111-2222-4333-8444-555555555555"

func pushReq(st []byte) api.StatePushRequest {
	return api.StatePushRequest{State: st, Source: api.DeployRequest{Files: map[string]string{"main.tf": pushConfig}}}
}

// TestPushAddressesAreChecked: a state whose instance keys, addresses or resources are not
// terraform's is refused whole, naming what is wrong, and the stack keeps what it had.
func TestPushAddressesAreChecked(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	ctx := context.Background()
	if _, err := h.e.PushState(ctx, "s", pushReq(tfstateOf(lineage1, 3, pushResources))); err != nil {
		t.Fatal(err)
	}
	before := resourceIDs(h.describe("s"))
	inst := func(key string) string {
		return `{"index_key": ` + key + `, "schema_version": 0, "attributes": {"value": "b"}}`
	}
	res := func(module, typ, name, instances string) string {
		m := ""
		if module != "" {
			m = `"module": "` + module + `", `
		}
		return `{` + m + `"mode": "managed", "type": "` + typ + `", "name": "` + name + `", "provider": "` + fakeProvider + `", "instances": [` + instances + `]}`
	}
	for name, tc := range map[string]struct{ resources, want string }{
		"FractionalKey":     {`[` + res("", "fake_thing", "b", inst("0.5")) + `]`, "invalid instance key 0.5"},
		"NegativeKey":       {`[` + res("", "fake_thing", "b", inst("-1")) + `]`, "invalid instance key -1"},
		"DuplicateKey":      {`[` + res("", "fake_thing", "b", inst("0")+","+inst("0")) + `]`, `fake_thing.b[0] appears twice`},
		"DuplicateResource": {`[` + res("", "fake_thing", "b", inst("0")) + `,` + res("", "fake_thing", "b", inst("1")) + `]`, `fake_thing.b appears twice`},
		"BadName":           {`[` + res("", "fake_thing", "b[0]", inst("0")) + `]`, `invalid resource name "b[0]"`},
		"BadType":           {`[` + res("", "fake.thing", "b", inst("0")) + `]`, `invalid resource type "fake.thing"`},
		"BadModule":         {`[` + res("module.m.x", "fake_thing", "b", inst("0")) + `]`, `invalid module path "module.m.x"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.e.PushState(ctx, "s", pushReq(tfstateOf(lineage1, 4, tc.resources)))
			var ve *engine.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("push = %v, want a validation error saying %q", err, tc.want)
			}
		})
	}
	if after := resourceIDs(h.describe("s")); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused push changed the stack: %v, then %v", before, after)
	}
}

// TestPushLineageIsNotTheStackID: one state pushed to two stacks gives both its lineage, but
// each stack keeps an id of its own.
func TestPushLineageIsNotTheStackID(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	ctx := context.Background()
	for _, s := range []string{"one", "two"} {
		resp, err := h.e.PushState(ctx, s, pushReq(tfstateOf(lineage1, 3, pushResources)))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Resources != 3 || resp.Lineage != lineage1 || resp.Serial != 3 {
			t.Errorf("push to %s = %+v", s, resp)
		}
	}
	one, two := h.describe("one"), h.describe("two")
	if one.ID == two.ID || one.ID == lineage1 || two.ID == lineage1 {
		t.Errorf("stack ids %s and %s: each stack needs its own, not the state's lineage", one.ID, two.ID)
	}
	for _, s := range []string{"one", "two"} {
		head := pulledHead(t, h.e, s)
		if head.Lineage != lineage1 || head.Serial <= 3 {
			t.Errorf("pull of %s: lineage %s serial %d, want %s and a serial above 3", s, head.Lineage, head.Serial, lineage1)
		}
	}
	// A deploy keeps the lineage and raises the serial; a pull reads no event list for it.
	before := pulledHead(t, h.e, "one")
	op, err := h.e.Deploy(ctx, "one", api.DeployRequest{Files: map[string]string{"main.tf": pushConfig}})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(op.ID)
	counting := &eventCounting{Store: h.store}
	after := pulledHead(t, tfEngineOn(t, counting), "one")
	if after.Lineage != lineage1 || after.Serial <= before.Serial {
		t.Errorf("pull after a deploy: lineage %s serial %d; before it %s serial %d", after.Lineage, after.Serial, before.Lineage, before.Serial)
	}
	if counting.lists != 0 {
		t.Errorf("a pull listed the stack's events %d times: its serial must cost one index read", counting.lists)
	}
	// Deleted and pushed again, the stack is new: a new id and the new state's lineage.
	del, err := h.e.Delete(ctx, "one", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	h.wait(del.ID)
	const lineage3 = "33333333-2222-4333-8444-555555555555"
	if _, err := h.e.PushState(ctx, "one", pushReq(tfstateOf(lineage3, 1, pushResources))); err != nil {
		t.Fatal(err)
	}
	if again := h.describe("one"); again.ID == one.ID {
		t.Errorf("a stack pushed after its delete kept its old id %s", one.ID)
	}
	if head := pulledHead(t, h.e, "one"); head.Lineage != lineage3 {
		t.Errorf("pull after a push onto a deleted stack: lineage %s, want %s", head.Lineage, lineage3)
	}
}

// eventCounting counts ListEvents calls.
type eventCounting struct {
	state.Store
	lists int
}

func (c *eventCounting) ListEvents(ctx context.Context, stack string, after int64, limit int) ([]state.Event, error) {
	c.lists++
	return c.Store.ListEvents(ctx, stack, after, limit)
}

type stateHead struct {
	Lineage string `json:"lineage"`
	Serial  uint64 `json:"serial"`
}

func pulledHead(t *testing.T, e *engine.Engine, stack string) stateHead {
	t.Helper()
	b, err := e.PullState(context.Background(), stack, api.StatePullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var head stateHead
	if err := json.Unmarshal(b, &head); err != nil {
		t.Fatal(err)
	}
	return head
}

// TestPushManySensitivePaths: a state listing 20,000 sensitive paths (a 1.7 MB file) is
// pushed and shown in seconds, every listed element masked; marking compared every value
// with every path and took minutes.
func TestPushManySensitivePaths(t *testing.T) {
	h, _ := newTFHarness(t, nil, engine.Options{})
	const n = 20000
	elems := make([]string, n)
	paths := make([]string, n)
	for i := range elems {
		elems[i] = `"x"`
		paths[i] = fmt.Sprintf(`[{"type":"get_attr","value":"l"},{"type":"index","value":{"value":%d,"type":"number"}}]`, i)
	}
	resources := `[{"mode": "managed", "type": "fake_thing", "name": "a", "provider": "` + fakeProvider + `",
	  "instances": [{"schema_version": 0, "attributes": {"value": "a", "l": [` + strings.Join(elems, ",") + `]},
	  "sensitive_attributes": [` + strings.Join(paths, ",") + `]}]}]`
	done := make(chan error, 1)
	var st api.Stack
	go func() {
		_, err := h.e.PushState(context.Background(), "s", pushReq(tfstateOf(lineage1, 1, resources)))
		if err == nil {
			st, err = h.e.Stack(context.Background(), "s")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("push and describe of %d sensitive paths took more than 20s", n)
	}
	for _, r := range st.Resources {
		if r.LogicalID != "fake_thing.a" {
			continue
		}
		attrs, _ := r.Attributes.(map[string]any)
		l, _ := attrs["l"].([]any)
		if len(l) != n || l[0] != api.SensitiveMarker || l[n-1] != api.SensitiveMarker {
			t.Errorf("l = %.200v; want %d elements, all masked", l, n)
		}
		return
	}
	t.Errorf("fake_thing.a not in the stack: %+v", st.Resources)
}

// errKilled is the panic of a store whose process is killed (kill -9) at a chosen write.
var errKilled = errors.New("killed")

// killingStore kills its engine at the adoption of a pushed state: before the journal entry
// that writes the rows ("before"), or at the first write after it ("after").
type killingStore struct {
	state.Store
	at      string
	mu      sync.Mutex
	adopted bool
	armed   bool
}

func (k *killingStore) kill(point string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.armed && (point == k.at || (k.at == "after" && k.adopted)) {
		k.armed = false
		panic(errKilled)
	}
}

func (k *killingStore) Append(ctx context.Context, e state.JournalEntry, w ...state.Write) (int64, error) {
	if e.Step == "push/state" {
		k.kill("before")
	}
	seq, err := k.Store.Append(ctx, e, w...)
	if e.Step == "push/state" && err == nil {
		k.mu.Lock()
		k.adopted = true
		k.mu.Unlock()
	}
	return seq, err
}

func (k *killingStore) PutStack(ctx context.Context, s state.Stack) error {
	k.kill("write")
	return k.Store.PutStack(ctx, s)
}

func (k *killingStore) AppendEvent(ctx context.Context, e state.Event) (int64, error) {
	k.kill("write")
	return k.Store.AppendEvent(ctx, e)
}

func (k *killingStore) FinishOperation(ctx context.Context, id, status, reason string, at time.Time) error {
	k.kill("write")
	return k.Store.FinishOperation(ctx, id, status, reason, at)
}

// pushKilled pushes st to stack on an engine over store that is killed at k's point.
func pushKilled(t *testing.T, k *killingStore, stack string, st []byte) {
	t.Helper()
	e := tfEngineOn(t, k)
	k.armed = true
	defer func() {
		if r := recover(); r != errKilled {
			t.Fatalf("the push was not killed: %v", r)
		}
	}()
	_, err := e.PushState(context.Background(), stack, pushReq(st))
	t.Fatalf("the push was not killed: %v", err)
}

func tfEngineOn(t *testing.T, store state.Store) *engine.Engine {
	t.Helper()
	f := &tfFake{Fake: &providertest.Fake{}, counts: map[string]int{}}
	e, err := engine.New(engine.Options{Store: store, Providers: provider.NewRegistry(), Plugins: fakePlugins{f},
		LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

// resumed starts a new engine over store, resumes its operations and waits for operation id
// to end.
func resumed(t *testing.T, store state.Store, id string) (*engine.Engine, api.Operation) {
	t.Helper()
	e := tfEngineOn(t, store)
	if err := e.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op, err := e.Wait(ctx, id)
	if err != nil || op.Status == state.Running {
		t.Fatalf("operation %s after the resumption: %+v, %v", id, op, err)
	}
	return e, op
}

// TestPushKilled: a server killed in the middle of a push leaves either the stack as it was
// or the whole state adopted, never a mix; the operation it leaves running is finished when
// a server resumes it, and the stack takes deploys again.
func TestPushKilled(t *testing.T) {
	const lineage2 = "99999999-2222-4333-8444-555555555555"
	// The second state: b[1] is gone, a is bigger.
	second := strings.Replace(strings.Replace(pushResources, `,
                 {"index_key": 1, "schema_version": 0, "attributes": {"value": "b"}}`, "", 1), `"value": "a"}`, `"value": "a2"}`, 1)
	for _, tc := range []struct {
		at      string
		fresh   bool
		adopted bool
	}{
		{"before", false, false}, {"before", true, false}, {"after", false, true}, {"after", true, true},
	} {
		t.Run(fmt.Sprintf("%s/fresh=%v", tc.at, tc.fresh), func(t *testing.T) {
			h, _ := newTFHarness(t, nil, engine.Options{})
			ctx := context.Background()
			if !tc.fresh {
				if _, err := h.e.PushState(ctx, "s", pushReq(tfstateOf(lineage1, 3, pushResources))); err != nil {
					t.Fatal(err)
				}
			}
			k := &killingStore{Store: h.store, at: tc.at}
			pushKilled(t, k, "s", tfstateOf(lineage2, 9, second))
			ops, err := h.store.ListRunningOperations(ctx)
			if err != nil || len(ops) != 1 {
				t.Fatalf("running operations after the kill: %+v, %v; want the push", ops, err)
			}
			e, op := resumed(t, h.store, ops[0].ID)
			wantStatus := state.Succeeded
			if !tc.adopted {
				wantStatus = state.Failed
			}
			if op.Status != wantStatus {
				t.Errorf("resumed push: %s (%s), want %s", op.Status, op.StatusReason, wantStatus)
			}
			row, err := h.store.GetStack(ctx, "s")
			switch {
			case tc.fresh && !tc.adopted:
				if err == nil && row.Status != "DELETE_COMPLETE" {
					t.Errorf("a push killed before it adopted anything left stack s %s", row.Status)
				}
			case err != nil:
				t.Fatalf("stack s after the resumed push: %v", err)
			case row.Status != "IMPORT_COMPLETE":
				t.Errorf("stack status %s (%s), want IMPORT_COMPLETE", row.Status, row.StatusReason)
			}
			rows, _ := h.store.ListResources(ctx, "s")
			wantRows, wantLineage, minSerial := 3, lineage1, uint64(3)
			switch {
			case tc.adopted:
				wantRows, wantLineage, minSerial = 2, lineage2, 9
			case tc.fresh:
				wantRows = 0
			}
			if len(rows) != wantRows {
				t.Errorf("stack s holds %d rows, want %d", len(rows), wantRows)
			}
			if wantRows == 0 {
				if _, err := e.PushState(ctx, "s", pushReq(tfstateOf(lineage1, 3, pushResources))); err != nil {
					t.Fatalf("push after the failed one: %v", err)
				}
				return
			}
			if head := pulledHead(t, e, "s"); head.Lineage != wantLineage || head.Serial < minSerial {
				t.Errorf("pull: lineage %s serial %d, want %s and at least %d", head.Lineage, head.Serial, wantLineage, minSerial)
			}
			if tc.adopted {
				var seen bool
				evs, _ := e.Events(ctx, "s", 0, 0)
				for _, ev := range evs {
					seen = seen || (ev.LogicalID == "s" && ev.Status == "IMPORT_COMPLETE" && ev.Operation == op.ID)
				}
				if !seen {
					t.Errorf("no IMPORT_COMPLETE event of the push: %+v", evs)
				}
			}
			dep, err := e.Deploy(ctx, "s", api.DeployRequest{Files: map[string]string{"main.tf": pushConfig}})
			if err != nil {
				t.Fatalf("deploy after the resumed push: %v", err)
			}
			wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if got, err := e.Wait(wctx, dep.ID); err != nil || got.Status != state.Succeeded {
				t.Errorf("deploy after the resumed push: %+v, %v", got, err)
			}
		})
	}
}

// resourceIDs maps a stack's resources to their physical ids.
func resourceIDs(st api.Stack) map[string]string {
	out := map[string]string{}
	for _, r := range st.Resources {
		out[r.LogicalID] = r.PhysicalID
	}
	return out
}
