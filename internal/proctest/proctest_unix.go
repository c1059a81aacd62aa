//go:build unix

// Package proctest holds what tests ask of the operating system's
// processes.
package proctest

import (
	"errors"
	"syscall"
	"testing"
)

// WantGone fails the test if a process of pid still exists: kill(pid, 0)
// must say there is none. when says at which point of the test.
func WantGone(t testing.TB, pid int, when string) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d %s: kill 0 = %v, want ESRCH", pid, when, err)
	}
}
