package proc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/freecode/freecode/internal/proctest"
)

// TestReapOrphansAfterKill9: a FreeCode process killed with SIGKILL leaves
// its server's child behind (Pdeathsig takes only the direct child); the
// next start reaps it, and leaves alone a recorded group whose leader's pid
// now belongs to a process that started at another time.
func TestReapOrphansAfterKill9(t *testing.T) {
	dir := t.TempDir()
	owner := proctest.StartOwner(t, testOwnerEnv+"="+dir)

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

	owner.Kill9(t, "server's child")

	err := ReapOrphans(dir, nil)
	stopRecording()
	if err != nil {
		t.Fatal(err)
	}
	owner.AwaitReaped(t, "orphaned server child")
	if proctest.SigkillPending(t, bystander.Process.Pid) {
		t.Errorf("the bystander %d, whose pid a stale record named with another start time, was killed", bystander.Process.Pid)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("run records left after reaping: %v", left)
	}
}

// TestReapEscapeesAfterKill9: a FreeCode process running a Manager whose
// server started a daemon (double fork, setsid: out of the server's group
// and session, adopted by FreeCode) is killed with SIGKILL; the daemon
// goes to init and lives on. The next start reaps it, and leaves alone a
// process whose pid a dead owner's record names as an escapee with another
// start time: a pid reused since.
func TestReapEscapeesAfterKill9(t *testing.T) {
	dir := t.TempDir()
	owner := proctest.StartOwner(t, testOwnerEnv+"="+dir, testOwnerEscapeEnv+"="+filepath.Join(t.TempDir(), "daemon"))
	daemon := owner.PID
	st, ok := procStat(daemon)
	if !ok || st.session != daemon || st.ppid != owner.Cmd.Process.Pid {
		owner.Fatalf(t, "the daemon %d is not a session leader adopted by its FreeCode process %d: %+v", daemon, owner.Cmd.Process.Pid, st)
	}

	// A bystander in a session of its own, as a daemon is, and a dead
	// owner's record that names its pid as an escapee with another start
	// time.
	bystander := exec.Command("sleep", "1000")
	bystander.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { bystander.Process.Kill(); bystander.Wait() }()
	bst, ok := procStat(bystander.Process.Pid)
	if !ok {
		t.Fatal("cannot read the bystander's /proc stat")
	}
	reused := runRecord{
		Version: 1, BootID: bootID(), Owner: procID{PID: 1, Start: 1}, // pid 1 started at another time: dead
		Escapees: []procID{{PID: bst.id.PID, Start: bst.id.Start + 1}},
	}
	b, _ := json.Marshal(reused)
	if err := os.WriteFile(filepath.Join(dir, "1.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	owner.Kill9(t, "daemon")

	err := ReapOrphans(dir, nil)
	stopRecording()
	if err != nil {
		t.Fatal(err)
	}
	owner.AwaitReaped(t, "setsid daemon")
	if proctest.SigkillPending(t, bystander.Process.Pid) {
		t.Errorf("the bystander %d, whose pid a stale record named as an escapee with another start time, was killed", bystander.Process.Pid)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("run records left after reaping: %v", left)
	}
}

func TestSoleClaimant(t *testing.T) {
	tests := []struct {
		name     string
		leaders  map[int]procID
		launches []launchWindow
		start    uint64
		want     int
	}{
		{"the only server", map[int]procID{10: {10, 100}}, nil, 150, 10},
		{"before every server", map[int]procID{10: {10, 100}}, nil, 50, 0},
		{"two servers before it", map[int]procID{10: {10, 100}, 20: {20, 120}}, nil, 150, 0},
		{"one of two before it", map[int]procID{10: {10, 100}, 20: {20, 120}}, nil, 110, 10},
		{"same tick as a server", map[int]procID{10: {10, 100}, 20: {20, 150}}, nil, 150, 0},
		{"in a browser launch", map[int]procID{10: {10, 100}}, []launchWindow{{140, 160}}, 150, 0},
		{"after a browser launch", map[int]procID{10: {10, 100}}, []launchWindow{{140, 160}}, 170, 10},
		{"during a running launch", map[int]procID{10: {10, 100}}, []launchWindow{{140, 0}}, 900, 0},
		{"no server", nil, nil, 150, 0},
	}
	adoptMu.Lock()
	defer adoptMu.Unlock()
	savedLeaders, savedLaunches := leaders, launches
	defer func() { leaders, launches = savedLeaders, savedLaunches }()
	for _, tt := range tests {
		leaders, launches = tt.leaders, tt.launches
		if got := soleClaimantLocked(tt.start); got != tt.want {
			t.Errorf("%s: soleClaimant(%d) = %d, want %d", tt.name, tt.start, got, tt.want)
		}
	}
}

// TestNowTicks: the clock the launch windows use is the one of process
// start times.
func TestNowTicks(t *testing.T) {
	before := nowTicks()
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	st, ok := procStat(cmd.Process.Pid)
	after := nowTicks() + 1
	if !ok || st.id.Start < before || st.id.Start > after {
		t.Errorf("a process started between ticks %d and %d has start time %d", before, after, st.id.Start)
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
