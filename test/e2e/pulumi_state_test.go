package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// pulumiStateProgram has a resource that depends on another and a secret output.
const pulumiStateProgram = `name: statey
runtime: yaml
resources:
  first:
    type: simple:index:Resource
    properties:
      value: true
    options:
      version: 2.0.0
  second:
    type: simple:index:Resource
    properties:
      value: ${first.value}
    options:
      version: 2.0.0
      protect: true
outputs:
  plain: ${second.value}
  hidden:
    fn::secret: ${first.value}
`

// deploymentResource is the part of a Pulumi deployment's resource the tests look at.
type deploymentResource struct {
	URN, Type, ID, Parent, Provider string
	Custom, Protect                 bool
	Dependencies                    []string
	Inputs, Outputs                 map[string]any
}

func readDeployment(t *testing.T, b []byte) []deploymentResource {
	t.Helper()
	var d struct {
		Version    int
		Deployment struct{ Resources []deploymentResource }
	}
	if err := json.Unmarshal(b, &d); err != nil || d.Version != 3 {
		t.Fatalf("not a version 3 deployment (%v):\n%s", err, b)
	}
	return d.Deployment.Resources
}

// TestPulumiStatePullPush pulls a Pulumi YAML stack as a Pulumi deployment (URNs, default
// provider, dependencies, protect, a sealed secret), pushes it into another stack, and finds
// nothing to change there.
func TestPulumiStatePullPush(t *testing.T) {
	t.Parallel()
	plugins := providerbin.PulumiPlugins(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiStateProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "CAIRN_PLUGIN_DIR="+plugins, "PULUMI_HOME="+t.TempDir())
	c.run("deploy", "-f", dir, "--stack", "dev")

	if r := c.try("state", "pull", "--stack", "dev"); r.err == nil || !strings.Contains(r.all(), "PULUMI_CONFIG_PASSPHRASE") {
		t.Fatalf("a pull of secrets without a passphrase: %v\n%s", r.err, r.all())
	}
	c.env = append(c.env, "PULUMI_CONFIG_PASSPHRASE=s3cret")
	out := c.run("state", "pull", "--stack", "dev")
	res := readDeployment(t, []byte(out))
	want := []string{
		"urn:pulumi:dev::statey::pulumi:pulumi:Stack::statey-dev",
		"urn:pulumi:dev::statey::pulumi:providers:simple::default_2_0_0",
		"urn:pulumi:dev::statey::simple:index:Resource::first",
		"urn:pulumi:dev::statey::simple:index:Resource::second",
	}
	if len(res) != len(want) {
		t.Fatalf("resources:\n%s", out)
	}
	for i, r := range res {
		if r.URN != want[i] {
			t.Errorf("resource %d is %s, want %s", i, r.URN, want[i])
		}
	}
	second := res[3]
	if !second.Protect || second.Parent != want[0] || second.Provider != want[1]+"::"+res[1].ID ||
		len(second.Dependencies) != 1 || second.Dependencies[0] != want[2] || second.Inputs["value"] != true {
		t.Errorf("second: %+v", second)
	}
	if strings.Contains(out, `"hidden": true`) || !strings.Contains(out, "ciphertext") {
		t.Errorf("the secret output is not sealed:\n%s", out)
	}

	file := filepath.Join(t.TempDir(), "dev.json")
	if err := os.WriteFile(file, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	c.run("state", "push", file, "--stack", "copy", "-f", dir)
	if got := c.run("preview", "-f", dir, "--stack", "copy"); !strings.Contains(got, "No changes") {
		t.Errorf("preview after the push:\n%s", got)
	}
	if again := c.run("state", "pull", "--stack", "copy", "--show-secrets"); !strings.Contains(again, `"plaintext": "true"`) {
		t.Errorf("--show-secrets:\n%s", again)
	}
	if r := c.try("state", "push", file, "--stack", "other", "-f", dir); r.err != nil {
		t.Errorf("push with the passphrase: %v", r.err)
	}
	c.env = append(c.env, "PULUMI_CONFIG_PASSPHRASE=wrong")
	if r := c.try("state", "push", file, "--stack", "third", "-f", dir); r.err == nil || strings.Contains(r.all(), "true\"") {
		t.Errorf("push with a wrong passphrase: %v\n%s", r.err, r.all())
	}
}

// TestPulumiStateWithPulumiCLI moves a stack from cairn to the real pulumi CLI and back:
// pulumi stack import takes cairn's pull (its own code opens the sealed secret) and pulumi
// preview finds nothing to change; cairn takes pulumi stack export the same way. Needs the
// peer (CAIRN_PULUMI_PEER: the directory of pulumi and pulumi-language-yaml).
func TestPulumiStateWithPulumiCLI(t *testing.T) {
	peer := os.Getenv("CAIRN_PULUMI_PEER")
	if peer == "" {
		t.Skip("CAIRN_PULUMI_PEER is not set: no pulumi CLI to compare with (../shared/peers/pulumi/build-peer.sh builds one)")
	}
	plugins := providerbin.PulumiPlugins(t)
	home := t.TempDir()
	if err := os.Symlink(plugins, filepath.Join(home, "plugins")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(pulumiStateProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	backend := t.TempDir()
	penv := append(os.Environ(), "PATH="+peer+":"+os.Getenv("PATH"), "PULUMI_HOME="+home, "PULUMI_BACKEND_URL=file://"+backend,
		"PULUMI_CONFIG_PASSPHRASE=s3cret", "PULUMI_SKIP_UPDATE_CHECK=true", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
		"PULUMI_IGNORE_AMBIENT_PLUGINS=true", "PULUMI_SKIP_CONFIRMATIONS=true")
	pulumi := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(peer, "pulumi"), append(args, "--non-interactive")...)
		cmd.Dir, cmd.Env = dir, penv
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pulumi %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	c := newCairnCLI(t, "/dev/null", t.TempDir())
	c.env = append(c.env, "PULUMI_HOME="+home, "PULUMI_CONFIG_PASSPHRASE=s3cret")
	c.run("deploy", "-f", dir, "--stack", "dev")
	file := filepath.Join(t.TempDir(), "cairn.json")
	c.run("state", "pull", "--stack", "dev", "--out", file)

	pulumi("stack", "init", "dev")
	pulumi("stack", "import", "--file", file)
	if out := pulumi("stack", "output", "--json", "--show-secrets"); !strings.Contains(out, `"hidden": true`) {
		t.Errorf("pulumi does not open cairn's secret:\n%s", out)
	}
	if out := pulumi("preview", "--expect-no-changes"); !strings.Contains(out, "3 unchanged") {
		t.Errorf("pulumi preview on cairn's state:\n%s", out)
	}

	exported := filepath.Join(t.TempDir(), "pulumi.json")
	pulumi("stack", "export", "--file", exported)
	c.run("state", "push", exported, "--stack", "back", "-f", dir)
	if out := c.run("preview", "-f", dir, "--stack", "back"); !strings.Contains(out, "No changes") {
		t.Errorf("cairn preview on pulumi's export:\n%s", out)
	}
}
