//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartInterrupt sends SIGINT to a real freecode process while it waits
// for a server that never answers: it must say so, exit 1 and leave no
// server process behind.
func TestStartInterrupt(t *testing.T) {
	dir := t.TempDir()
	bin := freecodeBin
	path := filepath.Join(dir, "config.json")
	pidFile := filepath.Join(dir, "server.pid")
	mustRun(t, "--config", path, "mcp", "add", "hang", "local", "--timeout", "10m", "--",
		"sh", "-c", `echo $$ > "$0"; exec sleep 1000`, pidFile)

	cmd := exec.Command(bin, "--config", path, "mcp", "start", "hang")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the server to be up: bounded polling, a hang guard only.
	var pid int
	for i := 0; i < 3000 && pid == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the server never started")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("freecode after SIGINT: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), `✗ Server "hang" failed: interrupted`) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	// freecode has exited, so a server it did not stop is now an orphan
	// that init reaps; give init a moment (bounded) before calling it a leak.
	alive := true
	for i := 0; i < 500 && alive; i++ {
		alive = syscall.Kill(pid, 0) == nil
		if alive {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if alive {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("server process %d outlived freecode", pid)
	}
}

// TestDemoScript runs scripts/demo.sh (what `make demo` runs) on the
// binaries TestMain built, so a change that breaks the demo fails a test.
func TestDemoScript(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "demo.sh"), filepath.Dir(freecodeBin))
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		"$ freecode mcp add demo local -- " + demoServer,
		"$ freecode mcp list",
		`✓ Server "demo" started with 7 tools`,
		"$ freecode mcp tools demo",
		"No sidecar is running for ",
		`Started "demo" in the sidecar`,
		"$ frontend --connect",
		"→ answer  allowOnce",
		"← freecode/tools/changed  server demo2",
		"✓ demo2: connected",
		"Demo finished: every step passed.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".freecode")); !os.IsNotExist(err) {
		t.Errorf("demo touched the user's ~/.freecode: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("demo left %d entries in TMPDIR", len(left))
	}
}
