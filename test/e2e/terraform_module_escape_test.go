package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// gitPackage makes a git repository holding files, in one commit, and returns its directory.
func gitPackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg.git")
	writeTree(t, dir, files)
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		if r := execIn(dir, env, "git", args...); r.err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], r.err, r.all())
		}
	}
	return filepath.ToSlash(dir)
}

// TestTerraformModuleEscapeRefused: a downloaded module whose local call leaves its package
// ("../../../../secret" from .terraform/modules/m: the directory beside the configuration)
// is refused before anything is sent, with terraform init's error for it at the source's
// position. terraform init reports it only when the directory reached is missing (the
// "Missing" case, compared word for word); where it exists terraform reads it, but cairn
// would send it to the server, so cairn refuses that too (the "Exists" case: the user's
// secret/.aws/credentials must not travel).
func TestTerraformModuleEscapeRefused(t *testing.T) {
	t.Parallel()
	rc := providersRC(t, 6)
	repo := gitPackage(t, map[string]string{"main.tf": "module \"inner\" {\n  source = \"../../../../secret\"\n}\n"})
	want := `The given source directory for module.m.module.inner would be outside of its containing package "git::file://` + repo +
		`". Local source addresses starting with "../" must stay within the same package that the calling module belongs to.`
	for _, name := range []string{"Missing", "Exists"} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "cfg")
			writeConfig(t, dir, "module \"m\" {\n  source = \"git::file://"+repo+"\"\n}\noutput \"c\" {\n  value = file(\"../secret/.aws/credentials\")\n}\n")
			if name == "Exists" {
				writeTree(t, base, map[string]string{"secret/main.tf": "output \"x\" {\n  value = 1\n}\n", "secret/.aws/credentials": "AKIASECRET"})
			}
			c := newCairnCLI(t, rc, t.TempDir())
			for _, cmd := range []string{"init", "validate", "deploy"} {
				args := []string{cmd, "-f", dir}
				if cmd == "deploy" {
					args = append(args, "--stack", "esc")
				}
				r := c.try(args...)
				at := ".terraform/modules/m/main.tf:2:12: Local module path escapes module package: " + want
				if r.err == nil || !strings.Contains(r.all(), at) || strings.Contains(r.all(), "AKIASECRET") {
					t.Errorf("cairn %s = %v\n%s\nwant %q", cmd, r.err, r.all(), at)
				}
			}
			tfr := newTFCLI(t, rc, dir, t.TempDir()).try("init", "-backend=false")
			tfOut := strings.Join(strings.Fields(tfr.all()), " ")
			switch {
			case name == "Missing" && (tfr.err == nil || !strings.Contains(tfOut, "Error: Local module path escapes module package "+want)):
				t.Errorf("terraform init = %v\n%s\nwant %q", tfr.err, tfr.all(), want)
			case name == "Exists" && tfr.err != nil:
				t.Errorf("terraform init = %v\n%s\nwant it to read ../secret, as terraform does", tfr.err, tfr.all())
			}
		})
	}
}
