//go:build !linux

package tfinstall

import "os"

// fileIdentity: reading change times is written for Linux only (where cairn runs); elsewhere
// packages are hashed every time.
func fileIdentity(os.FileInfo) (string, bool) { return "", false }
