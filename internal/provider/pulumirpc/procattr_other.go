//go:build !linux

package pulumirpc

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in its own process group, so SIGINT on Close reaches the
// children it starts too.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
