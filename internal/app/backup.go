package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/state/sqlite"
)

// Backup copies the state directory dir into dest (which must not exist, nor be inside dir)
// while cairn may be running on it: every SQLite database (state.db, the kube API's
// kube/kube.db and kube/namespaces.db) as a consistent online copy, the other files
// (functions' code, the self-made CA's certificate) as they are. Runs' scratch directories,
// sockets and SQLite's WAL files are left out. Credentials are left out unless
// withCredentials: the server's token (the server's admin) and private keys (*.key: the CA's
// and serving certificates', a secrets key kept there); restored without them, cairn makes
// new ones. The secrets key beside dir is never copied: a backup should not travel with the
// key that opens it. It returns the files written, relative to dest. Restore by stopping
// cairn and putting dest in dir's place.
func Backup(ctx context.Context, dir, dest string, withCredentials bool) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err != nil {
		return nil, fmt.Errorf("cannot back up %s: no state.db there (is it a cairn state directory?)", dir)
	}
	if _, err := os.Stat(dest); err == nil {
		return nil, fmt.Errorf("cannot back up to %s: it exists", dest)
	}
	absDir, err1 := filepath.Abs(dir)
	absDest, err2 := filepath.Abs(dest)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("cannot back up %s to %s: %w", dir, dest, errors.Join(err1, err2))
	}
	if rel, err := filepath.Rel(absDir, absDest); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("cannot back up %s into %s: it is inside the directory it copies", dir, dest)
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
		if !withCredentials && (rel == "token" || strings.HasSuffix(path, ".key")) {
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
