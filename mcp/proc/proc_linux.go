package proc

import "syscall"

// sysProcAttr puts the server in its own process group, so stop can signal
// everything it started, and has the kernel signal it if the sidecar dies:
// SIGKILL, or SIGTERM for a package runner (gentle), which may be
// installing and undoes a half-done install on SIGTERM (see runner.go).
func sysProcAttr(gentle, session bool) *syscall.SysProcAttr {
	sig := syscall.SIGKILL
	if gentle {
		sig = syscall.SIGTERM
	}
	// setsid makes the process its group's leader as setpgid would; the
	// two together fail (a session leader cannot change its group).
	return &syscall.SysProcAttr{Setpgid: !session, Setsid: session, Pdeathsig: sig}
}
