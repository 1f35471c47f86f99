package pgtest

import "syscall"

// sysProcAttr puts a server in a process group of its own (a terminal's ^C is for the test
// binary, which stops the server) and sends it SIGINT, PostgreSQL's fast shutdown, should
// the test binary die without stopping it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
}
