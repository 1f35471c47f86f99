package secrets

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOrCreateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "secrets.key")
	ring, created, err := LoadOrCreateFile(path)
	if err != nil || !created {
		t.Fatalf("LoadOrCreateFile of a new path: created %v, %v", created, err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("key file mode = %v (%v), want 0600", fi.Mode(), err)
		}
		if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm() != 0o700 {
			t.Errorf("key directory mode = %v (%v), want 0700", di.Mode(), err)
		}
	}
	again, created, err := LoadOrCreateFile(path)
	if err != nil || created {
		t.Fatalf("LoadOrCreateFile of an existing file: created %v, %v", created, err)
	}
	if diff := cmp.Diff(ring.IDs(), again.IDs()); diff != "" {
		t.Errorf("reloaded key ids: -want +got\n%s", diff)
	}
	if got, err := again.Open(ring.Seal([]byte("x"), nil), nil); err != nil || string(got) != "x" {
		t.Errorf("the reloaded ring does not open what the first sealed: %v", err)
	}
}

// TestCreateRace: processes starting at once on a new directory all end with the one key.
func TestCreateRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	var wg sync.WaitGroup
	ids := make([]uint32, 8)
	for i := range ids {
		wg.Go(func() {
			r, _, err := LoadOrCreateFile(path)
			if err != nil {
				t.Errorf("LoadOrCreateFile: %v", err)
				return
			}
			ids[i] = r.PrimaryID()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("racing creators got different keys: %x", ids)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestLoadFileRefusesOpenPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	path := filepath.Join(t.TempDir(), "secrets.key")
	if _, _, err := LoadOrCreateFile(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(path)
		if err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("LoadFile of a %04o file: %v, want a refusal saying chmod 600", mode, err)
		}
	}
}

func TestWriteFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	ring := Generate().Rotate().Rotate()
	if err := WriteFile(path, ring); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ring.IDs(), got.IDs()); diff != "" {
		t.Errorf("ids after WriteFile and LoadFile: -want +got\n%s", diff)
	}
	if err := WriteFile(path, ring.PrimaryOnly()); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadFile(path); err != nil || len(got.Keys()) != 1 {
		t.Errorf("after replacing the file with one key: %v, %v", got, err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	k := NewKey()
	b64 := base64.StdEncoding.EncodeToString(k[:])
	cases := map[string]struct{ reason, text, want string }{
		"Empty":      {"A file of comments only holds no key.", "# nothing\n", "holds no key"},
		"BadID":      {"An id that is not the key's says the file is damaged.", "00000000 " + b64 + "\n", "damaged"},
		"ShortKey":   {"A key of the wrong size is refused.", "00000000 AAAA\n", "want \"ID KEY\""},
		"NoKey":      {"A line without a key is refused.", "0000\n", "want \"ID KEY\""},
		"Duplicated": {"The same key twice is refused.", k.idLine() + k.idLine(), "given twice"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secrets.key")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nLoadFile: %v, want an error saying %q", tc.reason, err, tc.want)
			}
		})
	}
}

func (k Key) idLine() string {
	return strings.SplitN(string(Format(must(New(k)))), "\n", 4)[3]
}

func TestParse(t *testing.T) {
	k1, k2 := NewKey(), NewKey()
	enc := func(k Key) string { return base64.StdEncoding.EncodeToString(k[:]) }
	ring, err := Parse(enc(k1) + ", " + enc(k2))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{k1.ID(), k2.ID()}, ring.IDs()); diff != "" {
		t.Errorf("Parse ids: -want +got\n%s", diff)
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}
