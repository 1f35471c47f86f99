package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/test/providerbin"
)

// TestTerraformProviderWorkDir: a configuration in ./infra applied by terraform -chdir=infra
// and by cairn deploy -f ./infra from the project directory leaves hashicorp/local's files in
// the same places: providers run in the configuration's directory, as terraform runs them in
// its working directory (issue 12 item 9).
func TestTerraformProviderWorkDir(t *testing.T) {
	t.Parallel()
	providerbin.Terraform(t)
	rc := providerbin.CLIConfig(t, providerbin.Mirror(t, providerbin.LocalRelease.Package(t)))
	const config = `resource "local_file" "module" {
  content  = "in path.module"
  filename = "${path.module}/module.txt"
}
resource "local_file" "plain" {
  content  = "relative"
  filename = "out/plain.txt"
}
`
	tfProject, cairnProject := t.TempDir(), t.TempDir()
	for _, p := range []string{tfProject, cairnProject} {
		writeConfig(t, filepath.Join(p, "infra"), config)
	}
	tf := newTFCLI(t, rc, tfProject, t.TempDir())
	tf.run("-chdir=infra", "init")
	tf.run("-chdir=infra", "apply", "-auto-approve")

	c := newCairnCLI(t, rc, t.TempDir())
	if r := execIn(cairnProject, c.env, c.bin, "deploy", "-f", "./infra", "--stack", "wd", "--dir", c.dir); r.err != nil {
		t.Fatalf("cairn deploy -f ./infra: %v\n%s", r.err, r.all())
	}
	for _, name := range []string{"infra/module.txt", "infra/out/plain.txt"} {
		want, err := os.ReadFile(filepath.Join(tfProject, name))
		if err != nil {
			t.Fatalf("terraform did not write %s: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join(cairnProject, name))
		if err != nil {
			t.Errorf("cairn did not write %s where terraform does: %v", name, err)
		} else if string(got) != string(want) {
			t.Errorf("%s = %q under cairn, %q under terraform", name, got, want)
		}
	}
	for _, stray := range []string{"module.txt", "out"} {
		if _, err := os.Stat(filepath.Join(cairnProject, stray)); err == nil {
			t.Errorf("cairn wrote %s in the CLI's directory, not the configuration's", stray)
		}
	}
}
