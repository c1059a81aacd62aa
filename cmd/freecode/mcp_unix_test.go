//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
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
	path := filepath.Join(dir, "config.json")
	// The server writes its pid into a FIFO and holds it open until it
	// exits: the test reads both ends of the server's life there, the pid
	// when it starts and the end of the file when it is gone.
	fifo := filepath.Join(dir, "server.pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "--config", path, "mcp", "add", "hang", "local", "--timeout", "10m", "--",
		"sh", "-c", `exec 3>"$0"; echo $$ >&3; exec sleep 1000`, fifo)
	started := make(chan int, 1) // the pid, 0 if none came
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		f, err := os.Open(fifo) // returns once the server opens it
		if err != nil {
			started <- 0
			return
		}
		defer f.Close()
		r := bufio.NewReader(f)
		line, _ := r.ReadString('\n')
		pid, _ := strconv.Atoi(strings.TrimSpace(line))
		started <- pid
		io.Copy(io.Discard, r) // until no one holds the FIFO open
	}()
	// release ends a wait for a server that never opened the FIFO.
	release := func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}

	cmd := exec.Command(freecodeBin, "--config", path, "mcp", "start", "hang")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		release()
		<-exited
		t.Fatal(err)
	}
	var pid int
	select {
	case pid = <-started:
	case <-time.After(processHangGuard):
		cmd.Process.Kill()
		cmd.Wait()
		release()
		<-exited
		t.Fatalf("the server never started:\n%s", stderr.String())
	}
	if pid == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		<-exited
		t.Fatalf("the server wrote no pid:\n%s", stderr.String())
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
	// A server freecode did not stop holds the FIFO open.
	select {
	case <-exited:
	case <-time.After(processHangGuard):
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("server process %d outlived freecode", pid)
	}
}

// processHangGuard bounds a wait for a process that would otherwise hang
// the test on a bug; it is never what the test asserts.
const processHangGuard = time.Minute

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
		`✓ Server "demo" started with 8 tools`, // --tasks adds long_build
		"$ freecode mcp tools demo",
		"build passed: 3 steps in 1.5s; not published", // long_build, as a task
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

// TestStartRunnerFirstStart is the quick start with a package runner that
// has to install first: `mcp start` of a server run by npx whose install
// lasts past the server's timeout waits for it, says so, and succeeds on
// the first try. The npx is a script that "installs" until the test writes
// to a named pipe, then runs the demo server.
func TestStartRunnerFirstStart(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "install")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	npx := filepath.Join(dir, "npx")
	script := "#!/bin/sh\ncat " + strconv.Quote(pipe) + " >/dev/null\nexec " + strconv.Quote(demoServer) + "\n"
	if err := os.WriteFile(npx, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "myserver", "local", "--timeout", "2000", "--", npx, "-y", "@example/demo-server")

	var stdout, stderr notifyBuffer
	code := make(chan int, 1)
	go func() {
		code <- runContext(t.Context(), &stdout, &stderr, "--config", path, "mcp", "start", "myserver", "--local")
	}()
	for !strings.Contains(stderr.String(), "note: npx is still installing the server's package") {
		stderr.mu.Lock()
		if stderr.changed == nil {
			stderr.changed = make(chan struct{})
		}
		changed := stderr.changed
		stderr.mu.Unlock()
		select {
		case c := <-code:
			t.Fatalf("mcp start ended (exit %d) while npx was installing:\n%s%s", c, stdout.String(), stderr.String())
		case <-changed:
		}
	}
	f, err := os.OpenFile(pipe, os.O_WRONLY, 0) // the install is done
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if c := <-code; c != 0 || !strings.Contains(stdout.String(), `✓ Server "myserver" started with 7 tools`) {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", c, stdout.String(), stderr.String())
	}
}
