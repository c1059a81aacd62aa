package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
)

// On a pipe, a drawing is printed only when it differs from the last: a
// status told again, or one of a change the lines do not show (a tool
// count of a stopped server), printed the same lines again under a new
// time before.
func TestWatchPipePrintsChangesOnly(t *testing.T) {
	w := &watcher{problems: map[string]protocol.ConfigProblems{}}
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateConnected, PID: 42, ToolCount: 3})
	w.draw(&b, now)
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateConnected, PID: 42, ToolCount: 3})
	w.draw(&b, now.Add(time.Second))
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateStopped})
	w.draw(&b, now.Add(2*time.Second))
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateStopped, LastError: ""})
	w.draw(&b, now.Add(3*time.Second))
	want := "-- 15:04:05 --\n✓ a: connected, pid 42, 3 tools\n" + "-- 15:04:07 --\n- a: stopped\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
