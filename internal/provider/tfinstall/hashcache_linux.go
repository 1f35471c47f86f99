//go:build linux

package tfinstall

import (
	"fmt"
	"os"
	"syscall"
)

// fileIdentity is what, besides size and modification time, tells a file's content has not
// changed: its inode, device and change time.
func fileIdentity(info os.FileInfo) (string, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d %d %d.%d", st.Dev, st.Ino, st.Ctim.Sec, st.Ctim.Nsec), true
}
