package mcp

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

func sysProcAttr(bool) *syscall.SysProcAttr { return nil }

func signalGroup(p *process, _ os.Signal) { _ = p.cmd.Process.Kill() }

func groupAlive(p *process) bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}
