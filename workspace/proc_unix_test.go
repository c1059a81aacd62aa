//go:build unix

package workspace

import (
	"errors"
	"syscall"
	"testing"
)

// wantGone fails the test if a process of pid still exists: kill(pid, 0)
// must say there is none.
func wantGone(t *testing.T, pid int, when string) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d %s: kill 0 = %v, want ESRCH", pid, when, err)
	}
}
