package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/audit"
)

// trailDelay is how long the trail's writer gathers lines before it
// writes them: the calls of that time (a model's batch, several
// frontends' calls) cost one lock of the trail's directory and one write,
// rather than one each, and a call hands its line over without waking
// anyone. A line reaches the file within about this much of its call's
// answer; Close writes what is left.
const trailDelay = 5 * time.Millisecond

// trail is the workspace's audit trail. Lines are written by a goroutine
// of its own, in the order they were handed over, so that a call's answer
// does not wait for its line: what a call costs the trail is an append
// under a mutex, and the hashing and the write happen beside the next
// calls. No line is dropped; close writes every line handed over before.
type trail struct {
	logger *slog.Logger
	args   atomic.Bool // record argument values, not only their hash
	// events, set before the first line, are told of each call's line
	// as the writer makes it, whether or not the line can be written;
	// nil: telemetry's events are off.
	events func(context.Context, audit.Event, time.Time)

	startOnce sync.Once
	kick      chan struct{} // the writer has lines to gather; buffered 1
	now       chan struct{} // write without waiting for trailDelay; buffered 1
	done      chan struct{} // closed when the writer is gone

	// mu guards pending and closed.
	mu      sync.Mutex
	pending []trailItem
	closed  bool

	// Only the writer uses these.
	dir  string     // where the trail is kept now
	max  int64      // the size its file is rotated at; 0: audit's default
	log  *audit.Log // open on dir; nil until the first line, or after a failure
	warn bool       // a failure to write was logged; not again until one succeeds
}

// trailItem is what the writer is handed: lines, a new directory, or a
// channel to close once what came before is written.
type trailItem struct {
	es      []audit.Event
	calls   []pendingCall // lines of calls, finished by the writer
	dir     *string       // with max
	max     int64
	flushed chan struct{}
}

// pendingCall is a call's line but for its arguments' hash (and values),
// which the writer computes.
type pendingCall struct {
	e    audit.Event
	args json.RawMessage
	at   time.Time // when the call was over, its event's time
	// span is the call's execute_tool span, which its event names.
	span trace.SpanContext
}

func (t *trail) start() {
	t.startOnce.Do(func() {
		t.kick = make(chan struct{}, 1)
		t.now = make(chan struct{}, 1)
		t.done = make(chan struct{})
		go t.writer()
	})
}

// configure points the trail at dir, recording argument values or not
// and rotating its file at max bytes (the managed policy's audit block);
// lines handed over before go where the trail was. The caller holds
// reloadMu.
func (t *trail) configure(dir string, args bool, max int64) {
	t.args.Store(args)
	t.send(trailItem{dir: &dir, max: max}, false)
}

// record hands es to the writer.
func (t *trail) record(es ...audit.Event) {
	t.send(trailItem{es: es}, false)
}

// flush returns once what was handed over before is written.
func (t *trail) flush() {
	ch := make(chan struct{})
	if t.send(trailItem{flushed: ch}, true) {
		<-ch
	}
}

// send hands it to the writer, and reports whether it did: after close,
// nothing more is taken. urgent has the writer write without gathering.
func (t *trail) send(it trailItem, urgent bool) bool {
	t.start()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	first := len(t.pending) == 0
	t.pending = append(t.pending, it)
	t.mu.Unlock()
	if first {
		signal(t.kick)
	}
	if urgent {
		signal(t.now)
	}
	return true
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// close writes what was handed over, then closes the trail's file.
func (t *trail) close() {
	t.start()
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	signal(t.kick)
	signal(t.now)
	<-t.done
}

// writer gathers what it is handed for trailDelay and writes it, until
// the trail is closed and nothing is left.
func (t *trail) writer() {
	defer close(t.done)
	wait := time.NewTimer(trailDelay)
	for {
		<-t.kick
		wait.Reset(trailDelay)
		select {
		case <-wait.C:
		case <-t.now:
			wait.Stop()
		}
		t.mu.Lock()
		items, closed := t.pending, t.closed
		t.pending = nil
		t.mu.Unlock()
		t.writeItems(items)
		if closed {
			if t.log != nil {
				t.log.Close()
				t.log = nil
			}
			return
		}
	}
}

// writeItems writes items in order: the lines between two changes of
// directory in one write.
func (t *trail) writeItems(items []trailItem) {
	var es []audit.Event
	for _, it := range items {
		switch {
		case it.flushed != nil:
			t.write(es)
			es = nil
			close(it.flushed)
		case it.dir != nil:
			t.write(es)
			es = nil
			if (*it.dir != t.dir || it.max != t.max) && t.log != nil {
				t.log.Close()
				t.log = nil
			}
			t.dir, t.max = *it.dir, it.max
		case it.calls != nil:
			for _, c := range it.calls {
				e := c.e
				e.ArgsSHA256 = audit.ArgsHash(c.args)
				if e.Args != nil {
					e.Args = redactArgs(c.args, nil)
				}
				if t.events != nil {
					// The event carries the trace and span id of the call's span.
					t.events(trace.ContextWithSpanContext(context.Background(), c.span), e, c.at)
				}
				es = append(es, e)
			}
		default:
			es = append(es, it.es...)
		}
	}
	t.write(es)
}

// write appends es; a failure is logged, once until a line is written.
func (t *trail) write(es []audit.Event) {
	if len(es) == 0 || t.dir == "" {
		return
	}
	err := errors.New("closed")
	if t.log == nil {
		t.log, err = audit.Open(t.dir, &audit.Options{MaxFileBytes: t.max})
	}
	if t.log != nil {
		err = t.log.RecordAll(context.Background(), es)
		if err != nil {
			t.log.Close()
			t.log = nil // opened again at the next line
		}
	}
	switch {
	case err != nil && !t.warn:
		t.warn = true
		t.logger.Error("the audit trail cannot be written; calls go on unrecorded until it can", "dir", t.dir, "error", err)
	case err == nil && t.warn:
		t.warn = false
		t.logger.Info("the audit trail is written again", "dir", t.dir)
	}
}
