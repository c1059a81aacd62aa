//go:build unix

package main

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// A real SIGINT (Ctrl-C at a terminal) to the freecode binary waiting for
// a task cancels the task on its server.
func TestToolsCallSIGINTCancelsTheTask(t *testing.T) {
	cfg, h, args, _ := tasksConfig(t)
	cmd := exec.Command(freecodeBin, "--config", cfg, "--project", t.TempDir(), "tools", "call", "mcp__tasky__hold", "--args", args, "--yes")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "progress: task working: holding until ") {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("freecode after SIGINT: %v, want exit status 1\n%s", err, log.String())
	}
	awaitServerCancelled(t, h, stdout.String())
}
