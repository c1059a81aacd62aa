package otelset

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// What a tool call's telemetry costs the call is what is done on its
// path. The orchestrator and the MCP client keep a call's timeline there
// as plain values (times, outcomes, the span IDs they draw) and make its
// spans and measurements through the OpenTelemetry API afterwards, with
// Later: FreeCode's tracer provider (package telemetry) runs that work on
// the goroutine that already hands the ended spans to the exporters,
// beside the next calls, many calls' at a time. A span made later takes
// the IDs drawn on the path (ContextWithDrawn), which the trace context
// sent to a server and the audit trail name.

// Laterer is a tracer provider that runs work later, beside the calls:
// FreeCode's (package telemetry). Its tracers give a span started on a
// context of ContextWithDrawn the IDs drawn for it.
type Laterer interface {
	// Later runs f on the provider's own goroutine, soon (FreeCode's: within
	// about 20 ms), and before a flush or a shutdown of the provider
	// exports what ended. After shutdown, f runs at once.
	Later(f func())
	// Draw is the span context of a span to be started later under
	// parent (invalid: a root), as its tracers' Start would make it: the
	// parent's trace or a new one, a new span ID, and the sampler's
	// decision in its flags and trace state, which the provider's
	// samplers make of the parent and the trace ID alone.
	Draw(parent trace.SpanContext) trace.SpanContext
}

// Later runs f beside the calls if tp is a Laterer, else at once.
func Later(tp trace.TracerProvider, f func()) {
	if l, ok := tp.(Laterer); ok {
		l.Later(f)
		return
	}
	f()
}

type drawnKey struct{}

// ContextWithDrawn returns ctx asking the tracer that starts a span on it
// to give the span the IDs of sc, drawn on a call's path for a span made
// later: its span ID, and its trace ID if the span is a root. A Laterer's
// tracers do; another tracer draws its own.
func ContextWithDrawn(ctx context.Context, sc trace.SpanContext) context.Context {
	return context.WithValue(ctx, drawnKey{}, sc)
}

// Drawn is the span context ctx asks a span to take (ContextWithDrawn),
// if any.
func Drawn(ctx context.Context) (trace.SpanContext, bool) {
	sc, ok := ctx.Value(drawnKey{}).(trace.SpanContext)
	return sc, ok && sc.IsValid()
}

// NewSpanID draws a span ID, as the SDK's ID generator does: random, never
// all zeros.
func NewSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// Child is the span context of a span drawn on the path under parent:
// parent's trace, flags and trace state, a new span ID. With an invalid
// parent there is no trace to join, and it is invalid too.
func Child(parent trace.SpanContext) trace.SpanContext {
	if !parent.IsValid() {
		return trace.SpanContext{}
	}
	return parent.WithSpanID(NewSpanID()).WithRemote(false)
}
