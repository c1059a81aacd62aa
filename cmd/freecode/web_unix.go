//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a session of its own: the sidecar `freecode web`
// starts outlives the terminal, whose hangup it does not get.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
