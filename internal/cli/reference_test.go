package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra/doc"
)

//go:generate go test -run TestReference -update .

var update = flag.Bool("update", false, "rewrite docs/cli/ from the command tree")

// referenceDir holds the generated reference of every command; docs/cli.md links it.
const referenceDir = "../../docs/cli"

// writeReference writes one markdown file per command, generated from the command tree.
func writeReference(dir string) error {
	root := (&runner{}).rootCommand()
	root.DisableAutoGenTag = true // no date: the files must not change when nothing did
	return doc.GenMarkdownTree(root, dir)
}

// TestReference fails when docs/cli/ differs from what the command tree generates, so the
// reference cannot drift from the flags; `go generate ./internal/cli` rewrites it.
func TestReference(t *testing.T) {
	if *update {
		if err := os.RemoveAll(referenceDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(referenceDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeReference(referenceDir); err != nil {
			t.Fatal(err)
		}
	}
	want := t.TempDir()
	if err := writeReference(want); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) map[string]string {
		files := map[string]string{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = string(b)
		}
		return files
	}
	if diff := cmp.Diff(read(want), read(referenceDir)); diff != "" {
		t.Errorf("docs/cli/ is not what the command tree generates; run `go generate ./internal/cli` (-generated +committed):\n%s", diff)
	}
}
