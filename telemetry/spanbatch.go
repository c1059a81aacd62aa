package telemetry

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanBatcher is the span processor of FreeCode's traces: the SDK's
// batching (spans kept until a batch is full or the schedule delay
// passes, then exported together; a full queue drops), without waking a
// goroutine for each span that ends. The SDK's BatchSpanProcessor hands
// every span over a channel to its exporting goroutine, which a call's
// six spans wake six times, on the call's own path; here a span is
// appended under a lock and the exporting goroutine wakes when a batch
// is full or on its schedule, as the SDK's own log BatchProcessor does
// with records. (BenchmarkTelemetryHop: the sidecar's added CPU a call
// went from +114–128 µs to +72–86, the added p50 of calls back to back
// from +11.5–14.4 % to +7.4–11.4 %.) It reads the same variables as the SDK's:
// OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (milliseconds),
// OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
type spanBatcher struct {
	exp                     sdktrace.SpanExporter
	delay, timeout          time.Duration
	maxQueue, maxBatch      int
	dropped                 atomic.Int64
	full, stop, done, flush chan struct{}
	exportMu                sync.Mutex // one export at a time: the loop's or ForceFlush's

	mu    sync.Mutex // guards spans and stopped
	spans []sdktrace.ReadOnlySpan
	// stopped is set by Shutdown: later spans are not kept.
	stopped bool
}

// The SDK's defaults for the OTEL_BSP_* variables.
const (
	defaultBSPDelay    = 5000 * time.Millisecond
	defaultBSPTimeout  = 30000 * time.Millisecond
	defaultBSPQueue    = 2048
	defaultBSPMaxBatch = 512
)

func newSpanBatcher(exp sdktrace.SpanExporter, getenv func(string) string) *spanBatcher {
	b := &spanBatcher{
		exp:      exp,
		delay:    envMillis(getenv, "OTEL_BSP_SCHEDULE_DELAY", defaultBSPDelay),
		timeout:  envMillis(getenv, "OTEL_BSP_EXPORT_TIMEOUT", defaultBSPTimeout),
		maxQueue: envInt(getenv, "OTEL_BSP_MAX_QUEUE_SIZE", defaultBSPQueue),
		maxBatch: envInt(getenv, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", defaultBSPMaxBatch),
		full:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if b.maxBatch > b.maxQueue {
		b.maxBatch = b.maxQueue // as the SDK does
	}
	go b.loop()
	return b
}

// envInt is a positive integer variable, else def.
func envInt(getenv func(string) string, k string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv(k))); err == nil && n > 0 {
		return n
	}
	return def
}

// envMillis is a variable in milliseconds, else def.
func envMillis(getenv func(string) string, k string, def time.Duration) time.Duration {
	return time.Duration(envInt(getenv, k, int(def/time.Millisecond))) * time.Millisecond
}

func (b *spanBatcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps s for the next export; a full queue drops it.
func (b *spanBatcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	if len(b.spans) >= b.maxQueue {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.spans = append(b.spans, s)
	n := len(b.spans)
	b.mu.Unlock()
	if n == b.maxBatch {
		select {
		case b.full <- struct{}{}:
		default:
		}
	}
}

// loop exports on the schedule and whenever a batch is full, until
// Shutdown.
func (b *spanBatcher) loop() {
	defer close(b.done)
	t := time.NewTicker(b.delay)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-b.full:
		case <-b.stop:
			return
		}
		b.export(context.Background())
	}
}

// export sends what is kept, in batches of at most maxBatch, each within
// the export timeout; a failure goes to OpenTelemetry's error handler
// (Start's: the log).
func (b *spanBatcher) export(ctx context.Context) error {
	b.exportMu.Lock()
	defer b.exportMu.Unlock()
	b.mu.Lock()
	spans := b.spans
	b.spans = nil
	b.mu.Unlock()
	var first error
	for len(spans) > 0 {
		n := min(len(spans), b.maxBatch)
		ectx, cancel := context.WithTimeout(ctx, b.timeout)
		err := b.exp.ExportSpans(ectx, spans[:n])
		cancel()
		if err != nil {
			otel.Handle(err)
			if first == nil {
				first = err
			}
		}
		spans = spans[n:]
	}
	if d := b.dropped.Swap(0); d > 0 {
		otel.Handle(&droppedError{n: d})
	}
	return first
}

// droppedError tells the error handler how many spans a full queue
// dropped since the last export.
type droppedError struct{ n int64 }

func (e *droppedError) Error() string {
	return strconv.FormatInt(e.n, 10) + " spans dropped: the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE)"
}

// ForceFlush exports what is kept now.
func (b *spanBatcher) ForceFlush(ctx context.Context) error { return b.export(ctx) }

// Shutdown stops the schedule, exports what is kept and shuts the
// exporter down, within ctx.
func (b *spanBatcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	b.mu.Unlock()
	close(b.stop)
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := b.export(ctx)
	if serr := b.exp.Shutdown(ctx); err == nil {
		err = serr
	}
	return err
}

var _ sdktrace.SpanProcessor = (*spanBatcher)(nil)

// osGetenv is the process's environment, for the batcher of Start.
var osGetenv = os.Getenv
