//go:build !linux

package tfplugin

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
