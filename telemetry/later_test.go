package telemetry

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/otelset"
)

// A span made later takes the ID drawn on the call's path, under its
// parent's trace; a root drawn takes the trace drawn for it too.
func TestLaterSpansTakeTheIDsDrawn(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), 100, exp)
	tr := p.Tracer("scope")
	start := time.Now().Add(-time.Second)

	_, parent := tr.Start(context.Background(), "parent")
	drawn := otelset.Child(parent.SpanContext()) // on the path
	root := p.Draw(trace.SpanContext{})
	otelset.Later(p, func() {
		ctx := otelset.ContextWithDrawn(trace.ContextWithSpan(context.Background(), parent), drawn)
		_, s := tr.Start(ctx, "child", trace.WithTimestamp(start))
		s.End(trace.WithTimestamp(start.Add(time.Millisecond)))
		_, r := tr.Start(otelset.ContextWithDrawn(context.Background(), root), "root")
		r.End()
		parent.End()
	})
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		got[s.Name] = s
	}
	if len(got) != 3 {
		t.Fatalf("exported %v; want parent, child and root", exp.GetSpans())
	}
	c := got["child"]
	if !c.SpanContext.Equal(drawn) || c.Parent.SpanID() != parent.SpanContext().SpanID() || !c.StartTime.Equal(start) {
		t.Errorf("child %v under %v from %v; want %v under %v from %v", c.SpanContext, c.Parent.SpanID(), c.StartTime,
			drawn, parent.SpanContext().SpanID(), start)
	}
	r := got["root"]
	if !r.SpanContext.Equal(root) || r.Parent.IsValid() || root.TraceID() == parent.SpanContext().TraceID() || !root.IsSampled() {
		t.Errorf("root %v (parent %v); want %v, drawn in a trace of its own and sampled", r.SpanContext, r.Parent, root)
	}
}

// What Later is handed runs before a flush exports and at Shutdown, whose
// export holds the spans it made; handed over after Shutdown, it runs at
// once.
func TestLaterRunsBeforeFlushAndShutdown(t *testing.T) {
	exp := keptExporter{tracetest.NewInMemoryExporter()}
	p := newDeferredProvider(sdktrace.AlwaysSample(), 100, sdktrace.NewSimpleSpanProcessor(exp), nil, os.Getenv)
	tr := p.Tracer("scope")
	made := func(name string) func() {
		return func() {
			_, s := tr.Start(context.Background(), name)
			s.End()
		}
	}
	p.Later(made("flushed"))
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("%d spans exported by the flush; want 1", n)
	}
	for range 10 {
		p.Later(made("at shutdown"))
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range exp.GetSpans() {
		if s.Name == "at shutdown" {
			n++
		}
	}
	if n != 10 {
		t.Errorf("%d spans made by the work handed over before Shutdown exported; want 10", n)
	}
	ran := false
	p.Later(func() { ran = true })
	if !ran {
		t.Error("work handed over after Shutdown did not run at once")
	}
}

// Work handed over past the queue's bound is dropped and counted to the
// error handler as such; none is lost without a word.
func TestLaterQueueBound(t *testing.T) {
	dropped := handledErrors(t)
	p := newDeferredProvider(sdktrace.AlwaysSample(), 4, sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter()), nil, os.Getenv)
	var ran atomic.Int64
	// The first piece of work holds the goroutine that runs them until
	// all are handed over: the rest can only wait in the queue, or be
	// dropped.
	hold := make(chan struct{})
	p.Later(func() { <-hold; ran.Add(1) })
	const n = 1000
	for range n - 1 {
		p.Later(func() { ran.Add(1) })
	}
	close(hold)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	lost := int64(0)
	for _, d := range dropped() {
		var k int64
		if _, err := fmt.Sscanf(d, "%d calls' spans dropped", &k); err != nil {
			t.Errorf("error handler told %q", d)
		}
		lost += k
	}
	if ran.Load()+lost != n || lost == 0 {
		t.Errorf("%d ran and %d were dropped; want %d in all, some dropped", ran.Load(), lost, n)
	}
}

// Work handed over while the goroutine runs earlier work (after it took
// the queue) runs without a flush: the wake-up the loop forgets after a
// replay is not one it still needs.
func TestLaterHandedOverDuringARun(t *testing.T) {
	p := newTestDeferred(t, sdktrace.AlwaysSample(), 100, tracetest.NewNoopExporter())
	ran := make(chan struct{})
	p.Later(func() {
		_, s := p.Tracer("scope").Start(context.Background(), "made") // its end wakes the loop too
		s.End()
		p.Later(func() { close(ran) })
	})
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("work handed over during a run did not run without a flush")
	}
}

// Another tracer provider runs the work at once.
func TestLaterWithoutALaterer(t *testing.T) {
	ran := false
	otelset.Later(sdktrace.NewTracerProvider(), func() { ran = true })
	if !ran {
		t.Error("the SDK's provider: the work did not run at once")
	}
}

// keptExporter keeps what was exported after Shutdown (the in-memory
// exporter forgets it).
type keptExporter struct{ *tracetest.InMemoryExporter }

func (keptExporter) Shutdown(context.Context) error { return nil }
