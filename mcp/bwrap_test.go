package mcp

import (
	"os/exec"
	"runtime"
	"testing"
)

// needBwrap returns bubblewrap's path, or skips the test: a sandboxed
// server runs under it on Linux, and elsewhere under another sandbox (or
// none) that these tests do not cover.
func needBwrap(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is bubblewrap's on Linux only")
	}
	p, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed (make test installs it)")
	}
	return p
}
