//go:build !linux

package pgtest

import "syscall"

// sysProcAttr puts a server in a process group of its own. Without Linux's Pdeathsig, a test
// binary that dies without stopping its server leaves it running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
