// Package atomicfile writes a file so that a reader sees the old content or the new, never a
// part: a temporary file in the same directory, renamed over the path once written.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, with mode perm. On failure path is untouched and the
// temporary file is gone.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
