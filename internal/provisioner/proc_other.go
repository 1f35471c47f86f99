//go:build !unix

package provisioner

import "os/exec"

// killGroup leaves the default: exec kills the command itself when its context ends.
func killGroup(*exec.Cmd) {}
