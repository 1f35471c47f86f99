package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithin(t *testing.T) {
	cases := []struct {
		rel  string
		dirs []string
		want bool
	}{
		{"../shared", []string{".."}, true},
		{"../..", []string{".."}, false},
		{"../../modules/x", []string{"../.."}, true},
		{".terraform/modules/a/modules/b", []string{".terraform/modules/a"}, true},
		{".terraform/modules/ab", []string{".terraform/modules/a"}, false},
	}
	for _, tc := range cases {
		if got := within(tc.rel, tc.dirs); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.rel, tc.dirs, got, tc.want)
		}
	}
}

// A module directory above the configuration is sent once, without the configuration
// directory itself (sent under its own names) and without .git or .terraform.
func TestCollectModulesParent(t *testing.T) {
	repo := t.TempDir()
	for _, name := range []string{"main.tf", "modules/sub/main.tf", "examples/complete/main.tf", "examples/other/main.tf", ".git/config",
		"examples/complete/.terraform/modules/modules.json"} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(repo, "examples", "complete")
	out := &outgoing{files: map[string]string{}}
	if err := collectFiles(out, dir, ".", ""); err != nil {
		t.Fatal(err)
	}
	files := out.files
	if err := collectModules(out, dir, []string{"../..", "../../modules/sub"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for name := range files {
		got = append(got, name)
	}
	sort.Strings(got)
	want := []string{"../../examples/other/main.tf", "../../main.tf", "../../modules/sub/main.tf", "main.tf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files: -want +got:\n%s", diff)
	}
}

// TestCollectFilesHidden: a configuration's hidden files and directories are sent, as
// terraform's fileset sees them, except version control, terraform's working directory and
// state, a cairn server's directory and keys, and environment files (.env*). Compared with terraform console's
// fileset(".", "**") on the same directory, less those.
func TestCollectFilesHidden(t *testing.T) {
	dir := t.TempDir()
	names := []string{"main.tf", ".dot", ".hid/x", ".hid/deep/.y", ".terraform.lock.hcl", "sub/.keep",
		".git/config", ".terraform/providers/p", ".terraform/modules/modules.json", "terraform.tfstate",
		"terraform.tfstate.backup", "terraform.tfstate.d/ws/terraform.tfstate", ".cairn/cairn.db",
		".cairn.secrets.key", "x.secrets.key", "node_modules/a/index.js", "sub/.terraform/x",
		".env", ".env.local", "sub/.envrc", ".environment"}
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text := "x"
		switch {
		case strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".hcl") || strings.Contains(name, "tfstate"):
			text = "" // what terraform console reads
		case strings.HasSuffix(name, ".json"):
			text = `{"Modules":[]}`
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sent := &outgoing{files: map[string]string{}}
	if err := collectFiles(sent, dir, ".", ""); err != nil {
		t.Fatal(err)
	}
	files := sent.files
	var got []string
	for name := range files {
		got = append(got, name)
	}
	sort.Strings(got)
	want := []string{".dot", ".environment", ".hid/deep/.y", ".hid/x", ".terraform.lock.hcl", "main.tf", "sub/.keep"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files sent: -want +got:\n%s", diff)
	}

	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not found on PATH")
	}
	cmd := exec.Command(bin, "console")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1")
	cmd.Stdin = strings.NewReader(`join("\n", fileset(".", "**"))` + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("terraform console: %v %s", err, out)
	}
	var tf []string
	for _, line := range strings.Split(string(out), "\n") {
		name := strings.TrimSpace(line)
		if name == "" || name == "<<EOT" || name == "EOT" {
			continue
		}
		parts := strings.Split(name, "/")
		left := skippedFile(parts[len(parts)-1])
		for _, p := range parts[:len(parts)-1] {
			left = left || skippedDir(p)
		}
		if !left {
			tf = append(tf, name)
		}
	}
	if diff := cmp.Diff(got, tf); diff != "" {
		t.Errorf("terraform's fileset(\".\", \"**\") less what is left out: -cairn +terraform:\n%s", diff)
	}
}
