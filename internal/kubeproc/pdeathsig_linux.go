package kubeproc

import (
	"os/exec"
	"syscall"
)

// setPdeathsig has the kernel kill cairn-kube when cairn dies, even by kill -9 (see
// tfplugin's setPdeathsig for why the thread that forks does not matter in Go).
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
