package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// crashProgram: s is slow and sits between a and c; b and d are a chain of their own, so
// they are done by the time s's create is in flight and the kill lands on s alone.
const crashProgram = "name: things\nruntime: yaml\nresources:\n" +
	"  a:\n    type: cairntest:index:Thing\n    properties: {value: one}\n    options: {version: 1.0.0}\n" +
	"  s:\n    type: cairntest:index:Thing\n    properties: {value: \"${a.out}\", sleep: 8}\n    options: {version: 1.0.0}\n" +
	"  c:\n    type: cairntest:index:Thing\n    properties: {value: \"${s.out}\"}\n    options: {version: 1.0.0}\n" +
	"  b:\n    type: cairntest:index:Thing\n    properties: {value: two}\n    options: {version: 1.0.0}\n" +
	"  d:\n    type: cairntest:index:Thing\n    properties: {value: \"${b.out}\"}\n    options: {version: 1.0.0}\n"

// TestPulumiKillDashNine: the server is SIGKILLed while cairntest is in the middle of s's
// create (its object already made, its id not yet answered). The kernel kills the plugin with
// it; the restarted server resumes the operation from the journal, sends every other create
// exactly once, makes s's create again and says so (a Pulumi plugin cannot recognise a
// repeated create, as a Terraform one cannot): the first object of s is the one thing cairn
// cannot know, and it is left beside the state, as the event says.
func TestPulumiKillDashNine(t *testing.T) {
	bin, err := buildCairn()
	if err != nil {
		t.Fatal(err)
	}
	plugins, things := providerbin.PulumiPlugins(t), t.TempDir()
	// The server process inherits these; the plugins it launches inherit them from it.
	t.Setenv("PULUMI_HOME", t.TempDir())
	t.Setenv("CAIRN_PLUGIN_DIR", plugins)
	t.Setenv("CAIRNTEST_DIR", things)
	port, dir := freePort(t), t.TempDir()
	srv := server(t, bin, port, dir)
	c := newClient("http://127.0.0.1:" + port)
	req := api.DeployRequest{Files: map[string]string{"Pulumi.yaml": crashProgram}}
	op, err := c.Deploy(bg, "k9", req)
	if err != nil {
		t.Fatal(err)
	}

	// Kill once the plugin has s's create and the other chain is recorded complete.
	deadline := time.Now().Add(time.Minute)
	for !(slices.Contains(callLog(t, things), "Create s") && completed(c, "k9", "a", "b", "d")) {
		if time.Now().After(deadline) {
			t.Fatalf("s's create never started beside a, b and d complete: calls %v", callLog(t, things))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if completed(c, "k9", "s") {
		t.Fatal("s's create ended before the kill: the machine is too slow for its sleep")
	}
	if len(pluginsUnder(plugins)) == 0 {
		t.Fatal("no plugin process is running during the create")
	}
	if err := srv.Process.Kill(); err != nil { // SIGKILL: no shutdown, no Cancel to the plugin
		t.Fatal(err)
	}
	srv.Wait()
	gone(t, plugins, 5*time.Second)
	inFlight := objects(t, things)
	if got := prefixed(inFlight, "s-"); len(got) != 1 {
		t.Fatalf("objects of s when killed = %v, want the one its create made before it was killed", got)
	}

	server(t, bin, port, dir)
	done := c.wait(t, op.ID)
	if done.Status != "succeeded" || done.StackStatus != "CREATE_COMPLETE" {
		t.Fatalf("after the restart: %+v", done)
	}

	creates := createsPerName(callLog(t, things))
	want := map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "s": 2}
	for name, n := range want {
		if creates[name] != n {
			t.Errorf("Create %s sent %d times, want %d (calls %v)", name, creates[name], n, callLog(t, things))
		}
	}
	evs, err := c.Events(bg, "k9", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resumed []string
	for _, ev := range evs {
		if strings.Contains(ev.Reason, "Resuming after a restart") {
			resumed = append(resumed, ev.LogicalID+" "+ev.Status)
		}
	}
	if !slices.Equal(resumed, []string{"s CREATE_IN_PROGRESS"}) {
		t.Errorf("events saying a create is made again after the restart = %v, want s's alone: %+v", resumed, evs)
	}

	// Every resource has one object; the only object beside the state is s's first one, the
	// create in flight that the event reports.
	st := c.stack(t, "k9")
	var ids []string
	for _, r := range st.Resources {
		if r.Status != "CREATE_COMPLETE" || r.PhysicalID == "" {
			t.Errorf("%s = %+v", r.LogicalID, r)
		}
		ids = append(ids, r.PhysicalID)
	}
	slices.Sort(ids)
	orphan := prefixed(inFlight, "s-")[0]
	if got, wantObjs := objects(t, things), sorted(append(slices.Clone(ids), orphan)); !slices.Equal(got, wantObjs) {
		t.Errorf("objects = %v, want the stack's %v and s's first %s", got, ids, orphan)
	}
	if slices.Contains(ids, orphan) {
		t.Errorf("the stack holds s's first object %s: it was never answered", orphan)
	}

	// A redeploy converges: nothing is created, nothing changes.
	os.Remove(filepath.Join(things, "calls.log"))
	op, err = c.Deploy(bg, "k9", req)
	if err != nil {
		t.Fatal(err)
	}
	if done := c.wait(t, op.ID); done.Status != "succeeded" {
		t.Fatalf("redeploy: %+v", done)
	}
	if n := createsPerName(callLog(t, things)); len(n) != 0 {
		t.Errorf("the redeploy created %v (calls %v)", n, callLog(t, things))
	}
	var again []string
	for _, r := range c.stack(t, "k9").Resources {
		again = append(again, r.PhysicalID)
	}
	if slices.Sort(again); !slices.Equal(again, ids) {
		t.Errorf("ids after the redeploy = %v, want %v", again, ids)
	}

	// Delete removes every object cairn knows; what is left is the reported orphan.
	op, err = c.Delete(bg, "k9", api.DeleteRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if done := c.wait(t, op.ID); done.Status != "succeeded" {
		t.Fatalf("delete: %+v", done)
	}
	if got := objects(t, things); !slices.Equal(got, []string{orphan}) {
		t.Errorf("objects after delete = %v, want only the reported %s", got, orphan)
	}
	gone(t, plugins, 30*time.Second)
}

// callLog is cairntest's call log so far.
func callLog(t *testing.T, things string) []string {
	b, err := os.ReadFile(filepath.Join(things, "calls.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}

// createsPerName counts the real (not preview) creates in calls.
func createsPerName(calls []string) map[string]int {
	n := map[string]int{}
	for _, l := range calls {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "Create" {
			n[f[1]]++
		}
	}
	return n
}

// objects are the ids of cairntest's objects, sorted.
func objects(t *testing.T, things string) []string {
	ents, err := os.ReadDir(filepath.Join(things, "things"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range ents {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
	}
	return sorted(ids)
}

func prefixed(ids []string, prefix string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !strings.HasPrefix(id, prefix) })
}

func sorted(s []string) []string { slices.Sort(s); return s }

// completed reports whether each of names has a CREATE_COMPLETE event on stack.
func completed(c apiClient, stack string, names ...string) bool {
	evs, err := c.Events(bg, stack, 0, 0)
	if err != nil {
		return false
	}
	for _, name := range names {
		if !slices.ContainsFunc(evs, func(ev api.Event) bool { return ev.LogicalID == name && ev.Status == "CREATE_COMPLETE" }) {
			return false
		}
	}
	return true
}
