package cli

import (
	"os"
	"path/filepath"
	"sort"
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
// directory itself (sent under its own names) and without hidden directories.
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
	files := map[string]string{}
	if err := collectFiles(files, dir, ".", ""); err != nil {
		t.Fatal(err)
	}
	if err := collectModules(files, dir, []string{"../..", "../../modules/sub"}); err != nil {
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
