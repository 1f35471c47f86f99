package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A provider resource whose DiffConfig answers replace (cairntest's region) replaces every
// resource it serves; the old objects are deleted through a provider configured with the old
// region, as `pulumi up` (v3.260.0) deletes them through the old provider: it launches a second
// plugin, configures it with the old inputs and sends the Deletes there.
func TestPulumiProviderReplacementDeletesThroughOldProvider(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	program := func(region string) string {
		return "  prov:\n    type: pulumi:providers:cairntest\n    properties: {region: " + region + "}\n    options: {version: 1.0.0}\n" +
			"  a:\n    type: cairntest:index:Thing\n    properties: {value: one}\n    options: {provider: \"${prov}\", version: 1.0.0}\n" +
			"  b:\n    type: cairntest:index:Thing\n    properties: {value: two}\n" +
			"    options: {provider: \"${prov}\", version: 1.0.0, deleteBeforeReplace: true}\n"
	}
	w.write(program("east"))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	w.rawCalls()

	w.write(program("west"))
	w.run("deploy", "-f", w.prog, "--stack", "s")
	calls := w.rawCalls()
	for _, want := range []string{"Create a region=west", "Create b region=west", "Delete a region=east", "Delete b region=east"} {
		if !slices.Contains(calls, want) {
			t.Errorf("calls of the replacement lack %q: %v", want, calls)
		}
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "Delete ") && !strings.HasSuffix(c, "region=east") {
			t.Errorf("%q: an old object was deleted through the new provider configuration (calls %v)", c, calls)
		}
	}
	things, _ := os.ReadDir(filepath.Join(w.things, "things"))
	if len(things) != 2 {
		t.Errorf("objects after the replacement = %v, want the two new ones", things)
	}

	// Deleting the stack afterwards goes through the provider as it now is (west).
	w.run("delete", "--stack", "s", "--yes")
	for _, c := range w.rawCalls() {
		if strings.HasPrefix(c, "Delete ") && !strings.HasSuffix(c, "region=west") {
			t.Errorf("%q: the stack's deletion did not use the current configuration", c)
		}
	}
}

// rawCalls returns every line of the plugin's call log (all the instances of the last run)
// and empties it.
func (w *pulumiThings) rawCalls() []string {
	w.t.Helper()
	path := filepath.Join(w.things, "calls.log")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	_ = os.Remove(path)
	return strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' })
}
