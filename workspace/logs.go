package workspace

import (
	"time"

	"golang.org/x/time/rate"

	"github.com/freecode/freecode/mcp"
)

// A server's log lines (its stderr, its MCP notifications/message) are
// published for frontends to show, as *LogEvent. A server can write
// faster than anyone reads, and log events take the bounded queue's path,
// where a flood would push out the events that matter (tools changed,
// problems): so each server gets a token bucket, and the lines beyond it
// are counted, not published.
const (
	// LogRate is the lines a second a server's log may sustain; what it
	// writes beyond that (and beyond logBurst at once) is dropped and
	// counted (LogEvent.Dropped).
	LogRate  = 100
	logBurst = 200 // lines at once per server
)

// logBucket is one server's share of the log.
type logBucket struct {
	lim     *rate.Limiter
	dropped int         // lines dropped since the last event
	source  string      // the source of the last line dropped
	report  *time.Timer // set while drops wait for a line to be told with
}

// onLog is the Manager's report of a log line, from a Conn goroutine.
func (w *Workspace) onLog(l mcp.Log) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	if w.logClosed {
		return
	}
	b := w.logBuckets[l.Server]
	if b == nil {
		b = &logBucket{lim: rate.NewLimiter(LogRate, logBurst)}
		w.logBuckets[l.Server] = b
	}
	if !b.lim.Allow() {
		b.dropped++
		b.source = l.Source
		if b.report == nil {
			// If the server falls silent, the drops are told on their own
			// once a line could pass again.
			b.report = time.AfterFunc(time.Second/LogRate, func() { w.reportDrops(l.Server) })
		}
		return
	}
	if b.report != nil {
		b.report.Stop()
		b.report = nil
	}
	w.events.publish(&LogEvent{Log: l, Dropped: b.dropped})
	b.dropped = 0
}

// reportDrops publishes the drops of a server that fell silent.
func (w *Workspace) reportDrops(server string) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	b := w.logBuckets[server]
	if w.logClosed || b == nil || b.report == nil {
		return
	}
	b.report = nil
	if b.dropped > 0 {
		w.events.publish(&LogEvent{Log: mcp.Log{Server: server, Source: b.source, Time: time.Now()}, Dropped: b.dropped})
		b.dropped = 0
	}
}

// closeLogs stops publishing log lines.
func (w *Workspace) closeLogs() {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.logClosed = true
	for _, b := range w.logBuckets {
		if b.report != nil {
			b.report.Stop()
		}
	}
}
