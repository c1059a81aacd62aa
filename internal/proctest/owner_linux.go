package proctest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// An Owner is a FreeCode process under test: the test binary run again
// with env, which starts a server, prints "ready <leader> <pid>" (the
// server's group leader and the process the test is about) and waits to be
// killed, as a sidecar is by kill -9.
type Owner struct {
	Cmd    *exec.Cmd
	Leader int // the server's process group leader
	PID    int // the process that should outlive the owner
	Pidfd  int // a pidfd of PID, closed at the end of the test
}

// StartOwner runs the test binary with env added to this process's
// environment and waits for its ready line.
func StartOwner(t testing.TB, env ...string) *Owner {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := &Owner{Cmd: cmd}
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "ready %d %d", &o.Leader, &o.PID); err != nil || serr != nil || o.PID == 0 {
		o.abort()
		t.Fatalf("owner said %q (%v)", line, err)
	}
	if o.Pidfd, err = unix.PidfdOpen(o.PID, 0); err != nil {
		o.abort()
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(o.Pidfd) })
	return o
}

// Fatalf ends the test after killing the owner, for a check that fails
// while it still runs.
func (o *Owner) Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	o.abort()
	t.Fatalf(format, args...)
}

func (o *Owner) abort() {
	o.Cmd.Process.Kill()
	o.Cmd.Wait()
}

// Kill9 kills the owner with SIGKILL and checks that the process the test
// is about outlived it: otherwise there is nothing left to reap and the
// test would show nothing.
func (o *Owner) Kill9(t testing.TB, what string) {
	t.Helper()
	if err := o.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	o.Cmd.Wait()
	if SigkillPending(t, o.PID) {
		t.Fatalf("the %s died with its owner: nothing left to reap, the test shows nothing", what)
	}
}

// AwaitReaped checks that the process the test is about was sent SIGKILL
// (it is killed here otherwise, and the test fails) and waits for its end.
func (o *Owner) AwaitReaped(t testing.TB, what string) {
	t.Helper()
	if !SigkillPending(t, o.PID) {
		syscall.Kill(o.PID, syscall.SIGKILL)
		t.Fatalf("the %s %d of a killed FreeCode process was not reaped", what, o.PID)
	}
	AwaitExit(t, o.Pidfd)
}
