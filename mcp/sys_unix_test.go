//go:build unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// What the tests and the test server ask of Unix: named pipes, process
// groups and sessions, stopping a process dead. sys_other_test.go says
// what stands in for each elsewhere.

// mkfifo makes a named pipe at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// ownGroup makes cmd, once started, the leader of a process group of its
// own, so that stopGroup reaches what it forks too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopGroup ends the group cmd leads: SIGTERM, then SIGKILL if cmd has not
// exited (exited is closed once it is reaped) within grace.
func stopGroup(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// ownSession starts cmd in a session of its own (setsid), out of its
// parent's process group, as a daemon does.
func ownSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// freezeSelf stops this whole process (SIGSTOP): it answers nothing, pings
// included, until it is killed.
func freezeSelf() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
