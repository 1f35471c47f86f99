package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/api"
	"github.com/cairn-dev/cairn/test/providerbin"
)

// These tests run Pulumi YAML programs through the cairn CLI on cairntest
// (test/pulumiproviders/cairntest.go), cairn's own test provider built with the Pulumi Go
// SDK. Each expected sequence of provider calls is the one the real `pulumi up` (v3.260.0)
// makes on the same program and plugin, recorded with the plugin's call log.

// pulumiThings is a cairn CLI finding cairntest in --plugin-dir, with the plugin's objects
// and call log in things.
type pulumiThings struct {
	*cairnCLI
	prog, things, plugins string
}

func newPulumiThings(t *testing.T) *pulumiThings {
	t.Helper()
	plugins := providerbin.PulumiPlugins(t)
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	w := &pulumiThings{cairnCLI: c, prog: t.TempDir(), things: t.TempDir(), plugins: plugins}
	c.env = append(c.env, "PULUMI_HOME="+t.TempDir(), "CAIRN_PLUGIN_DIR="+plugins, "CAIRNTEST_DIR="+w.things)
	return w
}

// write makes resources (YAML, indented by four) the project's program.
func (w *pulumiThings) write(resources string) {
	w.t.Helper()
	prog := "name: things\nruntime: yaml\nresources:\n" + resources
	if err := os.WriteFile(filepath.Join(w.prog, "Pulumi.yaml"), []byte(prog), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// calls returns the calls of the last run on the plugin's log, and empties the log. A deploy
// validates the program first (Configure, Check of every resource) and then runs; the run's
// calls are those after the last Configure.
func (w *pulumiThings) calls() []string {
	w.t.Helper()
	path := filepath.Join(w.things, "calls.log")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	_ = os.Remove(path)
	lines := strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
	last := -1
	for i, l := range lines {
		if l == "Configure" {
			last = i
		}
	}
	return slices.DeleteFunc(lines[last+1:], func(l string) bool { return l == "Handshake" })
}

func (w *pulumiThings) resources() map[string]api.Resource {
	w.t.Helper()
	m := map[string]api.Resource{}
	for _, r := range w.describe("s").Resources {
		m[r.LogicalID] = r
	}
	return m
}

func thingYAML(name, props string) string {
	return "  " + name + ":\n    type: cairntest:index:Thing\n    properties: {" + props + "}\n    options: {version: 1.0.0}\n"
}

// A create that made its object and then failed (ErrorResourceInitFailed) keeps the object
// with its id and the provider's reason; the next deploy updates it, as Pulumi does with a
// resource that has init errors, instead of creating another one.
func TestPulumiPartialCreateIsUpdatedNext(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(thingYAML("a", "value: one, failCreate: true") + thingYAML("b", `value: "${a.out}"`))
	r := w.try("deploy", "-f", w.prog, "--stack", "s")
	if r.err == nil || !strings.Contains(r.all(), "did not become ready: failCreate is set") {
		t.Fatalf("deploy of a failing create: %v\n%s", r.err, r.all())
	}
	a := w.resources()["a"]
	if a.Status != "CREATE_FAILED" || !strings.HasPrefix(a.PhysicalID, "a-") || !strings.Contains(a.StatusReason, a.PhysicalID+" did not become ready") {
		t.Fatalf("a after its partial create = %+v", a)
	}
	if _, ok := w.resources()["b"]; ok {
		t.Errorf("b was created after a failed")
	}
	if got, want := w.calls(), []string{"Check a", "Create a", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the first deploy = %v, want %v", got, want)
	}

	w.write(thingYAML("a", "value: one") + thingYAML("b", `value: "${a.out}"`))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	// pulumi up: Check a (with its old inputs), Diff a, Update a, Check b, Create b (then Cancel as it closes).
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Update a", "Check b", "Create b", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the second deploy = %v, want %v", got, want)
	}
	res := w.resources()
	if res["a"].PhysicalID != a.PhysicalID || res["a"].Status != "UPDATE_COMPLETE" {
		t.Errorf("a after the second deploy = %+v, want %s updated", res["a"], a.PhysicalID)
	}
	if v := attrs(t, w.describe("s"), "b")["value"]; v != "out-one" {
		t.Errorf("b.value = %#v", v)
	}
	things, _ := os.ReadDir(filepath.Join(w.things, "things"))
	if len(things) != 2 {
		t.Errorf("objects = %v, want a and b only", things)
	}
}

// Refresh drops a resource whose object was deleted behind cairn's back (Read answers an
// empty id), and the next deploy creates it again.
func TestPulumiRefreshOfADeletedResource(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(thingYAML("a", "value: one") + thingYAML("b", `value: "${a.out}"`))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	before := w.resources()
	if err := os.Remove(filepath.Join(w.things, "things", before["a"].PhysicalID+".json")); err != nil {
		t.Fatal(err)
	}
	w.calls()
	out := w.run("refresh", "-f", w.prog, "--stack", "s")
	if !strings.Contains(out, "a has been deleted") {
		t.Errorf("refresh does not say a is gone:\n%s", out)
	}
	after := w.resources()
	if _, ok := after["a"]; ok {
		t.Errorf("a is still in the stack after refresh: %+v", after["a"])
	}
	if after["b"].PhysicalID != before["b"].PhysicalID {
		t.Errorf("b after refresh = %+v", after["b"])
	}
	w.calls()
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check a", "Create a", "Check(olds) b", "Diff b", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the deploy after refresh = %v, want %v", got, want)
	}
	if a := w.resources()["a"]; a.PhysicalID == "" || a.PhysicalID == before["a"].PhysicalID {
		t.Errorf("a after the deploy = %+v, want a new object", a)
	}
}

// A replacement is create-first unless the provider's Diff asks for deleteBeforeReplace; the
// resource option wins over the provider in both directions. The calls are those of `pulumi
// up` on the same program (the dependent's Diff before the delete is the cascade's question).
func TestPulumiProviderDeleteBeforeReplace(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	deps := thingYAML("s", `value: "${a.out}"`)
	w.write(thingYAML("a", "value: one, key: k1") + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	w.calls()

	w.write(thingYAML("a", "value: one, key: k2, deleteBeforeReplace: true") + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Check a", "Diff s", "Delete a", "Create a", "Check(olds) s", "Diff s", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("delete-before-replace calls = %v, want %v", got, want)
	}

	w.write(thingYAML("a", "value: one, key: k3") + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Check a", "Create a", "Check(olds) s", "Diff s", "Delete a", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("create-before-delete calls = %v, want %v", got, want)
	}

	// The option overrides the provider: create first although the provider asks otherwise.
	w.write("  a:\n    type: cairntest:index:Thing\n    properties: {value: one, key: k4, deleteBeforeReplace: true}\n" +
		"    options: {version: 1.0.0, deleteBeforeReplace: false}\n" + deps)
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Check a", "Create a", "Check(olds) s", "Diff s", "Delete a", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls with deleteBeforeReplace: false = %v, want %v", got, want)
	}
}

// Ctrl-C during a slow create: cairn sends the plugin Cancel (as `pulumi up` does on the first
// ^C), the create returns at once with the object it made, cairn exits failed with no plugin
// left, the object is kept with its id, and the next deploy updates it and goes on.
func TestPulumiCtrlC(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(thingYAML("a", "value: one") + thingYAML("s", `value: "${a.out}", sleep: 3600`) + thingYAML("b", `value: "${s.out}"`))
	cmd := exec.Command(w.bin, "deploy", "-f", w.prog, "--stack", "s", "--dir", w.dir)
	cmd.Env = append(os.Environ(), w.env...)
	run := startLive(t, cmd, func(line string) bool {
		f := strings.Fields(line)
		return len(f) > 3 && f[1] == "s" && f[3] == "CREATE_IN_PROGRESS"
	})
	// The event comes just before the call: wait until the plugin has it.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(w.things, "calls.log")); strings.Contains(string(b), "Create s\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin never got the create of s:\n%s", run.seen.String())
		}
	}
	run.interrupt(t)
	gone(t, w.plugins, 30*time.Second)
	if got, want := w.calls(), []string{"Check a", "Create a", "Check s", "Create s", "Cancel", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v (Cancel on ^C, again as the plugin is closed)", got, want)
	}
	before := w.resources()
	if s := before["s"]; s.Status != "CREATE_FAILED" || !strings.HasPrefix(s.PhysicalID, "s-") {
		t.Fatalf("s after Ctrl-C = %+v, want its object kept", s)
	}
	if _, ok := before["b"]; ok {
		t.Errorf("b was created after the cancel: %+v", before["b"])
	}

	w.write(thingYAML("a", "value: one") + thingYAML("s", `value: "${a.out}", sleep: 0`) + thingYAML("b", `value: "${s.out}"`))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	if got, want := w.calls(), []string{"Check(olds) a", "Diff a", "Check(olds) s", "Diff s", "Update s", "Check b", "Create b", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the deploy after the cancel = %v, want %v", got, want)
	}
	after := w.resources()
	for _, name := range []string{"a", "s"} {
		if after[name].PhysicalID != before[name].PhysicalID {
			t.Errorf("%s was replaced: %s -> %s", name, before[name].PhysicalID, after[name].PhysicalID)
		}
	}
	if b := after["b"]; b.Status != "CREATE_COMPLETE" {
		t.Errorf("b after the second deploy = %+v", b)
	}
}

// A preview of new resources asks the plugin what each create would produce (Create with
// preview=true), so values the plugin can tell are known downstream and in the outputs, and
// the others are "(known after apply)": what `pulumi preview` shows for the same program.
func TestPulumiPreviewOfCreates(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	w.write(thingYAML("a", "value: one") + thingYAML("b", `value: "${a.out}"`) +
		"outputs:\n  bout: ${b.out}\n  auid: ${a.uid}\n")
	out := w.run("preview", "-f", w.prog, "--stack", "s")
	for _, want := range []string{`bout = "out-out-one"`, "auid = (known after apply)"} {
		if !strings.Contains(out, want) {
			t.Errorf("preview does not show %s:\n%s", want, out)
		}
	}
	if got, want := w.calls(), []string{"Create a preview", "Create b preview", "Cancel"}; !slices.Equal(got, want) {
		t.Errorf("calls of the preview = %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(w.things, "things")); !os.IsNotExist(err) {
		t.Errorf("the preview made objects: %v", err)
	}
}
