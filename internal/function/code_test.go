package function

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// entry is one entry of a test archive: a file, a directory (name ending in /) or a link.
type entry struct {
	name, body string
	link       bool
	mode       fs.FileMode // of a file; 0644 when zero
}

// archive builds a zip of es, stored uncompressed and without checksums, so a fuzzer that
// changes a name, a link's target or a file's bytes still makes a readable archive.
func archive(t testing.TB, es ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		if strings.HasSuffix(e.name, "/") {
			e.body = "" // zip holds no content for a directory
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Store,
			CompressedSize64: uint64(len(e.body)), UncompressedSize64: uint64(len(e.body))}
		switch {
		case e.link:
			h.SetMode(fs.ModeSymlink | 0o777)
		case strings.HasSuffix(e.name, "/"):
			h.SetMode(fs.ModeDir | 0o755)
		case e.mode != 0:
			h.SetMode(e.mode)
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// escapeArchive is the archive of issue 11: its second link is made through its first, and
// its file through both, four levels above the code directory.
func escapeArchive(t testing.TB) []byte {
	return archive(t,
		entry{name: "a/b/c/d/l", body: "../../../..", link: true},
		entry{name: "a/b/c/d/l/m", body: "../../../..", link: true},
		entry{name: "a/b/c/d/l/m/ESCAPED", body: "written outside"},
		entry{name: "bootstrap", body: "#!/bin/sh\n", mode: 0o755},
	)
}

// outside returns the names below top that are not below (or on the way to) inside.
func outside(t testing.TB, top, inside string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(inside, p)
		if p == inside || strings.HasPrefix(inside, p+string(filepath.Separator)) {
			return nil // the way to inside
		}
		if rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.SkipDir // inside
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCreateRefusesArchiveEscape: the archive of issue 11 is refused by Manager.Create with an
// *InvalidError (the API's 400) and nothing is written outside the code directory, nor left
// inside it.
func TestCreateRefusesArchiveEscape(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "1", "2", "3") // code goes to dir/code/NAME-ID: four levels up is top/1
	m, err := New(Config{Store: &memStore{m: map[string]Definition{}}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	_, err = m.Create(context.Background(), Definition{Name: "escape", Kind: KindProvided, Handler: "bootstrap"}, escapeArchive(t))
	var invalid *InvalidError
	if !errors.As(err, &invalid) || !strings.Contains(err.Error(), `below its link "a/b/c/d/l"`) {
		t.Errorf("Create with the escaping archive: %v, want an *InvalidError naming the link it goes through", err)
	}
	if got := outside(t, top, dir); len(got) != 0 {
		t.Errorf("the archive wrote outside the functions directory: %v", got)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "code")); len(left) != 0 {
		t.Errorf("a refused archive left %v in the code directory", left)
	}
}

// TestUnzip: what unzip unpacks and what it refuses.
func TestUnzip(t *testing.T) {
	cases := map[string]struct {
		reason  string
		entries []entry
		wantErr string          // "" for success
		want    map[string]bool // names that must exist below the root afterwards
	}{
		"Plain": {reason: "Files, directories and a link inside, as ZipDir makes them.",
			entries: []entry{{name: "bin/"}, {name: "lib/cli.js", body: "x"}, {name: "bin/cli", body: "../lib/cli.js", link: true},
				{name: "bootstrap", body: "#!/bin/sh\n", mode: 0o755}},
			want: map[string]bool{"bin/cli": true, "lib/cli.js": true, "bootstrap": true}},
		"LinkBeforeItsTarget": {reason: "A link may name an entry that comes later.",
			entries: []entry{{name: "l", body: "later", link: true}, {name: "later", body: "x"}},
			want:    map[string]bool{"l": true, "later": true}},
		"DanglingLinkInside": {reason: "A link to nothing, inside, is left as is.",
			entries: []entry{{name: "l", body: "nothing", link: true}},
			want:    map[string]bool{"l": true}},
		"EscapeThroughLinks": {reason: "The archive of issue 11.",
			entries: []entry{{name: "a/b/c/d/l", body: "../../../..", link: true}, {name: "a/b/c/d/l/m", body: "../../../..", link: true},
				{name: "a/b/c/d/l/m/ESCAPED", body: "x"}},
			wantErr: `below its link "a/b/c/d/l"`},
		"FileBelowLink": {reason: "Even a link that stays inside is not written through.",
			entries: []entry{{name: "l", body: "d", link: true}, {name: "d/"}, {name: "l/f", body: "x"}},
			wantErr: `below its link "l"`},
		"LinkTargetThroughLink": {reason: "A target that is inside as text but leaves through another link once resolved.",
			entries: []entry{{name: "a/b/l", body: "..", link: true}, {name: "y", body: "a/b/l/../..", link: true}},
			wantErr: `a link that leads outside its root: "y"`},
		"LinkOutside": {reason: "A target outside as text.",
			entries: []entry{{name: "l", body: "../x", link: true}},
			wantErr: `a link outside its root: "l"`},
		"AbsoluteLink": {reason: "An absolute target.",
			entries: []entry{{name: "l", body: "/etc/passwd", link: true}},
			wantErr: `a link outside its root: "l"`},
		"DotDotEntry": {reason: "An entry named outside.",
			entries: []entry{{name: "../x", body: "x"}},
			wantErr: `an entry outside its root: "../x"`},
		"AbsoluteEntry": {reason: "An absolute entry.",
			entries: []entry{{name: "/x", body: "x"}},
			wantErr: `an entry outside its root: "/x"`},
		"Duplicate": {reason: "The same file twice is refused by the root, as the archive's fault.",
			entries: []entry{{name: "f", body: "x"}, {name: "f", body: "y"}},
			wantErr: `cannot be unpacked at its entry "f": file exists`},
		"ThroughAFile": {reason: "A file where a directory is needed.",
			entries: []entry{{name: "f", body: "x"}, {name: "f/g", body: "y"}},
			wantErr: `cannot be unpacked at its entry "f/g"`},
		"LinkLoop": {reason: "Links naming each other.",
			entries: []entry{{name: "a", body: "b", link: true}, {name: "b", body: "a", link: true}},
			wantErr: `a link that leads outside its root: "a"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			top := t.TempDir()
			dest := filepath.Join(top, "x", "y", "root")
			err := unzip(archive(t, tc.entries...), dest)
			var invalid *InvalidError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("%s\nunzip: %v", tc.reason, err)
			case tc.wantErr != "" && (!errors.As(err, &invalid) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%s\nunzip: %v, want an *InvalidError saying %q", tc.reason, err, tc.wantErr)
			}
			for n := range tc.want {
				if _, err := os.Lstat(filepath.Join(dest, n)); err != nil {
					t.Errorf("%s\nunzip did not make %s: %v", tc.reason, n, err)
				}
			}
			if got := outside(t, top, dest); len(got) != 0 {
				t.Errorf("%s\nunzip wrote outside its root: %v", tc.reason, got)
			}
		})
	}
}

// TestFunctionsHideCodeDir: the API never shows where the server keeps a function's code.
func TestFunctionsHideCodeDir(t *testing.T) {
	m := newManager(t)
	create(t, m, "greeter", "echo", nil)
	s := Service{M: m}
	got, err := s.GetFunction(context.Background(), "greeter")
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListFunctions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal([]any{got, list})
	if strings.Contains(string(b), m.cfg.Dir) || strings.Contains(string(b), "codeDir") {
		t.Errorf("the API shows the server's code directory: %s", b)
	}
}

// FuzzUnpack unpacks arbitrary zip bytes (seeds in testdata/fuzz/FuzzUnpack: the archives of
// TestUnzip, stored without checksums so that changed names and link targets still read)
// below a few levels of directories: unzip may succeed or refuse with an *InvalidError, never
// panic, and never leave anything outside its root.
func FuzzUnpack(f *testing.F) {
	f.Add(escapeArchive(f))
	f.Fuzz(func(t *testing.T, data []byte) { checkUnzip(t, data) })
}

// FuzzUnpackEntries is FuzzUnpack over archives made of entries, one a line: "L name target"
// (a link), "D name" (a directory) or "F name content" (a file), so that the fuzzer
// recombines links, names and targets rather than zip bytes. Seeds are in
// testdata/fuzz/FuzzUnpackEntries.
func FuzzUnpackEntries(f *testing.F) {
	f.Add("L a/b/c/d/l ../../../..\nL a/b/c/d/l/m ../../../..\nF a/b/c/d/l/m/ESCAPED x\n")
	f.Fuzz(func(t *testing.T, script string) {
		var es []entry
		for line := range strings.Lines(script) {
			kind, rest, _ := strings.Cut(strings.TrimRight(line, "\n"), " ")
			name, arg, _ := strings.Cut(rest, " ")
			switch kind {
			case "L":
				es = append(es, entry{name: name, body: arg, link: true})
			case "D":
				es = append(es, entry{name: strings.TrimSuffix(name, "/") + "/"})
			case "F":
				es = append(es, entry{name: name, body: arg})
			}
		}
		if len(es) > 64 {
			return
		}
		checkUnzip(t, archive(t, es...))
	})
}

// checkUnzip unpacks data below top/1/.../6/root and checks that it succeeded or failed with an
// *InvalidError, that nothing is outside root, and that every link left resolves inside it.
func checkUnzip(t *testing.T, data []byte) {
	top := t.TempDir()
	dest := filepath.Join(top, "1", "2", "3", "4", "5", "6", "root")
	err := unzip(data, dest)
	var invalid *InvalidError
	if err != nil && !errors.As(err, &invalid) {
		t.Errorf("unzip: %v, want nil or an *InvalidError", err)
	}
	if got := outside(t, top, dest); len(got) != 0 {
		t.Fatalf("unzip wrote outside its root: %v", got)
	}
	if err != nil {
		return
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var names []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(dest, p)
			names = append(names, rel)
		}
		return nil
	})
	slices.Sort(names)
	for _, n := range names {
		if _, err := root.Stat(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("unzip left a link %s that does not resolve inside: %v", n, err)
		}
	}
}

// TestUnzipRefusesTooManyEntries: an archive of empty files stays under MaxCodeBytes but its
// entries are bounded too, before anything is written.
func TestUnzipRefusesTooManyEntries(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range MaxCodeEntries + 1 {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f%d", i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	dest := filepath.Join(t.TempDir(), "code")
	err := unzip(buf.Bytes(), dest)
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "entries") {
		t.Fatalf("unzip of %d entries: %v, want an InvalidError naming the entries", MaxCodeEntries+1, err)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Errorf("unzip created %s before refusing", dest)
	}
}

// TestUnzipRefusesDeepNames: a name of thousands of levels would cost a walk from the root per
// level; it is refused before anything is made.
func TestUnzipRefusesDeepNames(t *testing.T) {
	for _, name := range []string{strings.Repeat("a/", 65) + "f", strings.Repeat("x", 1025)} {
		err := unzip(archive(t, entry{name: name, body: "x"}), filepath.Join(t.TempDir(), "code"))
		var inv *InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("unzip of %.20q…: %v, want an InvalidError", name, err)
		}
	}
	if err := unzip(archive(t, entry{name: strings.Repeat("a/", 60) + "f", body: "x"}), filepath.Join(t.TempDir(), "code")); err != nil {
		t.Errorf("60 levels: %v", err)
	}
}
