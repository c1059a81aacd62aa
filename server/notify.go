package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// A session's notifications are written by one goroutine, its forwarder:
// the workspace's events in the order they happened, and the progress of
// its own calls. A frontend that reads slowly holds up only its forwarder,
// while the workspace's queue for it coalesces statuses and drops what
// overflows, and its outbox keeps only the latest progress of each call.
// Neither a server's Conn goroutine nor a tool call waits for it.

// outbox holds the progress notifications waiting for a session's
// forwarder, only the latest of each call.
type outbox struct {
	kick chan struct{} // something was queued; buffered 1
	done chan struct{} // closed by close

	// mu guards the fields below.
	mu       sync.Mutex
	closed   bool
	progress map[string]protocol.ToolProgress // by call id
	order    []string                         // call ids, oldest first
}

func newOutbox() *outbox {
	return &outbox{kick: make(chan struct{}, 1), done: make(chan struct{}), progress: make(map[string]protocol.ToolProgress)}
}

// putProgress queues p in place of the call's progress not yet sent. It
// never blocks.
func (o *outbox) putProgress(p protocol.ToolProgress) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if _, queued := o.progress[p.CallID]; !queued {
		o.order = append(o.order, p.CallID)
	}
	o.progress[p.CallID] = p
	o.mu.Unlock()
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// forget drops the progress not yet sent of calls that have their
// results: it would come after them.
func (o *outbox) forget(callIDs []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, id := range callIDs {
		if _, queued := o.progress[id]; queued {
			delete(o.progress, id)
			o.order = slices.DeleteFunc(o.order, func(q string) bool { return q == id })
		}
	}
}

// takeProgress takes what is queued, oldest first.
func (o *outbox) takeProgress() []protocol.ToolProgress {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]protocol.ToolProgress, 0, len(o.order))
	for _, id := range o.order {
		out = append(out, o.progress[id])
		delete(o.progress, id)
	}
	o.order = o.order[:0]
	return out
}

// close stops the forwarder.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.closed = true
		close(o.done)
	}
}

// forwarder is a session's notification writer.
type forwarder struct {
	sess *session
	w    *workspace.Workspace
	// hashes are the definitions' hashes the frontend was last told of,
	// or that it found when it connected.
	hashes protocol.Hashes
	// problems are the files the frontend was told have problems.
	problems map[string]bool
	// reviews are the servers the frontend was told have tools awaiting
	// review (review.go).
	reviews map[string]bool
	// rulesHash is the hash of the project's rules awaiting review the
	// frontend was last told of, "" for none (project.go).
	rulesHash string
}

// forward writes the session's notifications until the session or the
// workspace ends. It starts by telling the frontend where things stand:
// every server's status and the files that have problems. Statuses that
// changed meanwhile follow, so the last status it gets of a server is its
// current one.
func (sess *session) forward(w *workspace.Workspace) {
	sub := w.Subscribe(&workspace.SubscribeOptions{Logs: true, Reviews: true, Tasks: true})
	defer sub.Close()
	f := &forwarder{sess: sess, w: w, problems: make(map[string]bool), reviews: make(map[string]bool)}
	f.hashes, _ = currentHashes(w)
	f.resync()
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			f.event(ev)
		case <-sess.out.kick:
			for _, p := range sess.out.takeProgress() {
				sess.notify(protocol.NotifyToolsProgress, &p)
			}
		case <-sess.out.done:
			return
		}
	}
}

// event turns one workspace event into notifications.
func (f *forwarder) event(ev workspace.Event) {
	switch ev := ev.(type) {
	case *workspace.StatusEvent:
		st := wire.ServerStatus(ev.Status)
		if ev.Removed {
			st.State = protocol.StateRemoved
		}
		f.sess.notify(protocol.NotifyServersStatus, &st)
	case *workspace.ToolsChangedEvent:
		tc := wire.ToolsChanged(ev)
		if tc.Hashes == f.hashes {
			return // it was told of these already, at a resync
		}
		f.hashes = tc.Hashes
		f.sess.notify(protocol.NotifyToolsChanged, &tc)
	case *workspace.ProblemsEvent:
		f.sendProblems(*ev)
	case *workspace.LogEvent:
		f.sendLog(ev)
	case *workspace.ReviewEvent:
		f.sendReviews(ev.Server, ev.Reviews)
	case *workspace.TaskEvent:
		// As this frontend may see it: a task of another's says only that
		// it runs.
		ti, err := wire.TaskInfo(ev.Task, f.sess.asker())
		if err != nil {
			f.sess.logger.Warn("a task's news could not be sent", "task", ev.Task.TaskID, "error", err)
			return
		}
		f.sess.notify(protocol.NotifyTasksChanged, &ti)
	case *workspace.ResourcesChangedEvent:
		lc := wire.ResourcesChanged(ev)
		f.sess.notify(protocol.NotifyResourcesChanged, &lc)
	case *workspace.PromptsChangedEvent:
		lc := wire.PromptsChanged(ev)
		f.sess.notify(protocol.NotifyPromptsChanged, &lc)
	case *workspace.RulesChangedEvent:
		// Which tools run unasked (ToolInfo.allowedBy) may have changed:
		// the frontend reads the tools again.
		f.sess.notify(protocol.NotifyToolsChanged, &protocol.ToolsChanged{Hashes: f.hashes, Reason: "rules"})
	case *workspace.ProjectEvent:
		f.sendRulesReview(ev.Project.PendingRules)
	case *workspace.MissedEvent:
		f.sess.logger.Warn("the frontend fell behind; resyncing it", "missed", ev.Count)
		// A change of a server's resources or prompts may be among what
		// was missed: the frontend reads every server's again.
		for _, st := range f.resync() {
			f.sess.notify(protocol.NotifyResourcesChanged, &protocol.ListChanged{Server: st.Name, Reason: "resync"})
			f.sess.notify(protocol.NotifyPromptsChanged, &protocol.ListChanged{Server: st.Name, Reason: "resync"})
		}
		if h, err := currentHashes(f.w); err == nil && h != f.hashes {
			f.hashes = h
			f.sess.notify(protocol.NotifyToolsChanged, &protocol.ToolsChanged{Hashes: h, Reason: "resync"})
		}
	}
	// Rules and trust have no notification of their own: a frontend
	// reads them (freecode/permissions, freecode/project) when it shows
	// them, and the tools they let run unasked after
	// freecode/tools/changed (above). What of the rules awaits review does
	// (ProjectEvent above): it asks the user to act.
}

// resync sends every server's status and every file's problems as they
// are now, and the fix of the files it was told about that have none. It
// returns the statuses it sent. A server whose tools are being registered
// is told of by the status that follows (workspace.ShownStatuses).
func (f *forwarder) resync() []mcp.Status {
	sts := f.w.ShownStatuses()
	for _, st := range sts {
		ws := wire.ServerStatus(st)
		f.sess.notify(protocol.NotifyServersStatus, &ws)
	}
	now := make(map[string]bool)
	for _, pe := range f.w.Problems() {
		now[pe.Path] = true
		f.sendProblems(pe)
	}
	for path := range f.problems {
		if !now[path] {
			f.sendProblems(workspace.ProblemsEvent{Path: path})
		}
	}
	f.resyncReviews()
	f.sendRulesReview(f.w.Project().PendingRules)
	return sts
}

// sendProblems sends a file's problems as freecode/config/problems, and
// as window/logMessage for an editor that shows only those.
func (f *forwarder) sendProblems(pe workspace.ProblemsEvent) {
	cp := wire.ConfigProblems(pe)
	path, probs := pe.Path, pe.Problems
	typ, lines := lsp.MessageTypeInfo, []string{path + ": no problems"}
	if len(probs) > 0 {
		typ, lines = lsp.MessageTypeWarning, lines[:0]
	}
	for _, p := range probs {
		if p.Severity == workspace.SeverityError {
			typ = lsp.MessageTypeError
		}
		lines = append(lines, problemLine(path, p))
	}
	f.problems[path] = len(probs) > 0
	f.sess.notify(protocol.NotifyConfigProblems, &cp)
	f.sess.logMessage(typ, strings.Join(lines, "\n"))
}

// problemLine is a problem as a compiler prints one: path:line:column:
// message, which editors turn into a link.
func problemLine(path string, p workspace.Problem) string {
	var b strings.Builder
	b.WriteString(p.Position(path))
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Message)
	if p.Severity == workspace.SeverityWarning {
		b.WriteString(" (warning)")
	}
	return b.String()
}

// sendLog sends a server's log line as freecode/servers/log, after a line
// of the sidecar's own saying how many lines it dropped before it.
func (f *forwarder) sendLog(ev *workspace.LogEvent) {
	l := wire.ServerLog(ev.Log)
	if ev.Dropped > 0 {
		dropped := l
		dropped.Level = protocol.LevelWarning
		dropped.Message = fmt.Sprintf("freecode: %d lines of this server's log were dropped: it wrote more than the sidecar passes on (%d lines a second)", ev.Dropped, workspace.LogRate)
		f.sess.notify(protocol.NotifyServersLog, &dropped)
	}
	if l.Message == "" {
		return
	}
	f.sess.notify(protocol.NotifyServersLog, &l)
}

// currentHashes returns the definitions' hashes now.
func currentHashes(w *workspace.Workspace) (protocol.Hashes, error) {
	m := make(map[defscache.Format]string)
	for _, f := range defscache.Formats() {
		e, _, err := w.Definitions(context.Background(), f)
		if err != nil {
			return protocol.Hashes{}, err
		}
		m[f] = e.Hash
	}
	return wire.Hashes(m), nil
}
