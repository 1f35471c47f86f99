//go:build !linux

package tfplugin

import "os/exec"

// setPdeathsig does nothing where the kernel has no parent-death signal; go-plugin's managed
// clients (CleanupClients) still cover every exit cairn sees.
func setPdeathsig(*exec.Cmd) {}
