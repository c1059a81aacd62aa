package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
)

// watcher keeps the live status of `freecode mcp status --watch`: the
// sidecar's servers as its notifications change them, a line each, drawn
// again on every change. On a terminal each drawing replaces the last;
// elsewhere (a pipe, a file) each that differs from the last is printed
// after it, under a line with the time, so that a script sees every
// change in order, and each once.
type watcher struct {
	names    []string // only these servers; all without
	notes    chan frontend.Notification
	stop     chan struct{} // closed when the command returns
	servers  []protocol.ServerStatus
	problems map[string]protocol.ConfigProblems // by path
	tty      bool
	drawn    int    // lines of the last drawing, on a terminal
	last     string // the last drawing but its time line, elsewhere
}

func newWatcher(names []string, out io.Writer) *watcher {
	w := &watcher{names: names, notes: make(chan frontend.Notification, 64), stop: make(chan struct{}), problems: map[string]protocol.ConfigProblems{}}
	if f, ok := out.(*os.File); ok {
		w.tty = ttyFd(f.Fd())
	}
	return w
}

// take is the Client's notification callback: the statuses and the config
// problems, in order; it blocks until the command takes one or returns.
func (w *watcher) take(n frontend.Notification) {
	if n.Method != protocol.NotifyServersStatus && n.Method != protocol.NotifyConfigProblems {
		return
	}
	select {
	case w.notes <- n:
	case <-w.stop:
	}
}

// watch draws the status, then again at every change, until ctx is done
// (Ctrl-C) or the sidecar goes. While a server waits to retry, a
// terminal's drawing is redone each second, for its countdown.
func (w *watcher) watch(ctx context.Context, sc *sidecar, out io.Writer) error {
	sts, err := sc.Servers(ctx)
	if err != nil {
		return sc.explain(ctx, err)
	}
	if _, err := selectStatuses(sts, w.names, "the sidecar", false); err != nil {
		return err
	}
	for _, st := range sts {
		w.apply(st)
	}
	for _, p := range sc.project.Problems {
		w.problems[p.Path] = p
	}
	if !w.tty {
		fmt.Fprintf(out, "%s; Ctrl-C to stop\n", sc.describe())
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		w.draw(out, time.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-sc.Done():
			return errors.New("the sidecar closed the connection: it stopped")
		case <-tick.C:
			if !w.tty || !slices.ContainsFunc(w.servers, func(st protocol.ServerStatus) bool { return st.Retry != nil }) {
				continue
			}
		case n := <-w.notes:
			w.note(n)
			// What came meanwhile is one drawing more, not one each.
			for drained := false; !drained; {
				select {
				case n := <-w.notes:
					w.note(n)
				default:
					drained = true
				}
			}
		}
	}
}

// note applies a notification.
func (w *watcher) note(n frontend.Notification) {
	switch n.Method {
	case protocol.NotifyServersStatus:
		var st protocol.ServerStatus
		if json.Unmarshal(n.Params, &st) == nil {
			w.apply(st)
		}
	case protocol.NotifyConfigProblems:
		var p protocol.ConfigProblems
		if json.Unmarshal(n.Params, &p) != nil {
			return
		}
		if len(p.Problems) == 0 {
			delete(w.problems, p.Path)
		} else {
			w.problems[p.Path] = p
		}
	}
}

// apply takes a server's new status: a removed server goes.
func (w *watcher) apply(st protocol.ServerStatus) {
	if len(w.names) > 0 && !slices.Contains(w.names, st.Name) {
		return
	}
	i := slices.IndexFunc(w.servers, func(s protocol.ServerStatus) bool { return s.Name == st.Name })
	switch {
	case st.State == protocol.StateRemoved && i >= 0:
		w.servers = slices.Delete(w.servers, i, i+1)
	case st.State == protocol.StateRemoved:
	case i >= 0:
		w.servers[i] = st
	default:
		w.servers = append(w.servers, st)
	}
}

// draw prints the status: on a terminal over the last drawing; elsewhere
// only when it changed, since a notification that changes nothing shown
// (a status told again, a change of what the lines leave out) would
// print the same lines under a new time.
func (w *watcher) draw(out io.Writer, now time.Time) {
	var b strings.Builder
	files := make([]protocol.ConfigProblems, 0, len(w.problems))
	for _, p := range w.problems {
		files = append(files, p)
	}
	slices.SortFunc(files, func(a, b protocol.ConfigProblems) int { return strings.Compare(a.Path, b.Path) })
	printProblems(&b, files)
	if len(w.servers) == 0 {
		b.WriteString("No MCP servers.\n")
	}
	for i := range w.servers {
		b.WriteString(statusLine(&w.servers[i], now))
		b.WriteByte('\n')
	}
	text := b.String()
	if !w.tty {
		if text == w.last {
			return
		}
		w.last = text
		text = fmt.Sprintf("-- %s --\n", now.Format("15:04:05")) + text
	}
	if w.tty {
		if w.drawn > 0 {
			// Up to the first line of the last drawing, and clear from
			// there down.
			fmt.Fprintf(out, "\x1b[%dA\r\x1b[J", w.drawn)
		}
		w.drawn = strings.Count(text, "\n")
	}
	io.WriteString(out, text)
}

// statusLine is a server's status in one line, as the page shows it in
// its list: the mark and state, the pid, the tools, and why it is not up
// (its last error's first line, the retry awaited). What the server or
// the project wrote is escaped.
func statusLine(st *protocol.ServerStatus, now time.Time) string {
	mark := stateMarks[st.State]
	if mark == "" {
		mark = "?"
	}
	parts := []string{string(st.State)}
	if st.PID != 0 {
		parts = append(parts, "pid "+strconv.Itoa(st.PID))
	}
	if st.State == protocol.StateConnected || st.State == protocol.StateIdle || st.ToolCount > 0 {
		parts = append(parts, strconv.Itoa(st.ToolCount)+" tools")
	}
	line := fmt.Sprintf("%s %s: %s", mark, termtext.Escape(st.Name), termtext.Escape(strings.Join(parts, ", ")))
	if st.LastError != "" && st.State != protocol.StateConnected {
		first, _, _ := strings.Cut(st.LastError, "\n")
		line += " — " + termtext.Escape(first)
	}
	if st.Retry != nil {
		line += " (" + retryText(st.Retry, now) + ")"
	}
	return line
}
