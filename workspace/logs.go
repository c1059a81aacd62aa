package workspace

import (
	"sync"
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

// logRelay publishes the servers' log lines, each server within its
// bucket.
type logRelay struct {
	publish func(...Event)

	// mu guards the fields below. Log events are published under it, so
	// that a server's lines and its drop counts keep their order.
	mu      sync.Mutex
	buckets map[string]*logBucket // by server
	closed  bool
}

func newLogRelay(publish func(...Event)) *logRelay {
	return &logRelay{publish: publish, buckets: make(map[string]*logBucket)}
}

// logBucket is one server's share of the log.
type logBucket struct {
	lim     *rate.Limiter
	dropped int         // lines dropped since the last event
	source  string      // the source of the last line dropped
	report  *time.Timer // set while drops wait for a line to be told with
}

// onLog is the Manager's report of a log line (ConnOptions.OnLog), from a
// Conn goroutine.
func (r *logRelay) onLog(l mcp.Log) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	b := r.buckets[l.Server]
	if b == nil {
		b = &logBucket{lim: rate.NewLimiter(LogRate, logBurst)}
		r.buckets[l.Server] = b
	}
	// A line of the server's life (FreeCode's: starting, exited, gave up)
	// is never dropped: a server sends none of them, and the few there are
	// say what the user needs to know. It spends no token of the bucket.
	if l.Source == mcp.LogFreeCode {
		r.publish(&LogEvent{Log: l})
		return
	}
	if !b.lim.Allow() {
		b.dropped++
		b.source = l.Source
		if b.report == nil {
			// If the server falls silent, the drops are told on their own
			// once a line could pass again.
			b.report = time.AfterFunc(time.Second/LogRate, func() { r.reportDrops(l.Server) })
		}
		return
	}
	if b.report != nil {
		b.report.Stop()
		b.report = nil
	}
	r.publish(&LogEvent{Log: l, Dropped: b.dropped})
	b.dropped = 0
}

// reportDrops publishes the drops of a server that fell silent.
func (r *logRelay) reportDrops(server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[server]
	if r.closed || b == nil || b.report == nil {
		return
	}
	b.report = nil
	if b.dropped > 0 {
		r.publish(&LogEvent{Log: mcp.Log{Server: server, Source: b.source, Time: time.Now()}, Dropped: b.dropped})
		b.dropped = 0
	}
}

// Close stops publishing log lines; a drop report whose timer fires
// after publishes nothing.
func (r *logRelay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, b := range r.buckets {
		if b.report != nil {
			b.report.Stop()
		}
	}
}
