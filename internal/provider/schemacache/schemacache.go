// Package schemacache keeps the schemas plugins answer on disk, across cairn processes, for
// both plugin adapters (tfplugin, pulumirpc): a command with nothing for a plugin to do then
// starts no plugin to read its schema. An entry is a file named by the hash of its key, that
// starts with a magic line naming its layout; an entry that cannot be read is ignored (the
// plugin is asked again), and a failed write only costs a later plugin start.
package schemacache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/atomicfile"
)

// BuildKey identifies a plugin build by its resolved path, size and modification time (a
// replaced or reinstalled binary has another key); "" when the file cannot be read.
func BuildKey(executable string) string {
	if executable == "" {
		return ""
	}
	abs, err := filepath.Abs(executable)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d", abs, fi.Size(), fi.ModTime().UnixNano())
}

// Path is the entry for key in the folder kind under dir; "" without a dir or a key.
func Path(dir, kind, key string) string {
	if dir == "" || key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, kind, hex.EncodeToString(sum[:]))
}

// Read returns the entry at path without its magic line; nil when there is none, or it has
// another layout.
func Read(path, magic string) []byte {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte(magic)) {
		return nil
	}
	return b[len(magic):]
}

// Write stores an entry atomically (a reader never sees half of one).
func Write(path, magic string, b []byte) {
	if path == "" || len(b) == 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	_ = atomicfile.Write(path, append([]byte(magic), b...), 0o600)
}
