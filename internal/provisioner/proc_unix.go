//go:build unix

package provisioner

import (
	"os/exec"
	"syscall"
)

// killGroup starts the command in its own process group and kills the whole group when its
// context ends: `sh -c "a; b"` leaves no orphan behind.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
