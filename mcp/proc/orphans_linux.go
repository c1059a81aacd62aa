package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat reads pid's start time, process group and session from
// /proc/<pid>/stat.
func procStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	return parseStat(pid, string(b))
}

// parseStat reads a /proc/<pid>/stat line. The command name, in
// parentheses, may hold spaces and parentheses itself: fields are counted
// from the last ')'. After it come state (field 3), ppid, pgrp (5),
// session (6), … starttime (22).
func parseStat(pid int, stat string) (procInfo, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err0 := strconv.Atoi(f[1])
	pgrp, err1 := strconv.Atoi(f[2])
	session, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{id: procID{PID: pid, Start: start}, ppid: ppid, pgrp: pgrp, session: session, zombie: f[0] == "Z"}, true
}

// groupProcs lists the live (not zombie) processes of process group pgid.
func groupProcs(pgid int) []procInfo {
	var out []procInfo
	for _, st := range procTable() {
		if st.pgrp == pgid && !st.zombie {
			out = append(out, st)
		}
	}
	return out
}

// procTable reads the stat of every process, zombies included. It is not
// one instant's picture: processes come and go while it reads.
func procTable() []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// bootID names this boot: pids and start times mean nothing across boots.
func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

func killProc(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
