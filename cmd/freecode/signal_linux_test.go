package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStartSIGHUPStopsServerChildren: SIGHUP (a closed terminal) stops
// freecode the way SIGTERM does, so what a server started (here, sh's
// background sleep) goes with it instead of living on under init.
func TestStartSIGHUPStopsServerChildren(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	fifo := filepath.Join(dir, "child.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The server never answers initialize; its shell starts a child and
	// writes the child's pid to the named pipe.
	mustRun(t, "--config", path, "mcp", "add", "hang", "local", "--timeout", "10m", "--",
		"sh", "-c", `sleep 1000 & echo $! > "$0"; wait`, fifo)

	cmd := exec.Command(freecodeBin, "--config", path, "mcp", "start", "hang")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fifo) // blocks until the shell has written
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || child == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading the child's pid: %q, %v", b, err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("freecode after SIGHUP: %v, want exit status 1 (a clean stop)\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `✗ Server "hang" failed: interrupted`) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// A clean stop waits until the server's group is empty, so by now the
	// child is gone (at most a zombie init has yet to reap).
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err == nil {
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] != "Z" {
			syscall.Kill(child, syscall.SIGKILL)
			t.Errorf("the server's child %d outlived freecode after SIGHUP", child)
		}
	}
}
