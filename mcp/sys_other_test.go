//go:build !unix

package mcp

import (
	"errors"
	"os/exec"
	"time"
)

// Outside Unix: no named pipes (the tests that need one skip), no process
// groups or sessions (cmd alone is stopped, and killed at once), no
// SIGSTOP (TestUnansweredPingReconnects skips).

func mkfifo(string) error { return errors.ErrUnsupported }

func ownGroup(*exec.Cmd) {}

func stopGroup(cmd *exec.Cmd, exited <-chan struct{}, _ time.Duration) {
	cmd.Process.Kill()
	<-exited
}

func ownSession(*exec.Cmd) {}

func freezeSelf() {}
