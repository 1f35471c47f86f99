package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// Backup copies the state directory dir into dest (which must not exist) while cairn may be
// running on it: every SQLite database (state.db, the kube API's kube/kube.db and
// kube/namespaces.db) as a consistent online copy, the other files (functions' code, the
// self-made CA, the token) as they are. Runs' scratch directories, sockets and SQLite's WAL
// files are left out. The secrets key is not copied: it lives beside dir, and a backup
// should not travel with the key that opens it. It returns the files written, relative to
// dest. Restore by stopping cairn and putting dest in dir's place.
func Backup(ctx context.Context, dir, dest string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		return nil, fmt.Errorf("cannot back up %s: no state.db there (is it a cairn state directory?)", dir)
	}
	if _, err := os.Stat(dest); err == nil {
		return nil, fmt.Errorf("cannot back up to %s: it exists", dest)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return nil, fmt.Errorf("cannot back up to %s: %w", dest, err)
	}
	var written []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if rel == "runs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dest, rel), 0o700)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(path, "-wal") || strings.HasSuffix(path, "-shm") || strings.HasSuffix(path, "-journal") {
			return nil
		}
		if strings.HasSuffix(path, ".db") {
			if err := sqlite.Backup(ctx, path, filepath.Join(dest, rel)); err != nil {
				return err
			}
		} else if err := copyFile(path, filepath.Join(dest, rel)); err != nil {
			return err
		}
		written = append(written, rel)
		return nil
	})
	if err != nil {
		return written, fmt.Errorf("cannot back up %s: %w", dir, err)
	}
	return written, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm()&0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
