package tfinstall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/cairn-dev/cairn/internal/atomicfile"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Hashing a provider package reads every byte of its binary (tens of megabytes: ~20 ms of CPU
// for hashicorp/random), and every command checks the package against the lock file. The
// result is kept in the provider cache under a key made of every file's identity: path, size,
// modification and change times, inode and device. Rewriting a file in place changes its
// change time (which no user can set back) and replacing it changes its inode, so a changed
// package always misses the cache and is hashed again.

// cachedHashDir is hashDir through the cache; a cache that cannot be read or written only
// costs the hashing.
func cachedHashDir(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	key, ok := packageIdentity(real)
	root, rerr := cacheRoot()
	if !ok || rerr != nil {
		return hashDir(real)
	}
	path := filepath.Join(root, "hashes", key)
	if b, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(b), "h1:") {
		return string(b), nil
	}
	h, err := hashDir(real)
	if err != nil {
		return "", err
	}
	writeHashEntry(path, h)
	return h, nil
}

// writeHashEntry stores h at path atomically, so that a reader never sees half an entry.
func writeHashEntry(path, h string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	_ = atomicfile.Write(path, []byte(h), 0o600) // failing costs the next command a hash
}

// packageIdentity is the cache key of the package directory dir: a digest of every file's
// identity, as dirhash finds the files. ok is false when some file has no usable identity (a
// platform without inodes, a directory behind a link): such packages are always hashed.
func packageIdentity(dir string) (string, bool) {
	var lines []string
	err := filepath.Walk(dir, func(file string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		st, err := os.Stat(file) // dirhash opens links: the target is what is hashed
		if err != nil {
			return err
		}
		id, ok := fileIdentity(st)
		if !ok || st.IsDir() {
			return fmt.Errorf("%s: no identity", file)
		}
		lines = append(lines, fmt.Sprintf("%q %d %d %s", file, st.Size(), st.ModTime().UnixNano(), id))
		return nil
	})
	if err != nil || len(lines) == 0 {
		return "", false
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:]), true
}
