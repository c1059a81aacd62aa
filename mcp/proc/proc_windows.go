package proc

import (
	"os"
	"syscall"
)

// Windows has no process groups to signal here: stop closes stdin, then
// kills the direct child.
var (
	sigTerm = os.Kill
	sigKill = os.Kill
)

func sysProcAttr(bool, bool) *syscall.SysProcAttr { return nil }

func signalGroup(p *Process, _ os.Signal) { _ = p.cmd.Process.Kill() }

func groupAlive(p *Process) bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}
