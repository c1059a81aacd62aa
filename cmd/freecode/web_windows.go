package main

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a process group of its own, without the console:
// the sidecar `freecode web` starts outlives the console's Ctrl+C.
func detach(cmd *exec.Cmd) {
	const detachedProcess = 0x00000008
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess}
}
