package tfplugin

import (
	"os/exec"
	"syscall"
)

// setPdeathsig asks the kernel to SIGKILL the provider when cairn dies, however it dies: kill -9
// runs no deferred cleanup, and a provider orphaned under PID 1 would hold its socket and
// whatever it was doing forever. Linux ties the signal to the thread that forked the child,
// not the process; Go never ends an OS thread while other goroutines may run on it (only a
// goroutine that exits while locked to its thread does that, and launch is not one), so the
// signal comes only when cairn itself exits.
func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
