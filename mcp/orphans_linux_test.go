package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// sigkillPending reports whether pid is gone, a zombie, or has a SIGKILL
// on its way: the kernel delivers that one for sure.
func sigkillPending(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "State":
			if strings.HasPrefix(strings.TrimSpace(v), "Z") {
				return true
			}
		case "ShdPnd", "SigPnd":
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}

// awaitExit waits until a process that is not our child has exited.
func awaitExit(t *testing.T, pidfd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}

// TestReapOrphansAfterKill9: a FreeCode process killed with SIGKILL leaves
// its server's child behind (Pdeathsig takes only the direct child); the
// next start reaps it, and leaves alone a recorded group whose leader's pid
// now belongs to a process that started at another time.
func TestReapOrphansAfterKill9(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command(exe)
	owner.Env = append(os.Environ(), testOwnerEnv+"="+dir)
	owner.Stderr = os.Stderr
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var leader, child int
	if _, serr := fmt.Sscanf(line, "ready %d %d", &leader, &child); err != nil || serr != nil || child == 0 {
		owner.Process.Kill()
		owner.Wait()
		t.Fatalf("owner said %q (%v)", line, err)
	}
	pidfd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)

	// A bystander in a group of its own, and a dead owner's record that
	// names its pid with another start time: a pid reused since.
	bystander := exec.Command("sleep", "1000")
	bystander.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()
	st, ok := procStat(bystander.Process.Pid)
	if !ok {
		t.Fatal("cannot read the bystander's /proc stat")
	}
	reused := runRecord{
		Version: 1, BootID: bootID(), Owner: procID{PID: 1, Start: 1}, // pid 1 started at another time: dead
		Groups: []procGroup{{Leader: procID{PID: st.id.PID, Start: st.id.Start + 1}, Session: st.session}},
	}
	b, _ := json.Marshal(reused)
	if err := os.WriteFile(filepath.Join(dir, "1.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	owner.Wait()
	if sigkillPending(t, child) {
		t.Fatal("the server's child died with its owner: nothing left to reap, the test shows nothing")
	}

	err = ReapOrphans(dir, nil)
	stopRecording()
	if err != nil {
		t.Fatal(err)
	}
	if !sigkillPending(t, child) {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the orphaned child %d of a killed FreeCode process was not reaped", child)
	}
	awaitExit(t, pidfd)
	if sigkillPending(t, bystander.Process.Pid) {
		t.Errorf("the bystander %d, whose pid a stale record named with another start time, was killed", bystander.Process.Pid)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("run records left after reaping: %v", left)
	}
}

// stopRecording undoes what ReapOrphans set up, for the tests that follow.
func stopRecording() {
	recorderMu.Lock()
	recorder = nil
	recorderMu.Unlock()
}

func TestParseStat(t *testing.T) {
	st, ok := parseStat(42, "42 (a (b) c) S 1 40 41 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0")
	if !ok || st.ppid != 1 || st.pgrp != 40 || st.session != 41 || st.id != (procID{42, 12345}) || st.zombie {
		t.Errorf("parseStat = %+v, %v", st, ok)
	}
}
