package cli

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTree writes files (slash-separated names below root) with text.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A module directory outside the configuration is sent without its hidden directories
// (.aws, .ssh: credentials live there); the configuration's own are sent, as terraform's
// fileset sees them.
func TestReadDirSkipsHiddenOutside(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{
		"cfg/main.tf":             "module \"shared\" {\n  source = \"../shared\"\n}\n",
		"cfg/.hid/x":              "x",
		"shared/main.tf":          "# shared\n",
		"shared/.aws/credentials": "secret",
		"shared/sub/.ssh/id_rsa":  "secret",
		"shared/.keep":            "k",
		"shared/files/data.txt":   "d",
	})
	r := &runner{env: Env{Stderr: io.Discard}, output: "json"}
	src, err := r.readDir(filepath.Join(base, "cfg"), &sourceFlags{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for name := range src.req.Files {
		got = append(got, name)
	}
	sort.Strings(got)
	want := []string{"../shared/.keep", "../shared/files/data.txt", "../shared/main.tf", ".hid/x", "main.tf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files sent: -want +got:\n%s", diff)
	}
}

// What the CLI sends is bounded in files and bytes (the server refuses a bigger request);
// the error names the biggest directories, and a module call reaching far up stops early.
func TestReadDirLimits(t *testing.T) {
	t.Run("Bytes", func(t *testing.T) {
		base := t.TempDir()
		big := strings.Repeat("x", 3<<20)
		writeTree(t, base, map[string]string{
			"cfg/main.tf":   "module \"data\" {\n  source = \"../data\"\n}\n",
			"cfg/small.txt": "s",
			"data/main.tf":  "# data\n",
			"data/a.bin":    big, "data/b.bin": big, "data/c/d.bin": big, "data/c/e.bin": big,
		})
		r := &runner{env: Env{Stderr: io.Discard}, output: "json"}
		_, err := r.readDir(filepath.Join(base, "cfg"), &sourceFlags{}, nil)
		if err == nil {
			t.Fatal("12 MiB of module files sent")
		}
		t.Log(err)
		for _, want := range []string{"more than 10 MiB", "../data (", "MiB"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})
	t.Run("Files", func(t *testing.T) {
		base := t.TempDir()
		files := map[string]string{"cfg/main.tf": "module \"many\" {\n  source = \"../many\"\n}\n", "many/main.tf": "# many\n"}
		for i := range maxSendFiles + 1 {
			files["many/d"+strconv.Itoa(i%20)+"/f"+strconv.Itoa(i)] = ""
		}
		writeTree(t, base, files)
		r := &runner{env: Env{Stderr: io.Discard}, output: "json"}
		_, err := r.readDir(filepath.Join(base, "cfg"), &sourceFlags{}, nil)
		if err == nil || !strings.Contains(err.Error(), "more than 10000 files") || !strings.Contains(err.Error(), "../many (") {
			t.Errorf("error = %v, want the file limit naming ../many", err)
		}
	})
}
