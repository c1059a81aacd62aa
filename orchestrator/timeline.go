package orchestrator

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/otelset"
)

// A batch's telemetry is kept on the calls' path as plain values: when
// each step started and ended, what it decided, the span IDs drawn for
// it. Its spans and measurements are made of them through the
// OpenTelemetry API afterwards (make), handed to otelset.Later: FreeCode's
// tracer provider makes them beside the next calls, many batches' at a
// time, with the IDs drawn here, which the servers (Call.Trace) and the
// audit trail (CallRecord.Span) were told; the batch's span too, whose
// IDs and sampling the provider draws on the path (otelset.Laterer.Draw:
// whether the batch is traced, which the trace context sent on says).
// With another provider (a test's SDK provider), the batch's span is
// started on the path and the calls' spans are made at the batch's end,
// with that provider's IDs.

// batchTrace is a batch's telemetry; nil when telemetry is off and no
// trace context came with the batch.
type batchTrace struct {
	in *instruments
	// parent holds the frontend's trace context, if it sent one.
	parent context.Context
	// sc is the batch's span context; or, when nothing is traced, the
	// frontend's, which goes on to the servers and the audit trail.
	sc trace.SpanContext
	// own is the batch's span as the path recorded it; span is the
	// batch's span once made, or started on the path by a provider that
	// is not an otelset.Laterer.
	own  pendingSpan
	span trace.Span
	// recording: the spans are kept (tracing, and the batch is sampled).
	recording bool
	// calls are the calls' timelines, made in one go, by the calls'
	// index in the batch; when nothing is kept, every call has bare,
	// which only carries the frontend's trace context on.
	calls []callTrace
	bare  callTrace
}

// callTrace is a call's timeline; kept when its prepared value is copied.
// A call's steps run one at a time, so it needs no lock.
type callTrace struct {
	b    *batchTrace
	call ToolCall // the call, as the batch named it
	// spans are the call's spans in the order they started: the
	// execute_tool span first; none when the batch is not traced.
	spans []*pendingSpan
	// What the call's measurements are made of: its decision and outcome
	// (once it ended) and each wait for a person's answer.
	ended bool
	key   callKey
	waits []answerWait
	// end is how the call ended, for its span.
	end callEnd
	// Room for the spans of a call that is decided and runs once, kept
	// with the timeline rather than allocated one by one.
	own  [4]pendingSpan
	ptrs [5]*pendingSpan
}

type answerWait struct {
	seconds float64
	answer  string
}

// pendingSpan is a span as the path recorded it.
type pendingSpan struct {
	sc         trace.SpanContext // drawn on the path
	parent     *pendingSpan      // nil: the batch's span
	name       string
	start, end time.Time
	attrs      []attribute.KeyValue // given at its start
	later      []attribute.KeyValue // given after
	errDesc    string               // not "": its status is Error
	dec        *decided             // a decision it says, made into attributes with it
	made       trace.Span           // make's
}

// startBatch starts the batch's span, the child of the frontend's trace
// context if it sent one.
func (in *instruments) startBatch(eo *ExecOptions, n int) *batchTrace {
	if !in.tracing && !in.metering && eo.TraceParent == "" {
		return nil
	}
	parent := context.Background()
	if eo.TraceParent != "" {
		parent = propagation.TraceContext{}.Extract(parent, propagation.MapCarrier{
			"traceparent": eo.TraceParent, "tracestate": eo.TraceState,
		})
	}
	b := &batchTrace{in: in, parent: parent, sc: trace.SpanContextFromContext(parent)}
	if !in.tracing && !in.metering {
		// Nothing is kept, but the frontend's trace context goes on, as
		// every span's: to the server in _meta, onto the audit record.
		b.bare.b = b
		return b
	}
	b.calls = make([]callTrace, n)
	if !in.tracing {
		return b
	}
	attrs := []attribute.KeyValue{attribute.Int("freecode.batch.size", n)}
	if eo.Frontend != "" {
		attrs = append(attrs, attribute.String(attrFrontend, eo.Frontend))
	}
	if l, ok := in.tp.(otelset.Laterer); ok {
		b.sc = l.Draw(b.sc)
		b.own = pendingSpan{sc: b.sc, name: "freecode.batch", start: time.Now(), attrs: attrs}
		b.recording = b.sc.IsSampled()
		return b
	}
	_, b.span = in.tracer.Start(parent, "freecode.batch", trace.WithAttributes(attrs...))
	b.sc, b.recording = b.span.SpanContext(), b.span.IsRecording()
	return b
}

// startCall starts the timeline of c, the batch's call i, and its span.
func (b *batchTrace) startCall(i int, c ToolCall) *callTrace {
	if b == nil {
		return nil
	}
	if b.calls == nil {
		return &b.bare
	}
	t := &b.calls[i]
	t.b, t.spans = b, t.ptrs[:0]
	if !b.recording {
		return t
	}
	// Its name and attributes are made with it (make): the path keeps
	// the call it is of.
	t.child(nil, "")
	t.call = c
	return t
}

// callSpan is the execute_tool span; nil when the batch is not traced.
func (t *callTrace) callSpan() *pendingSpan {
	if t == nil || len(t.spans) == 0 {
		return nil
	}
	return t.spans[0]
}

// context is the span context of s, a span of the call, for what is sent
// on; of the call's span when s is nil, of the batch's (or the
// frontend's) when the call is not traced.
func (t *callTrace) context(s *pendingSpan) trace.SpanContext {
	switch {
	case s != nil:
		return s.sc
	case t == nil:
		return trace.SpanContext{}
	case len(t.spans) > 0:
		return t.spans[0].sc
	}
	return t.b.sc
}

// child starts a span under parent (nil: the call's span, or the batch's
// for the call's own), with attrs; nil when the batch is not traced.
func (t *callTrace) child(parent *pendingSpan, name string, attrs ...attribute.KeyValue) *pendingSpan {
	if t == nil || !t.b.recording {
		return nil
	}
	var s *pendingSpan
	if n := len(t.spans); n < len(t.own) {
		s = &t.own[n]
	} else {
		s = new(pendingSpan)
	}
	*s = pendingSpan{parent: parent, name: name, start: time.Now(), attrs: attrs}
	if parent == nil && len(t.spans) > 0 {
		s.parent = t.spans[0]
	}
	psc := t.b.sc
	if s.parent != nil {
		psc = s.parent.sc
	}
	s.sc = otelset.Child(psc)
	t.spans = append(t.spans, s)
	return s
}

// startAttempt starts the span of attempt n at the call.
func (t *callTrace) startAttempt(n int) *pendingSpan {
	if t == nil || !t.b.recording {
		return nil // before the attribute is made
	}
	return t.child(nil, "freecode.attempt", attribute.Int(attrAttempt, n))
}

// finish ends s now.
func (s *pendingSpan) finish() {
	if s != nil {
		s.end = time.Now()
	}
}

// set gives s attributes after its start.
func (s *pendingSpan) set(attrs ...attribute.KeyValue) {
	if s != nil {
		s.later = append(s.later, attrs...)
	}
}

// fail marks s failed: error.type errType, status Error with desc.
func (s *pendingSpan) fail(errType, desc string) {
	if s != nil {
		s.later = append(s.later, attribute.String("error.type", errType))
		s.errDesc = desc
	}
}

// finish hands the batch over to be made (make), beside the calls.
func (b *batchTrace) finish() {
	if b == nil || (!b.recording && !b.in.metering) {
		return
	}
	end := time.Now()
	otelset.Later(b.in.tp, func() { b.make(end) })
}

// make makes the batch's spans, parents before their children, and its
// measurements; the batch's span ends at end.
func (b *batchTrace) make(end time.Time) {
	in := b.in
	if b.recording {
		if b.span == nil {
			b.own.end = end
			b.span = in.makeSpan(&b.own, b.parent, nil)
		} else {
			b.span.End(trace.WithTimestamp(end))
		}
		for i := range b.calls {
			t := &b.calls[i]
			if len(t.spans) > 0 {
				s, tool := t.spans[0], t.call.Tool
				if t.ended {
					tool = t.end.tool
					var later []attribute.KeyValue
					later, s.errDesc = t.end.attrs()
					s.later = append(later, s.later...)
				}
				s.name = "execute_tool " + tool
				s.attrs = []attribute.KeyValue{attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", t.call.CallID)}
			}
			for _, s := range t.spans {
				in.makeSpan(s, nil, b.span)
			}
		}
	}
	if !in.metering {
		return
	}
	ctx := context.Background()
	for i := range b.calls {
		t := &b.calls[i]
		for _, w := range t.waits {
			in.wait.Record(ctx, w.seconds, metric.WithAttributes(attribute.String(attrAnswer, w.answer)))
		}
		if t.ended {
			in.calls.Add(ctx, 1, in.callSets.Get(t.key, t.key.attrs))
		}
	}
}

// makeSpan makes the span s recorded, with the IDs drawn for it, under
// its parent's made span (batch, for a call's own) or, for the batch's
// own, on ctx, which holds the frontend's trace context.
func (in *instruments) makeSpan(s *pendingSpan, ctx context.Context, batch trace.Span) trace.Span {
	if ctx == nil {
		parent := batch
		if s.parent != nil {
			parent = s.parent.made
		}
		ctx = trace.ContextWithSpan(context.Background(), parent)
	}
	ctx = otelset.ContextWithDrawn(ctx, s.sc)
	opts := []trace.SpanStartOption{trace.WithTimestamp(s.start)}
	if len(s.attrs) > 0 {
		opts = append(opts, trace.WithAttributes(s.attrs...))
	}
	_, span := in.tracer.Start(ctx, s.name, opts...)
	if s.dec != nil {
		span.SetAttributes(s.dec.attrs(make([]attribute.KeyValue, 0, 4))...)
	}
	if len(s.later) > 0 {
		span.SetAttributes(s.later...)
	}
	if s.errDesc != "" {
		span.SetStatus(codes.Error, s.errDesc)
	}
	if s.end.IsZero() {
		span.End()
	} else {
		span.End(trace.WithTimestamp(s.end))
	}
	s.made = span
	return span
}
