package telemetry

import (
	"cmp"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
)

// spanQueue is a bounded list of ended spans that a goroutine takes in
// turns: the span batcher's (spans to export) and deferredProvider's
// (spans to make). A span past the bound is dropped and counted, one
// after stop is not kept. Its methods are safe for concurrent use.
type spanQueue[T any] struct {
	max int
	// what names what is queued in the error handler's message: "spans"
	// unless set.
	what    string
	dropped atomic.Int64

	mu      sync.Mutex // guards items and stopped
	items   []T
	stopped bool
}

// push keeps v and returns how many are kept now, or 0 when v was not
// kept (the queue is full: v is counted as dropped; or stopped).
func (q *spanQueue[T]) push(v T) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return 0
	}
	if len(q.items) >= q.max {
		q.dropped.Add(1)
		return 0
	}
	q.items = append(q.items, v)
	return len(q.items)
}

// take returns what is kept, and keeps nothing.
func (q *spanQueue[T]) take() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// stop keeps nothing pushed after it, and reports whether the queue was
// stopped already.
func (q *spanQueue[T]) stop() (already bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	already, q.stopped = q.stopped, true
	return already
}

// empty reports whether nothing is kept.
func (q *spanQueue[T]) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

// isStopped reports whether stop was called.
func (q *spanQueue[T]) isStopped() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopped
}

// reportDropped tells OpenTelemetry's error handler (Start's: the log)
// how many spans were dropped since it last did.
func (q *spanQueue[T]) reportDropped() {
	if d := q.dropped.Swap(0); d > 0 {
		otel.Handle(&droppedError{n: d, what: cmp.Or(q.what, "spans")})
	}
}

// droppedError tells the error handler how many spans a full queue
// dropped.
type droppedError struct {
	n    int64
	what string
}

func (e *droppedError) Error() string {
	return strconv.FormatInt(e.n, 10) + " " + e.what + " dropped: the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE)"
}
