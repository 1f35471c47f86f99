package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// replaceWithProgram: target is replaced when its value changes (replaceOnChanges), inPlace
// is updated in place; withTarget and withInPlace name them in replaceWith, plain names none.
func replaceWithProgram(value string) string {
	res := func(name, value, opts string) string {
		return "  " + name + ":\n    type: simple:index:Resource\n    properties: {value: " + value + "}\n    options: {version: 2.0.0" + opts + "}\n"
	}
	return "name: replace-with\nruntime: yaml\nresources:\n" +
		res("target", value, ", replaceOnChanges: [value]") +
		res("inPlace", value, "") +
		res("withTarget", "true", ", replaceWith: ['${target}']") +
		res("withInPlace", "true", ", replaceWith: ['${inPlace}']") +
		res("plain", "true", "")
}

// TestPulumiReplaceWith: a resource whose replaceWith target is replaced is replaced in the
// same deploy, as pulumi v3.260.0 does; one whose target is only updated, or that names none,
// is left alone. The exported state keeps replaceWith as URNs, not as dependencies.
func TestPulumiReplaceWith(t *testing.T) {
	t.Parallel()
	c := pulumiCLI(t)
	dir := t.TempDir()
	write := func(value string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(replaceWithProgram(value)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("true")
	c.run("deploy", "-f", dir, "--stack", "s")
	out := c.run("deploy", "-f", dir, "--stack", "s") // nothing changed: nothing replaced
	if strings.Contains(out, "create a new physical resource") {
		t.Errorf("a deploy with no change replaced something:\n%s", out)
	}

	write("false")
	c.run("deploy", "-f", dir, "--stack", "s")
	var evs []struct{ Operation, LogicalID, Status, Reason string }
	if err := json.Unmarshal([]byte(c.run("events", "--stack", "s", "-o", "json")), &evs); err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Operation
	replaced, touched := map[string]bool{}, map[string]bool{}
	for _, e := range evs {
		if e.Operation != last {
			continue
		}
		touched[e.LogicalID] = true
		replaced[e.LogicalID] = replaced[e.LogicalID] || strings.Contains(e.Reason, "create a new physical resource")
	}
	for name, want := range map[string]bool{"target": true, "withTarget": true, "inPlace": false, "withInPlace": false} {
		if replaced[name] != want {
			t.Errorf("%s replaced = %v, want %v", name, replaced[name], want)
		}
	}
	if touched["withInPlace"] || touched["plain"] {
		t.Errorf("withInPlace or plain was touched though its target was only updated, or it names none: %v", touched)
	}

	var st struct {
		Deployment struct {
			Resources []struct {
				URN          string   `json:"urn"`
				Dependencies []string `json:"dependencies"`
				ReplaceWith  []string `json:"replaceWith"`
			} `json:"resources"`
		} `json:"deployment"`
	}
	if err := json.Unmarshal([]byte(c.run("state", "pull", "--stack", "s")), &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Deployment.Resources {
		switch {
		case strings.HasSuffix(r.URN, "::withTarget"):
			if len(r.ReplaceWith) != 1 || !strings.HasSuffix(r.ReplaceWith[0], "simple:index:Resource::target") || len(r.Dependencies) != 0 {
				t.Errorf("withTarget in the export: replaceWith %v, dependencies %v; want target's URN, none", r.ReplaceWith, r.Dependencies)
			}
		case strings.HasSuffix(r.URN, "::plain"):
			if len(r.ReplaceWith) != 0 {
				t.Errorf("plain in the export: replaceWith %v", r.ReplaceWith)
			}
		}
	}
}

// TestPulumiEnvVarMappings: an explicit provider's envVarMappings give its plugin process a
// variable of cairn's environment under another name, as pulumi v3.260.0 does. cairntest
// keeps its call log in $CAIRNTEST_DIR: cairn has only THINGS_HERE, mapped to it.
func TestPulumiEnvVarMappings(t *testing.T) {
	t.Parallel()
	plugins := providerbin.PulumiPlugins(t)
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	things, prog := t.TempDir(), t.TempDir()
	c.env = append(c.env, "PULUMI_HOME="+t.TempDir(), "CAIRN_PLUGIN_DIR="+plugins, "THINGS_HERE="+things)
	program := `name: env-mappings
runtime: yaml
resources:
  prov:
    type: pulumi:providers:cairntest
    options:
      version: 1.0.0
      envVarMappings: {THINGS_HERE: CAIRNTEST_DIR, NOT_SET_ANYWHERE: OTHER}
  a:
    type: cairntest:index:Thing
    properties: {value: one}
    options: {provider: '${prov}'}
`
	if err := os.WriteFile(filepath.Join(prog, "Pulumi.yaml"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run("deploy", "-f", prog, "--stack", "s")
	log, err := os.ReadFile(filepath.Join(things, "calls.log"))
	if err != nil || !strings.Contains(string(log), "Create a") {
		t.Fatalf("the plugin did not see THINGS_HERE as CAIRNTEST_DIR: %v\n%s", err, log)
	}
	pulled := c.run("state", "pull", "--stack", "s")
	if !strings.Contains(pulled, `"envVarMappings":{"NOT_SET_ANYWHERE":"OTHER","THINGS_HERE":"CAIRNTEST_DIR"}`) &&
		!strings.Contains(strings.Join(strings.Fields(pulled), ""), `"envVarMappings":{"NOT_SET_ANYWHERE":"OTHER","THINGS_HERE":"CAIRNTEST_DIR"}`) {
		t.Errorf("the provider's __internal has no envVarMappings:\n%s", pulled)
	}
}
