package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPulumiExportProviderState: `cairn state pull` writes providers as `pulumi stack export`
// (v3.260.0) does for a package whose declaration gives a downloadUrl and resources that ask
// for other URLs: the explicit provider keeps the declaration's URL under __internal; each
// URL has its own default provider, named with it, whose inputs are the stack's `config:`
// values, the version and the URL. Nothing is downloaded (the plugin is found locally).
func TestPulumiExportProviderState(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"Pulumi.yaml":      "name: urls\nruntime: yaml\n",
		"Pulumi.s.yaml":    "config:\n  config:name: from the stack\n",
		"sdks/config.yaml": "packageDeclarationVersion: 1\nname: config\nversion: 9.0.0\ndownloadUrl: https://downloads.example.test/config\n",
		"Main.yaml": `resources:
  explicit:
    type: pulumi:providers:config
    properties: {name: mine}
  viaDefault:
    type: config:Resource
    properties: {text: "${explicit.name}"}
  viaMirror:
    type: config:Resource
    properties: {text: mirrored}
    options: {pluginDownloadURL: "https://mirror.example.test/$${VERSION}"}
`,
	})
	c.run("deploy", "-f", dir, "--stack", "s")
	res := exportedResources(t, c, "s")
	urn := func(typ, name string) string { return "urn:pulumi:s::urls::" + typ + "::" + name }
	internal := func(url string) map[string]any { return map[string]any{"pluginDownloadURL": url} }
	check := func(u string, inputs, outputs map[string]any) {
		t.Helper()
		r, ok := res[u]
		if !ok {
			t.Fatalf("no %s in the export: %v", u, keys(res))
		}
		if d := cmp.Diff(inputs, r["inputs"]); d != "" {
			t.Errorf("%s inputs: -want +got\n%s", u, d)
		}
		if d := cmp.Diff(outputs, r["outputs"]); d != "" {
			t.Errorf("%s outputs: -want +got\n%s", u, d)
		}
	}
	check(urn("pulumi:providers:config", "explicit"),
		map[string]any{"__internal": internal("https://downloads.example.test/config"), "name": "mine", "version": "9.0.0"},
		map[string]any{"name": "mine", "version": "9.0.0"})
	declared := urn("pulumi:providers:config", "default_9_0_0_https_/downloads.example.test/config")
	check(declared,
		map[string]any{"__internal": internal("https://downloads.example.test/config"), "name": "from the stack", "version": "9.0.0"},
		map[string]any{"name": "from the stack", "version": "9.0.0"})
	mirror := urn("pulumi:providers:config", "default_9_0_0_https_/mirror.example.test/__VERSION_")
	check(mirror,
		map[string]any{"__internal": internal("https://mirror.example.test/${VERSION}"), "name": "from the stack", "version": "9.0.0"},
		map[string]any{"name": "from the stack", "version": "9.0.0"})
	for name, prov := range map[string]string{"viaDefault": declared, "viaMirror": mirror} {
		if p, _ := res[urn("config:index:Resource", name)]["provider"].(string); !strings.HasPrefix(p, prov+"::") {
			t.Errorf("%s's provider = %q, want %s::<id>", name, p, prov)
		}
	}
}

// TestPulumiExportInitErrorsAndPropertyDependencies: a create the provider reports failed
// (ErrorResourceInitFailed) is exported with the provider's reasons as initErrors, and every
// resource with the propertyDependencies pulumi writes (the same as `pulumi stack export`'s
// for this program, v3.260.0): per property set, the URNs of the resources its value uses.
func TestPulumiExportInitErrorsAndPropertyDependencies(t *testing.T) {
	t.Parallel()
	w := newPulumiThings(t)
	rest := thingYAML("c0", "value: zero") +
		"  c:\n    type: cairntest:index:Thing\n    properties: {value: \"x-${a.value}-${b.out}\", key: \"${v}\"}\n" +
		"    options: {version: 1.0.0, dependsOn: [\"${c0}\"]}\n" + thingYAML("b", `value: "${a.value}"`)
	vars := "variables:\n  v: ${c0.out}\n"
	write := func(a string) { w.write(thingYAML("a", a) + rest); w.appendProgram(vars) }
	write("value: one, failCreate: true")
	if r := w.try("deploy", "-f", w.prog, "--stack", "s"); r.err == nil {
		t.Fatalf("the failing create deployed:\n%s", r.all())
	}
	id := w.resources()["a"].PhysicalID
	urn := func(name string) string { return "urn:pulumi:s::things::cairntest:index:Thing::" + name }
	res := exportedResources(t, w.cairnCLI, "s")
	if d := cmp.Diff([]any{id + " did not become ready: failCreate is set"}, res[urn("a")]["initErrors"]); d != "" {
		t.Errorf("a's initErrors: -want +got\n%s", d)
	}

	write("value: one")
	w.run("deploy", "-f", w.prog, "--stack", "s")
	res = exportedResources(t, w.cairnCLI, "s")
	if _, ok := res[urn("a")]["initErrors"]; ok {
		t.Errorf("a still has initErrors after its update: %v", res[urn("a")])
	}
	want := map[string]any{
		"a":  map[string]any{"value": []any{}},
		"b":  map[string]any{"value": []any{urn("a")}},
		"c":  map[string]any{"value": []any{urn("a"), urn("b")}, "key": []any{urn("c0")}},
		"c0": map[string]any{"value": []any{}},
	}
	for name, w := range want {
		if d := cmp.Diff(w, res[urn(name)]["propertyDependencies"]); d != "" {
			t.Errorf("%s's propertyDependencies: -want +got\n%s", name, d)
		}
	}
}

// appendProgram adds top-level sections to the program write made.
func (w *pulumiThings) appendProgram(text string) {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.prog, "Pulumi.yaml"))
	if err != nil {
		w.t.Fatal(err)
	}
	writeFiles(w.t, w.prog, map[string]string{"Pulumi.yaml": string(b) + text})
}

func keys(m map[string]map[string]any) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return fmt.Sprint(out)
}
