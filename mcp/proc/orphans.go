package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/freecode/freecode/internal/atomicfile"
)

// A server runs in a process group of its own, and a clean stop kills the
// whole group. A FreeCode process that is killed outright (kill -9, the OOM
// killer) stops nothing: on Linux Pdeathsig takes the server's leader with
// it, but what the leader started (npx → sh → node, whatever sh -c runs)
// lives on under init. So each FreeCode process records the groups it
// starts, in a small file of its own, and the next one to start reaps the
// groups whose recorder is dead.
//
// A process that left its server's group (a daemon's double fork and
// setsid()) is out of reach of the group's signals: on Linux it is adopted
// by this process, a child subreaper (orphans_escape_linux.go), and
// recorded as an escapee as soon as it is seen adopted, so that the next
// FreeCode process reaps it, and what it started, too.
//
// A process is known by its pid and its start time (and the records by the
// boot they were made in), never by its pid alone: a pid that was reused
// since is left alone.

// runRecord is the file one FreeCode process keeps in the run directory,
// <pid>.json.
type runRecord struct {
	Version int         `json:"version"`
	BootID  string      `json:"bootID"` // records of another boot are stale
	Owner   procID      `json:"owner"`
	Groups  []procGroup `json:"groups"`
	// Escapees are the processes this one adopted that left a server's
	// group and session, oldest first.
	Escapees []procID `json:"escapees,omitempty"`
	// Placeholders are the empty files and directories this process's
	// sandboxes put in projects and have not removed (placeholders.go).
	Placeholders []placeholderRecord `json:"placeholders,omitempty"`
	// Bound are the protected paths this process's sandboxes bind and
	// did not make, which may be another's placeholders.
	Bound []string `json:"bound,omitempty"`
}

// maxEscapees bounds the escapees one record holds: a server that spawns
// daemons without end cannot grow the file without end.
const maxEscapees = 256

// procID identifies a process beyond its pid: pids are reused, a pid and a
// start time (clock ticks since boot) are not.
type procID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// procGroup is one server's process group: its leader, and the session
// it runs in.
type procGroup struct {
	Leader  procID `json:"leader"`
	Session int    `json:"session"`
}

// recorder writes this process's run record; nil until ReapOrphans names
// the directory.
var (
	recorderMu sync.Mutex
	recorder   *runRecorder
)

type runRecorder struct {
	path   string
	record runRecord
}

// ReapOrphans kills what earlier FreeCode processes started and left
// behind when they were killed, and from then on records the server
// process groups this process starts, so that the next one can do the
// same for it. dir is the run directory (the CLI uses "run" beside its
// config file; files there are 0600, one per FreeCode process). Call it
// once at startup, before any server starts.
//
// A record whose owner still runs (same pid, same start time) is left
// alone; so is a group whose leader's pid now belongs to another process.
// A group whose leader is gone is reaped member by member: only processes
// in that group and session that started after the leader. An escapee is
// reaped, with the processes below it that started after it, only if its
// pid still runs the process of its start time. Where process start times
// cannot be read (outside Linux) nothing is recorded or reaped. The
// placeholders a dead process's sandboxes left in projects are removed
// where still as made (placeholders.go).
func ReapOrphans(dir string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	self, ok := selfID()
	if !ok {
		return nil
	}
	boot := bootID()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading run directory: %w", err)
	}
	var (
		live        = map[int]bool{}    // group leaders that live owners recorded
		liveEscapee = map[procID]bool{} // escapees that live owners recorded
		liveHeld    = map[string]bool{} // paths live owners' sandboxes made or bind
		stale       []string
		dead        []runRecord
		otherBoot   []runRecord
	)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var rec runRecord
		if err := json.Unmarshal(b, &rec); err != nil || rec.Version != 1 {
			logger.Warn("unreadable run record left alone", "path", path)
			continue
		}
		switch {
		case rec.BootID != boot:
			stale = append(stale, path)        // a reboot ended everything in it
			otherBoot = append(otherBoot, rec) // but what it left in projects
		case rec.Owner == self, procAlive(rec.Owner):
			for _, g := range rec.Groups {
				live[g.Leader.PID] = true
			}
			for _, id := range rec.Escapees {
				liveEscapee[id] = true
			}
			for _, p := range rec.Placeholders {
				liveHeld[p.Path] = true
			}
			for _, p := range rec.Bound {
				liveHeld[p] = true
			}
		default:
			stale = append(stale, path)
			dead = append(dead, rec)
		}
	}
	for _, rec := range dead {
		for _, g := range rec.Groups {
			if live[g.Leader.PID] {
				continue
			}
			if n := reapGroup(g); n > 0 {
				logger.Warn("reaped the processes of a server whose FreeCode process was killed",
					"owner", rec.Owner.PID, "pgid", g.Leader.PID, "processes", n)
			}
		}
		for _, id := range rec.Escapees {
			if liveEscapee[id] {
				continue
			}
			if n := reapEscapee(id); n > 0 {
				logger.Warn("reaped a process that left a server's group, whose FreeCode process was killed",
					"owner", rec.Owner.PID, "pid", id.PID, "processes", n)
			}
		}
	}
	for _, rec := range append(dead, otherBoot...) {
		removePlaceholders(rec, liveHeld, logger) // their servers are gone now
	}
	for _, path := range stale {
		os.Remove(path)
	}

	recorderMu.Lock()
	defer recorderMu.Unlock()
	next := &runRecorder{
		path:   filepath.Join(dir, strconv.Itoa(self.PID)+".json"),
		record: runRecord{Version: 1, BootID: boot, Owner: self},
	}
	if recorder != nil && recorder.path != next.path {
		// Called again with another directory: the groups running now move
		// with the record.
		next.record.Groups = recorder.record.Groups
		next.record.Escapees = recorder.record.Escapees
		next.record.Placeholders = recorder.record.Placeholders
		next.record.Bound = recorder.record.Bound
		os.Remove(recorder.path)
		next.write()
	} else if recorder != nil {
		next = recorder
	}
	recorder = next
	return nil
}

// RecordAdopted records at once, in this process's run record, the
// processes that left a running server's group and session and were
// adopted by this process: the strays a running server may have started
// (see orphans_escape_linux.go). The Conn calls it at the end of a connect,
// since a daemon a server starts on its way up must be recorded before
// anything can kill this process; the subreaper looks every second anyway.
// It does nothing outside Linux, or before ReapOrphans.
func RecordAdopted() { recordAdopted() }

// PokeAdoptions asks for the look RecordAdopted makes soon, off the
// caller's path and at most every 100 ms: a tool call may have started a
// daemon, and thousands of calls a second must not each cost a look.
func PokeAdoptions() { pokeAdoptions() }

// ClaimLaunch marks a launch of a program that is no server (a browser,
// for a sign-in) as running from now until the returned function is
// called: processes that start meanwhile and end up adopted by this
// process are the launch's, never a server's, so no server's stop ends
// them.
func ClaimLaunch() (done func()) { return claimLaunch() }

// reapGroup SIGKILLs the members of g that are g's: in its process group
// and session, started no earlier than its leader. If the leader's pid
// runs another process now, the group is not g's any more and nothing is
// killed. It returns how many processes it killed.
func reapGroup(g procGroup) int {
	members := groupProcs(g.Leader.PID)
	for _, m := range members {
		if m.id.PID == g.Leader.PID && m.id.Start != g.Leader.Start {
			return 0
		}
	}
	n := 0
	for _, m := range members {
		if m.session != g.Session || m.id.Start < g.Leader.Start {
			continue
		}
		if killProc(m.id.PID) == nil {
			n++
		}
	}
	return n
}

// recordGroup adds the group that pid leads to this process's run record.
func recordGroup(pid int) {
	updateRecord(func(r *runRecord) bool {
		st, ok := procStat(pid)
		if ok {
			r.Groups = append(r.Groups, procGroup{Leader: st.id, Session: st.session})
		}
		return ok
	})
}

// forgetGroup drops the group that pid led from the run record: it is gone.
func forgetGroup(pid int) {
	updateRecord(func(r *runRecord) bool {
		r.Groups = slices.DeleteFunc(r.Groups, func(g procGroup) bool { return g.Leader.PID == pid })
		return true
	})
}

// updateRecord changes this process's run record with change, under its
// lock, and writes it if change says it changed it; before ReapOrphans
// there is no record, and it does nothing.
func updateRecord(change func(r *runRecord) bool) {
	recorderMu.Lock()
	defer recorderMu.Unlock()
	if recorder != nil && change(&recorder.record) {
		recorder.write()
	}
}

// recording reports whether this process keeps a run record.
func recording() bool {
	recorderMu.Lock()
	defer recorderMu.Unlock()
	return recorder != nil
}

// recordEscapees makes ids, oldest first, this process's escapees in its
// run record, and writes the record if that changes it.
func recordEscapees(ids []procID) {
	if len(ids) > maxEscapees {
		ids = ids[:maxEscapees]
	}
	recorderMu.Lock()
	defer recorderMu.Unlock()
	if recorder == nil || slices.Equal(recorder.record.Escapees, ids) {
		return
	}
	recorder.record.Escapees = slices.Clone(ids)
	recorder.write()
}

// write replaces the record file, or removes it when nothing is left in
// it. Failures cost only the reaping after a kill -9, so they are not
// errors of the server's start.
func (r *runRecorder) write() {
	if len(r.record.Groups) == 0 && len(r.record.Escapees) == 0 && len(r.record.Placeholders) == 0 && len(r.record.Bound) == 0 {
		os.Remove(r.path)
		return
	}
	b, err := json.Marshal(r.record)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return
	}
	atomicfile.Write(r.path, b, 0o600)
}

// procSet is a set of processes, by pid.
type procSet map[int]procID

// procInfo is what the reaper reads of a running process.
type procInfo struct {
	id      procID
	ppid    int
	pgrp    int
	session int
	zombie  bool
}

// procAlive reports whether the process id names still runs.
func procAlive(id procID) bool {
	st, ok := procStat(id.PID)
	return ok && !st.zombie && st.id.Start == id.Start
}

// selfID returns this process's id.
func selfID() (procID, bool) {
	st, ok := procStat(os.Getpid())
	return st.id, ok
}
