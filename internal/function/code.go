package function

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// MaxCodeBytes bounds a function's unpacked code, as Lambda's 250 MB.
const MaxCodeBytes = 250 << 20

// MaxCodeEntries bounds the files, directories and links of a function's code: a million empty
// files stay under MaxCodeBytes but not under the inodes and time of a shared server.
const MaxCodeEntries = 50_000

// Bounds of one entry's name: far beyond node_modules' deepest paths.
const (
	maxEntryName  = 1024
	maxEntryDepth = 64
)

// ZipDir packs a code directory for Create: regular files with their modes, directories,
// and symbolic links that stay inside dir (node_modules/.bin); others are refused.
func ZipDir(dir string) ([]byte, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the code directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("cannot use %s as code: not a directory", dir)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var total int64
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		switch {
		case info.IsDir():
			hdr.Name += "/"
			_, err = zw.CreateHeader(hdr)
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if !insideLink(hdr.Name, target) {
				return fmt.Errorf("cannot pack %s: it links outside the code directory", rel)
			}
			w, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, target)
			return err
		case !info.Mode().IsRegular():
			return nil // sockets, pipes: not code
		}
		if total += info.Size(); total > MaxCodeBytes {
			return fmt.Errorf("the code is over the limit of %d MB", MaxCodeBytes>>20)
		}
		hdr.Method = zip.Deflate
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot pack the code directory: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("cannot pack the code directory: %w", err)
	}
	return buf.Bytes(), nil
}

// insideLink reports whether a relative link at name pointing to target stays inside the tree.
func insideLink(name, target string) bool {
	if path.IsAbs(target) || filepath.IsAbs(target) {
		return false
	}
	p := path.Clean(path.Join(path.Dir(name), filepath.ToSlash(target)))
	return p != ".." && !strings.HasPrefix(p, "../")
}

// unzip unpacks a code archive into dest, refusing entries that escape it and archives over
// MaxCodeBytes. Every write goes through an os.Root on dest, which never follows a link out
// of it, so no archive writes outside dest whatever its links; what the root refuses, and an
// entry below one of the archive's own links, is an *InvalidError (the API's 400). Links must
// resolve inside dest once everything is unpacked.
func unzip(data []byte, dest string) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return badArchive("is not a zip file: %v", err)
	}
	if len(zr.File) > MaxCodeEntries {
		return badArchive("has %d entries; the limit is %d", len(zr.File), MaxCodeEntries)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return fmt.Errorf("cannot unpack the code: %w", err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("cannot unpack the code: %w", err)
	}
	defer root.Close()
	u := unpacker{root: root, links: map[string]bool{}}
	for _, f := range zr.File {
		if err := u.entry(f); err != nil {
			return err
		}
	}
	return u.checkLinks()
}

func badArchive(format string, args ...any) error {
	return &InvalidError{Msg: "the code archive " + fmt.Sprintf(format, args...)}
}

// unpacker writes one archive's entries below root.
type unpacker struct {
	root  *os.Root
	links map[string]bool // the links made so far, by cleaned name
	total int64           // bytes unpacked so far
}

func (u *unpacker) entry(f *zip.File) error {
	// Each level of a path costs a walk from the root (os.Root resolves every component):
	// a name of 30,000 levels would cost minutes of CPU.
	if len(f.Name) > maxEntryName || strings.Count(f.Name, "/") > maxEntryDepth {
		return badArchive("has an entry name longer than %d bytes or deeper than %d directories: %.80q…", maxEntryName, maxEntryDepth, f.Name)
	}
	name := path.Clean(strings.TrimPrefix(f.Name, "./"))
	if name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) || strings.Contains(f.Name, "\\") {
		return badArchive("has an entry outside its root: %q", f.Name)
	}
	// An archive made by ZipDir (or zip -y) has nothing below a link; an entry that is
	// would be written wherever the link leads.
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if u.links[dir] {
			return badArchive("has an entry below its link %q: %q", dir, f.Name)
		}
	}
	mode := f.Mode()
	switch {
	case mode.IsDir():
		return u.fail(f, u.root.MkdirAll(name, 0o755))
	case mode&fs.ModeSymlink != 0:
		link, err := readEntry(f, 4096)
		if err != nil {
			return badArchive("has an unreadable link %q: %v", f.Name, err)
		}
		if !insideLink(name, string(link)) {
			return badArchive("has a link outside its root: %q", f.Name)
		}
		if err := u.mkdirs(f, path.Dir(name)); err != nil {
			return err
		}
		if err := u.fail(f, u.root.Symlink(string(link), name)); err != nil {
			return err
		}
		u.links[name] = true
		return nil
	case !mode.IsRegular():
		return nil
	}
	if u.total += int64(f.UncompressedSize64); u.total > MaxCodeBytes || f.UncompressedSize64 > MaxCodeBytes {
		return badArchive("unpacks to more than %d MB", MaxCodeBytes>>20)
	}
	if err := u.mkdirs(f, path.Dir(name)); err != nil {
		return err
	}
	return u.write(f, name, mode.Perm()|0o600)
}

func (u *unpacker) mkdirs(f *zip.File, dir string) error {
	if dir == "." {
		return nil
	}
	return u.fail(f, u.root.MkdirAll(dir, 0o755))
}

// fail explains an error of the root while unpacking f: the archive's fault (an entry that
// leads out of the root, through a file or onto an existing name) is an *InvalidError; the
// server's (a full disk, a permission) stays an error of its own.
func (u *unpacker) fail(f *zip.File, err error) error {
	if err == nil {
		return nil
	}
	for _, server := range []error{syscall.ENOSPC, syscall.EIO, syscall.EROFS, syscall.EMFILE, syscall.ENFILE,
		syscall.ENOMEM, syscall.EACCES, syscall.EPERM, os.ErrClosed} {
		if errors.Is(err, server) {
			return fmt.Errorf("cannot unpack the code: %w", err)
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the op and name of the root's call say nothing more than the entry's name
	}
	return badArchive("cannot be unpacked at its entry %q: %v", f.Name, err)
}

func (u *unpacker) write(f *zip.File, name string, perm fs.FileMode) error {
	rc, err := f.Open()
	if err != nil {
		return badArchive("has an unreadable entry %q: %v", f.Name, err)
	}
	defer rc.Close()
	out, err := u.root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return u.fail(f, err)
	}
	n, err := io.Copy(out, io.LimitReader(rc, MaxCodeBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxCodeBytes {
		err = errors.New("entry too large")
	}
	if err != nil {
		return badArchive("has an entry %q that cannot be unpacked: %v", f.Name, err)
	}
	return nil
}

// checkLinks refuses a link that does not resolve inside the root once everything is
// unpacked (a link may name an entry that comes after it; one naming nothing is left as is).
func (u *unpacker) checkLinks() error {
	names := make([]string, 0, len(u.links))
	for name := range u.links {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, err := u.root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return badArchive("has a link that leads outside its root: %q", name)
		}
	}
	return nil
}

func readEntry(f *zip.File, limit int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, limit))
}
