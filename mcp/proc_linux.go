package mcp

import "syscall"

// sysProcAttr puts the server in its own process group, so stop can signal
// everything it started, and has the kernel SIGKILL it if the sidecar dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
