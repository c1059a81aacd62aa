package proc

import (
	"cmp"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A server's process group holds what the server starts, unless a process
// leaves it: a daemon's double fork and setsid() put it in a session and
// group of its own, out of reach of the group's signals, and once its
// parent exits it is an orphan. While this process runs servers it is a
// child subreaper: orphans below it are reparented to it, not to init, so
// an escapee stays in reach, and its zombie is ours to reap.
//
// A server's stop ends its escapees:
//   - its descendants by ppid links, read (twice, for forks in flight)
//     before its group is signalled: processes that left the group while
//     their parent lives;
//   - strays: children of this process in a session of their own. Servers
//     run in this process's session and nothing else here starts children
//     in another one, so a stray is an orphan that was reparented here. Its
//     parent is gone, so which server it came from is unknown: a stray is
//     the server's when the server is the only running one that started
//     no later than it, and no browser launch (OpenBrowser) ran when it
//     started; else the stop of the last such server ends it;
//   - everything below those.
//
// They get SIGTERM, SIGKILL after the stop's grace, and are reaped. A
// process is known by its pid and start time, and is signalled through a
// pidfd opened and then checked against that start time, so a pid reused
// meanwhile is never hit.
//
// If this process is killed outright, its strays go to init, out of reach
// of ReapOrphans's group reaping. So the strays a running server may have
// started are recorded in the run record as escapees (recordEscapees) as
// they are seen adopted: the kernel says nothing when it reparents a
// process, so this process looks, cheaply (its own children lists), once
// a connect is done, after tool calls (at most every adoptPokeGap) and
// every adoptScan while servers run. The next FreeCode process reaps the
// recorded escapees.
//
// Only adopted children are reaped, never one this process started itself
// (exec.Cmd's Wait would then fail): a zombie child is reaped when it is a
// stray, or a member of a running server's group other than its leader.
// Reaping is done under adoptMu only, so an adopted zombie's pid, which
// nothing else waits for, cannot be freed and reused under our feet.

var (
	adoptMu sync.Mutex
	// leaders are the running servers' group leaders, by pid, from their
	// start until their stop has ended their escapees.
	leaders  = map[int]procID{}
	launches []launchWindow // browser launches, newest last
	reaper   *zombieReaper  // while leaders is not empty
)

// launchWindow is when a browser launch ran, in clock ticks since boot
// (the unit of a process's start time); end is 0 while it runs.
type launchWindow struct{ start, end uint64 }

// maxLaunches bounds the launch windows kept.
const maxLaunches = 32

var subreaperOnce sync.Once

// startServerCmd starts a server's command with this process a child
// subreaper, and counts the server as running until stopEscapees.
func startServerCmd(cmd *exec.Cmd) error {
	subreaperOnce.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	st, ok := procStat(pid)
	if !ok {
		st.id = procID{PID: pid} // start 0: it claims every stray, which keeps them from the other servers
	}
	adoptMu.Lock()
	defer adoptMu.Unlock()
	leaders[pid] = st.id
	if reaper == nil {
		reaper = startZombieReaper()
	}
	return nil
}

// claimLaunch marks a browser launch as running from now until the
// returned function is called: processes that start meanwhile and end up
// adopted by this process are the browser's, never a server's.
func claimLaunch() (done func()) {
	adoptMu.Lock()
	defer adoptMu.Unlock()
	if len(launches) == maxLaunches {
		launches = launches[1:]
	}
	start := nowTicks()
	launches = append(launches, launchWindow{start: start})
	return func() {
		adoptMu.Lock()
		defer adoptMu.Unlock()
		for i := range launches {
			if launches[i].start == start && launches[i].end == 0 {
				launches[i].end = nowTicks() + 1
				return
			}
		}
	}
}

// nowTicks is the time since boot in clock ticks (USER_HZ, 100 on Linux),
// the unit of /proc/<pid>/stat's start time.
func nowTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano()) / 1e7
}

// escapeSnapshot lists the descendants of the server leader pid, read
// before its group is signalled: once the leader is gone they are
// reparented and the links to it lost.
func escapeSnapshot(pid int) procSet {
	adoptMu.Lock()
	leader, ok := leaders[pid]
	adoptMu.Unlock()
	if !ok {
		return nil
	}
	s := procSet{pid: leader}
	s.addDescendants(procTable())
	s.addDescendants(procTable())
	delete(s, pid)
	return s
}

// addDescendants adds to s the processes of table below those of s that
// table shows alive with the same start time.
func (s procSet) addDescendants(table []procInfo) {
	kids := map[int][]procID{}
	var queue []int
	for _, p := range table {
		kids[p.ppid] = append(kids[p.ppid], p.id)
		if id, ok := s[p.id.PID]; ok && id == p.id {
			queue = append(queue, p.id.PID)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if _, ok := s[k.PID]; !ok {
				s[k.PID] = k
				queue = append(queue, k.PID)
			}
		}
	}
}

// stopEscapees ends what the server leader pid left running outside its
// group, snap being escapeSnapshot's list: SIGTERM, termGrace, SIGKILL,
// and reaps them. The server no longer counts as running after it.
func stopEscapees(pid int, snap procSet, termGrace time.Duration, logger *slog.Logger) {
	defer func() {
		adoptMu.Lock()
		delete(leaders, pid)
		recordAdoptedLocked() // what was this server's is gone, or no longer claimed
		var r *zombieReaper
		if len(leaders) == 0 {
			r, reaper = reaper, nil
		}
		adoptMu.Unlock()
		if r != nil {
			r.stop()
		}
	}()
	victims := procSet{}
	for k, id := range snap {
		victims[k] = id
	}
	table := procTable()
	self, sid := os.Getpid(), selfSession()
	adoptMu.Lock()
	for _, p := range table {
		if p.ppid == self && p.session != sid && !p.zombie && soleClaimantLocked(p.id.Start) == pid {
			victims[p.id.PID] = p.id
		}
	}
	adoptMu.Unlock()
	if len(victims) == 0 {
		return
	}
	victims.addDescendants(table)
	hs := map[int]*procHandle{}
	defer func() {
		for _, h := range hs {
			h.close()
		}
	}()
	signalAll(victims, hs, unix.SIGTERM)
	if !allExited(hs, termGrace) {
		// What they forked while handling SIGTERM goes too.
		victims.addDescendants(procTable())
		victims.addDescendants(procTable())
		signalAll(victims, hs, unix.SIGKILL)
		if !allExited(hs, 5*time.Second) {
			logger.Warn("processes a stopped server left outside its group still exist", "pgid", pid)
		}
	}
	adoptMu.Lock()
	defer adoptMu.Unlock()
	for _, h := range hs {
		h.reapLocked(self)
	}
	reapAdoptedLocked()
}

// soleClaimantLocked returns the pid of the only running server that may
// have started a stray that started at start, or 0.
func soleClaimantLocked(start uint64) int {
	if inLaunchLocked(start) {
		return 0
	}
	claimant := 0
	for pid, id := range leaders {
		if id.Start <= start {
			if claimant != 0 {
				return 0
			}
			claimant = pid
		}
	}
	return claimant
}

// inLaunchLocked reports whether a process that started at start may be a
// browser launch's.
func inLaunchLocked(start uint64) bool {
	for _, w := range launches {
		if w.start <= start && (w.end == 0 || start <= w.end) {
			return true
		}
	}
	return false
}

// claimedLocked reports whether a stray that started at start may be a
// running server's: one started no later, and no browser launch then.
func claimedLocked(start uint64) bool {
	if inLaunchLocked(start) {
		return false
	}
	for _, id := range leaders {
		if id.Start <= start {
			return true
		}
	}
	return false
}

// adoptScan is how often, while servers run, this process looks for
// strays to record: the longest a daemon a server started in the
// background stays unrecorded.
const adoptScan = time.Second

// recordAdopted records the strays a running server may have started as
// this process's escapees in its run record (see ReapOrphans).
func recordAdopted() {
	adoptMu.Lock()
	defer adoptMu.Unlock()
	recordAdoptedLocked()
}

func recordAdoptedLocked() {
	if !recording() {
		return // nothing to keep them in
	}
	var ids []procID
	if len(leaders) > 0 {
		sid := selfSession()
		for _, p := range childrenOf(os.Getpid()) {
			if p.session != sid && !p.zombie && claimedLocked(p.id.Start) {
				ids = append(ids, p.id)
			}
		}
		slices.SortFunc(ids, func(a, b procID) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.PID, b.PID)) })
	}
	recordEscapees(ids)
}

// adoptPokeGap is the least time between two looks that tool calls ask
// for: thousands of calls a second cost a look every adoptPokeGap.
const adoptPokeGap = 100 * time.Millisecond

// adoptPoke holds the tool calls' requests for a look (pokeAdoptions).
var adoptPoke = newPoker()

// pokeAdoptions asks for a look at the strays soon, off the caller's path:
// a tool call may have started a daemon.
func pokeAdoptions() { adoptPoke.poke() }

// poker passes requests for a look to the reaper: a request made while one
// waits for its look wakes nobody, so that thousands of calls a second wake
// the reaper once per look, not once per call.
type poker struct {
	c       chan struct{} // a request; buffered 1
	pending atomic.Bool   // a request was made since the last look began
}

func newPoker() *poker { return &poker{c: make(chan struct{}, 1)} }

// poke requests a look.
func (p *poker) poke() {
	if p.pending.Load() || !p.pending.CompareAndSwap(false, true) {
		return
	}
	select {
	case p.c <- struct{}{}:
	default:
	}
}

// looking is called as a look begins: it covers what was requested
// before.
func (p *poker) looking() { p.pending.Store(false) }

// childrenOf lists pid's children from its threads' children lists, which
// cost a read per thread, not one per process of the system; without
// them (a kernel built without CONFIG_PROC_CHILDREN) from the whole table.
func childrenOf(pid int) []procInfo {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if errors.Is(err, fs.ErrNotExist) && t.Name() == strconv.Itoa(pid) {
			return slices.DeleteFunc(procTable(), func(p procInfo) bool { return p.ppid != pid })
		}
		for _, f := range strings.Fields(string(b)) {
			k, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if st, ok := procStat(k); ok && st.ppid == pid {
				out = append(out, st)
			}
		}
	}
	return out
}

// reapEscapee SIGKILLs the escapee id, if its pid still runs the process
// of its start time, and the processes below it that started after it. It
// returns how many it killed.
func reapEscapee(id procID) int {
	if !procAlive(id) {
		return 0
	}
	victims := procSet{id.PID: id}
	victims.addDescendants(procTable())
	n := 0
	for pid, v := range victims {
		if pid != id.PID && v.Start < id.Start {
			continue
		}
		h := openProc(v)
		if !h.gone {
			h.signal(unix.SIGKILL)
			n++
		}
		h.close()
	}
	return n
}

// selfSession is this process's session id.
func selfSession() int {
	sid, _ := unix.Getsid(0)
	return sid
}

// reapAdopted reaps the zombies that were reparented to this process.
func reapAdopted() {
	adoptMu.Lock()
	defer adoptMu.Unlock()
	reapAdoptedLocked()
}

func reapAdoptedLocked() {
	self, sid := os.Getpid(), selfSession()
	for _, p := range procTable() {
		if !p.zombie || p.ppid != self {
			continue
		}
		if id, started := leaders[p.id.PID]; started && id == p.id {
			// A server's leader this process started: its cmd.Wait
			// reaps it and learns how it ended. Reaped here, that Wait
			// would fail and the exit code be lost (a leader that
			// calls setsid, bwrap's, is in another session).
			continue
		}
		_, leaderGroup := leaders[p.pgrp]
		if p.session != sid || leaderGroup && p.id.PID != p.pgrp {
			// An adopted child: nothing else waits for it, so its pid is
			// ours until this reaps it.
			var info unix.Siginfo
			_ = unix.Waitid(unix.P_PID, p.id.PID, &info, unix.WEXITED|unix.WNOHANG, nil)
		}
	}
}

// procHandle is a process to signal: a pidfd checked against the start
// time, or where pidfds are missing (kernels before 5.3) the pid.
type procHandle struct {
	id   procID
	fd   int // -1: no pidfd, signal by pid after a start time check
	gone bool
}

func openProc(id procID) *procHandle {
	fd, err := unix.PidfdOpen(id.PID, 0)
	if errors.Is(err, unix.ENOSYS) {
		return &procHandle{id: id, fd: -1, gone: !procAlive(id)}
	}
	if err != nil {
		return &procHandle{id: id, fd: -1, gone: true}
	}
	// The pidfd names one process for good: if that is still id, it
	// cannot be another's later.
	if st, ok := procStat(id.PID); !ok || st.id != id {
		unix.Close(fd)
		return &procHandle{id: id, fd: -1, gone: true}
	}
	return &procHandle{id: id, fd: fd}
}

func (h *procHandle) signal(sig unix.Signal) {
	switch {
	case h.gone:
	case h.fd >= 0:
		_ = unix.PidfdSendSignal(h.fd, sig, nil, 0)
	case procAlive(h.id):
		_ = unix.Kill(h.id.PID, sig)
	}
}

// exited reports whether the process has exited (a zombie has).
func (h *procHandle) exited() bool {
	switch {
	case h.gone:
	case h.fd >= 0:
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		h.gone = err == nil && n > 0
	default:
		h.gone = !procAlive(h.id)
	}
	return h.gone
}

// reapLocked reaps the process if it exited as a child of this process
// (an adopted one: no victim is a child this process started).
func (h *procHandle) reapLocked(self int) {
	var info unix.Siginfo
	if h.fd >= 0 {
		_ = unix.Waitid(unix.P_PIDFD, h.fd, &info, unix.WEXITED|unix.WNOHANG, nil)
		return
	}
	if st, ok := procStat(h.id.PID); ok && st.id == h.id && st.zombie && st.ppid == self {
		_ = unix.Waitid(unix.P_PID, h.id.PID, &info, unix.WEXITED|unix.WNOHANG, nil)
	}
}

func (h *procHandle) close() {
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
}

// signalAll sends sig to every victim, opening handles for new ones.
func signalAll(victims procSet, hs map[int]*procHandle, sig unix.Signal) {
	for pid, id := range victims {
		h, ok := hs[pid]
		if !ok {
			h = openProc(id)
			hs[pid] = h
		}
		h.signal(sig)
	}
}

// allExited waits up to d for every handle's process to exit.
func allExited(hs map[int]*procHandle, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		done := true
		for _, h := range hs {
			if !h.exited() {
				done = false
				break
			}
		}
		if done {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombieReaper reaps adopted zombies as they appear (on SIGCHLD), so an
// escapee that exits while its server runs leaves none behind, and keeps
// the escapees in the run record (every adoptScan, and when poked).
type zombieReaper struct {
	sigs chan os.Signal
	quit chan struct{}
	done chan struct{}
}

func startZombieReaper() *zombieReaper {
	r := &zombieReaper{sigs: make(chan os.Signal, 1), quit: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(r.sigs, unix.SIGCHLD)
	go func() {
		defer close(r.done)
		ticker := time.NewTicker(adoptScan)
		defer ticker.Stop()
		var last time.Time
		var later <-chan time.Time // a poke that came too soon after the last look
		adoptPoke.looking()        // a poke an earlier reaper left unanswered is taken again
		for {
			select {
			case <-r.sigs:
				reapAdopted()
			case <-ticker.C:
			case <-adoptPoke.c:
				if wait := adoptPokeGap - time.Since(last); wait > 0 {
					if later == nil {
						later = time.After(wait)
					}
					continue
				}
			case <-later:
				later = nil
			case <-r.quit:
				return
			}
			adoptPoke.looking()
			recordAdopted()
			last = time.Now()
		}
	}()
	return r
}

func (r *zombieReaper) stop() {
	signal.Stop(r.sigs)
	close(r.quit)
	<-r.done
}
