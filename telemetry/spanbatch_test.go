package telemetry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// batchedSpans makes n spans through a tracer provider on b.
func batchedSpans(tp *sdktrace.TracerProvider, n int) {
	for range n {
		_, s := tp.Tracer("test").Start(context.Background(), "span")
		s.End()
	}
}

// awaitSpans waits (bounded) until exp holds n spans.
func awaitSpans(t *testing.T, exp *tracetest.InMemoryExporter, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(exp.GetSpans()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d spans exported, want %d", len(exp.GetSpans()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Spans go out when a batch is full, on the schedule, and on Shutdown;
// ForceFlush sends what is kept at once; the OTEL_BSP_* variables set the
// sizes and the schedule as they do the SDK's.
func TestSpanBatcher(t *testing.T) {
	env := map[string]string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4", "OTEL_BSP_SCHEDULE_DELAY": "3600000"}
	exp := tracetest.NewInMemoryExporter()
	cnt := &countingExporter{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(newSpanBatcher(cnt, func(k string) string { return env[k] })))

	batchedSpans(tp, 3)
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported before a batch was full or its time came", n)
	}
	batchedSpans(tp, 1) // the fourth fills the batch
	awaitSpans(t, exp, 4)

	batchedSpans(tp, 2)
	if err := tp.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 6 {
		t.Errorf("after ForceFlush %d spans exported, want 6", n)
	}
	batchedSpans(tp, 1)
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	// (The in-memory exporter forgets its spans when shut down: counted.)
	if cnt.exported != 7 || !cnt.shut {
		t.Errorf("after Shutdown %d spans exported (want all 7, the last one too), exporter shut down: %v", cnt.exported, cnt.shut)
	}
	batchedSpans(tp, 1) // after Shutdown: not kept, no panic

	// The schedule: a short OTEL_BSP_SCHEDULE_DELAY sends a span alone.
	exp = tracetest.NewInMemoryExporter()
	tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(newSpanBatcher(exp, func(k string) string {
		return map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "10"}[k]
	})))
	defer tp.Shutdown(context.Background())
	batchedSpans(tp, 1)
	awaitSpans(t, exp, 1)
}

// blockingExporter fails every export, counting what it was given; its
// first export waits for release, having said so on entered.
type blockingExporter struct {
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	n                int
}

func (f *blockingExporter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	f.once.Do(func() {
		close(f.entered)
		<-f.release
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n += len(s)
	return errors.New("collector unavailable")
}
func (f *blockingExporter) Shutdown(context.Context) error { return nil }

// A full queue drops spans and says how many; an export that fails goes
// to OpenTelemetry's error handler (Start's: the log), and an export that
// hangs never blocks a span's end.
func TestSpanBatcherDropsAndTells(t *testing.T) {
	handled := handledErrors(t)
	exp := &blockingExporter{entered: make(chan struct{}), release: make(chan struct{})}
	env := map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "5", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "100", "OTEL_BSP_SCHEDULE_DELAY": "3600000"}
	b := newSpanBatcher(exp, func(k string) string { return env[k] })
	if b.maxBatch != 5 {
		t.Errorf("batch size %d: want it cut to the queue's 5", b.maxBatch)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	batchedSpans(tp, 5) // a full batch: its export starts, and hangs
	<-exp.entered
	batchedSpans(tp, 8) // 5 kept meanwhile, 3 dropped
	if d := b.spans.dropped.Load(); d != 3 {
		t.Errorf("%d dropped, want 3", d)
	}
	close(exp.release)
	// The 5 kept go out from the schedule's loop (the batch filled) or
	// from Shutdown, whichever comes first: either way, before it returns.
	_ = tp.Shutdown(t.Context())
	joined := strings.Join(handled(), "\n")
	if !strings.Contains(joined, "collector unavailable") || !strings.Contains(joined, "3 spans dropped: the export queue was full") {
		t.Errorf("the error handler was told:\n%s", joined)
	}
	if exp.n != 10 {
		t.Errorf("the exporter was given %d spans, want the 5 of the first batch and the 5 kept", exp.n)
	}
}

// countingExporter counts what it is given and whether it was shut down.
type countingExporter struct {
	sdktrace.SpanExporter
	mu       sync.Mutex
	exported int
	shut     bool
}

func (c *countingExporter) ExportSpans(ctx context.Context, s []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	c.exported += len(s)
	c.mu.Unlock()
	return c.SpanExporter.ExportSpans(ctx, s)
}

func (c *countingExporter) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.shut = true
	c.mu.Unlock()
	return c.SpanExporter.Shutdown(ctx)
}

// handledErrors has OpenTelemetry's error handler keep the messages it
// is handed until the test ends, and returns what it kept so far.
func handledErrors(t *testing.T) func() []string {
	var mu sync.Mutex
	var msgs []string
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, err.Error())
	}))
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(msgs)
	}
}
