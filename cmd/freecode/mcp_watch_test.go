package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
)

// `mcp status --watch` on a pipe prints the status, then again at every
// change the sidecar tells of, a line per server, until Ctrl-C: a stop,
// a start, a server added to the config.
func TestStatusWatch(t *testing.T) {
	e := newLiveEnv(t)
	e.startSidecar(t)
	e.mustRun(t, "mcp", "start", "demo")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut notifyBuffer
	done := make(chan int, 1)
	go func() { done <- runContext(ctx, &out, &errOut, "--config", e.cfg, "mcp", "status", "--watch") }()
	out.await(t, "✓ demo: connected, pid ")
	out.await(t, "Ctrl-C to stop")

	from := len(out.String())
	e.mustRun(t, "mcp", "stop", "demo")
	out.awaitFrom(t, from, "- demo: stopped")
	from = len(out.String())
	e.mustRun(t, "mcp", "start", "demo")
	out.awaitFrom(t, from, "✓ demo: connected, pid ")
	from = len(out.String())
	e.mustRun(t, "mcp", "add", "later", "local", "--", demoServer)
	out.awaitFrom(t, from, "later: ")
	e.mustRun(t, "mcp", "remove", "later")
	// Each drawing has a line per server, and the last comes to have no
	// "later".
	lastDrawing := func(text string) string {
		drawings := strings.Split(text, "\n-- ")
		return drawings[len(drawings)-1]
	}
	out.awaitFunc(t, "a drawing without later", func(text string) bool {
		last := lastDrawing(text)
		return strings.Contains(last, "\n") && !strings.Contains(last, "later")
	})
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("status --watch interrupted: exit %d\n%s", code, errOut.String())
		}
	case <-time.After(hangGuard):
		t.Fatal("status --watch did not end when interrupted")
	}
	if last := lastDrawing(out.String()); !strings.Contains(last, "✓ demo: connected") || !strings.Contains(last, "noisy: ") {
		t.Errorf("the last drawing:\n%s", last)
	}
}

// With no sidecar, --watch says so, with status's exit code.
func TestStatusWatchNoSidecar(t *testing.T) {
	e := newLiveEnv(t)
	out, _, code := e.run(t, "mcp", "status", "--watch")
	if code != exitNoSidecar || !strings.Contains(out, "No sidecar is running") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// On a terminal each drawing replaces the last: the cursor goes up the
// lines drawn and clears down before the next.
func TestWatchRedrawsInPlace(t *testing.T) {
	w := &watcher{tty: true, problems: map[string]protocol.ConfigProblems{}}
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateConnecting})
	w.apply(protocol.ServerStatus{Name: "b", State: protocol.StateFailed, LastError: "exited with code 3: no token\nmore"})
	var b bytes.Buffer
	now := time.Now()
	w.draw(&b, now)
	w.apply(protocol.ServerStatus{Name: "a", State: protocol.StateConnected, PID: 42, ToolCount: 3})
	w.apply(protocol.ServerStatus{Name: "b", State: protocol.StateRemoved})
	w.draw(&b, now)
	want := "… a: connecting\n✗ b: failed — exited with code 3: no token\n" + "\x1b[2A\r\x1b[J" + "✓ a: connected, pid 42, 3 tools\n"
	if b.String() != want {
		t.Errorf("drawn %q, want %q", b.String(), want)
	}
}

// A server waiting to retry says so with its countdown; what a server
// wrote is escaped.
func TestStatusLine(t *testing.T) {
	now := time.Now()
	st := protocol.ServerStatus{Name: "gh", State: protocol.StateConnecting, LastError: "exited with code 1: \x1b[31mbad",
		Retry: &protocol.RetryStatus{Attempt: 2, Max: 6, At: now.Add(4 * time.Second)}}
	got := statusLine(&st, now)
	if got != `… gh: connecting — exited with code 1: \x1b[31mbad (retrying 2/6 in 4 s)` {
		t.Errorf("got %q", got)
	}
}
