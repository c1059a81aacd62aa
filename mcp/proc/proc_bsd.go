//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the server in its own process group, so stop can signal
// everything it started. There is no Pdeathsig outside Linux.
func sysProcAttr(_, session bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: !session, Setsid: session}
}
