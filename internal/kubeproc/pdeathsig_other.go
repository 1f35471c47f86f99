//go:build !linux

package kubeproc

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
