package schemacache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// An entry written is read back; another layout, another key or no folder reads nothing.
func TestEntryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := Path(dir, "schemas", "k1")
	Write(p, "magic 1\n", []byte("payload"))
	if got := string(Read(p, "magic 1\n")); got != "payload" {
		t.Errorf("read %q", got)
	}
	if Read(p, "magic 2\n") != nil || Read(Path(dir, "schemas", "k2"), "magic 1\n") != nil {
		t.Error("an entry of another layout or key was read")
	}
	if Path("", "schemas", "k1") != "" || Path(dir, "schemas", "") != "" || Read("", "m") != nil {
		t.Error("no folder or no key must mean no entry")
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("entry mode: %v %v", fi, err)
	}
}

// A binary replaced in place (another size or time) has another key; a missing one has none.
func TestBuildKeyFollowsTheBinary(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(exe, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	k1 := BuildKey(exe)
	link := exe + "-link"
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	if BuildKey(link) != k1 {
		t.Error("a link to the binary has another key")
	}
	if err := os.WriteFile(exe, []byte("v2 longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(exe, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if k1 == "" || BuildKey(exe) == k1 {
		t.Error("a replaced binary kept its key")
	}
	if BuildKey(exe+"-missing") != "" || BuildKey("") != "" {
		t.Error("a missing binary has a key")
	}
}
