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
	"strings"
)

// MaxCodeBytes bounds a function's unpacked code, as Lambda's 250 MB.
const MaxCodeBytes = 250 << 20

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
// MaxCodeBytes.
func unzip(data []byte, dest string) error {
	bad := func(format string, args ...any) error {
		return &InvalidError{Msg: "the code archive " + fmt.Sprintf(format, args...)}
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return bad("is not a zip file: %v", err)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return fmt.Errorf("cannot unpack the code: %w", err)
	}
	var total int64
	for _, f := range zr.File {
		name := path.Clean(strings.TrimPrefix(f.Name, "./"))
		if name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) || strings.Contains(f.Name, "\\") {
			return bad("has an entry outside its root: %q", f.Name)
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return fmt.Errorf("cannot unpack the code: %w", err)
			}
			continue
		case mode&fs.ModeSymlink != 0:
			link, err := readEntry(f, 4096)
			if err != nil {
				return bad("has an unreadable link %q: %v", f.Name, err)
			}
			if !insideLink(name, string(link)) {
				return bad("has a link outside its root: %q", f.Name)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return fmt.Errorf("cannot unpack the code: %w", err)
			}
			if err := os.Symlink(string(link), target); err != nil {
				return fmt.Errorf("cannot unpack the code: %w", err)
			}
			continue
		case !mode.IsRegular():
			continue
		}
		if total += int64(f.UncompressedSize64); total > MaxCodeBytes {
			return bad("unpacks to more than %d MB", MaxCodeBytes>>20)
		}
		if err := writeEntry(f, target, mode.Perm()|0o600); err != nil {
			return err
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

func writeEntry(f *zip.File, target string, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("cannot unpack the code: %w", err)
	}
	rc, err := f.Open()
	if err != nil {
		return &InvalidError{Msg: fmt.Sprintf("the code archive has an unreadable entry %q: %v", f.Name, err)}
	}
	defer rc.Close()
	out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("cannot unpack the code: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(rc, MaxCodeBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxCodeBytes {
		err = errors.New("entry too large")
	}
	if err != nil {
		return &InvalidError{Msg: fmt.Sprintf("the code archive's entry %q cannot be unpacked: %v", f.Name, err)}
	}
	return nil
}
