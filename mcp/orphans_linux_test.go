package mcp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/freecode/freecode/internal/proctest"
)

// TestManagerEscapeeReapedAfterKill9: a FreeCode process running a Manager
// whose server started a daemon (double fork, setsid: out of the server's
// group and session, adopted by FreeCode) is killed with SIGKILL; the
// daemon goes to init and lives on. The connect recorded it at once, so the
// next FreeCode process reaps it. (mcp/proc's tests cover what a record
// names that is not to be reaped.)
func TestManagerEscapeeReapedAfterKill9(t *testing.T) {
	dir := t.TempDir()
	owner := proctest.StartOwner(t, testOwnerEnv+"="+dir, testOwnerEscapeEnv+"="+filepath.Join(t.TempDir(), "daemon"))
	daemon := owner.PID
	if sid, err := unix.Getsid(daemon); err != nil || sid != daemon || procStatus(daemon, "PPid") != strconv.Itoa(owner.Cmd.Process.Pid) {
		owner.Fatalf(t, "the daemon %d is not a session leader adopted by its FreeCode process %d: session %d (%v), parent %s",
			daemon, owner.Cmd.Process.Pid, sid, err, procStatus(daemon, "PPid"))
	}
	owner.Kill9(t, "daemon")

	runNextFreeCode(t, dir)
	owner.AwaitReaped(t, "setsid daemon")
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("run records left after reaping: %v", left)
	}
}

// TestKill9MidInstallGivesSIGTERM: a FreeCode process killed with SIGKILL
// while a package runner installs its server has the kernel send the
// runner SIGTERM, not SIGKILL, so that npm can undo the half-done install
// instead of leaving its cache broken.
func TestKill9MidInstallGivesSIGTERM(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	npx := fakeNPX(t)
	install := filepath.Join(t.TempDir(), "install")
	if err := mkfifo(install); err != nil {
		t.Fatal(err)
	}
	rolledBack := filepath.Join(t.TempDir(), "rolled-back")
	ready := readyPipe(t)
	owner := exec.Command(exe)
	owner.Env = append(os.Environ(), testOwnerEnv+"="+t.TempDir(),
		testOwnerInstallEnv+"="+strings.Join([]string{npx, install, rolledBack, ready.path}, "\n"))
	owner.Stderr = os.Stderr
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	<-ready.c // the runner runs, and is about to install
	// Open the install's pipe, which the runner reads while it installs:
	// once it is gone, the pipe has no reader left.
	w, err := os.OpenFile(install, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
	fds := []unix.PollFd{{Fd: int32(w.Fd())}} // POLLERR: no reader
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			break
		}
	}
	if b, err := os.ReadFile(rolledBack); err != nil || string(b) != "rolled back" {
		t.Errorf("the runner of a FreeCode process killed mid-install did not get SIGTERM (%q, %v)", b, err)
	}
}

// TestCloseEndsSetsidEscapee: a server that starts a daemon by double
// fork and setsid() leaves its process group and session, and the
// daemon's parent is gone; Close ends and reaps it all the same.
func TestCloseEndsSetsidEscapee(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon")
	c := startTestConn(t, testSrv(t, "escaper", "escape="+file), nil)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	// The pidfd names the daemon for good: a pid reused later is not it.
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("the daemon %d is not running: %v", pid, err)
	}
	defer unix.Close(pidfd)
	sid, err1 := unix.Getsid(pid)
	pgrp, err2 := unix.Getpgid(pid)
	if err1 != nil || err2 != nil || sid != pid || pgrp == c.Status().PID {
		t.Fatalf("the daemon %d (session %d, group %d: %v, %v) did not leave the server's group and session", pid, sid, pgrp, err1, err2)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Signal 0 reaches a process, zombie or not, until it is reaped.
	if unix.PidfdSendSignal(pidfd, 0, nil, 0) == nil {
		zombie := strings.Contains(procStatus(pid, "State"), "zombie")
		syscall.Kill(pid, syscall.SIGKILL)
		proctest.AwaitExit(t, pidfd)
		t.Fatalf("the setsid daemon of a closed server is still there (zombie: %v)", zombie)
	}
}

// procStatus returns the value of key in /proc/<pid>/status, or "".
func procStatus(pid int, key string) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestServerStopLeavesOwnChildren: the zombies a server's stop reaps are
// adopted ones only; a child this process started itself, in a group of
// its own, is still there for its exec.Cmd to Wait for.
func TestServerStopLeavesOwnChildren(t *testing.T) {
	file := filepath.Join(t.TempDir(), "daemon")
	c := startTestConn(t, testSrv(t, "escaper", "escape="+file), nil)
	own := exec.Command("sh", "-c", "exit 7")
	own.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(own.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	proctest.AwaitExit(t, pidfd) // a zombie now, unwaited
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := own.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Errorf("Wait of our own child after a server's stop = %v, want exit status 7", err)
	}
}

// runNextFreeCode runs the test binary as the FreeCode process that starts
// after a killed one, which reaps what the run directory run records
// (runReaper), and waits for it.
func runNextFreeCode(t *testing.T, run string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reaper := exec.Command(exe)
	reaper.Env = append(os.Environ(), testReapEnv+"="+run)
	reaper.Stderr = os.Stderr
	if err := reaper.Run(); err != nil {
		t.Fatalf("the next FreeCode process: %v", err)
	}
}
