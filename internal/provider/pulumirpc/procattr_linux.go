package pulumirpc

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the plugin in its own process group, so SIGINT on Close reaches the
// children it starts too, and asks the kernel to SIGKILL it if cairn dies without closing it
// (kill -9): an orphaned provider would otherwise live on until its 5-minute health check.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
