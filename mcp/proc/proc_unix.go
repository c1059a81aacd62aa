//go:build unix

package proc

import "syscall"

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalGroup signals the process group the server leads (its pgid is its
// pid: see sysProcAttr), so children it forked get the signal too.
func signalGroup(p *Process, sig syscall.Signal) {
	_ = syscall.Kill(-p.pid, sig)
}

// groupAlive reports whether any process of the group still exists. The
// kernel does not reuse a pid while it names a live process group, so this
// cannot hit an unrelated group.
func groupAlive(p *Process) bool {
	return syscall.Kill(-p.pid, 0) == nil
}
