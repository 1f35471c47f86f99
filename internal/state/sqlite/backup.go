package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the SQLite database at src to dst (which must not
// exist), while other processes go on using src: VACUUM INTO reads one snapshot, in a read
// transaction, and writes a compacted database. It works for any SQLite file (cairn's state,
// the kube API's kine store). dst gets mode 0600.
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("cannot back up %s: %w", src, err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("cannot back up to %s: it exists", dst)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("cannot back up %s: %w", src, err)
	}
	db, err := sql.Open("sqlite", src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("cannot back up %s: %w", src, err)
	}
	defer db.Close()
	// The copy is made with the process's umask; create it first so that it is private.
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("cannot back up to %s: %w", dst, err)
	}
	f.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		_ = os.Remove(dst)
		return fmt.Errorf("cannot back up %s: %w", src, err)
	}
	return nil
}
