package telemetry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/freecode/freecode/internal/otelset"
)

// deferredProvider is the tracer provider FreeCode records its spans
// with: what a span costs the call it times is the sampler's decision,
// its IDs, its timestamps and its attributes kept in a plain value; the
// span the processor is given is made of that value afterwards, by a
// goroutine of its own, beside the next calls (replay), with the same
// IDs, parent, times, attributes and status, so that the processor and
// the exporters get the spans the SDK would have given them. The SDK
// makes a span in six allocations and a few microseconds, which the six
// spans of a tool call would otherwise pay on the call's path
// (BenchmarkTelemetryHop). Beside the calls, a span within the SDK's
// limits is handed over as the read-only copy the SDK would have made of
// it, built at once (snapshot.go); any other is replayed through the
// SDK's own provider, which applies them.
//
// The orchestrator and the MCP client go further (otelset.Laterer): a
// call's path keeps only times, outcomes and the IDs it draws (Draw for a
// batch's root, which asks the sampler), and hands the making of its
// spans and measurements through the API to this goroutine (Later),
// which starts each span with the IDs drawn for it (otelset.Drawn) before
// it hands on the spans that ended.
//
// The sampler is chosen as the SDK chooses it (OTEL_TRACES_SAMPLER,
// OTEL_TRACES_SAMPLER_ARG: samplerFromEnv) and decides on the call's path
// whether a span records and is sampled (what the traceparent sent on
// says); the SDK takes that decision as made (presetSampler), and the
// IDs chosen on the path (presetIDs).
//
// What differs from the SDK's spans, none of it in what OTLP carries: a
// span's ChildSpanCount is 0; the span limits (OTEL_SPAN_*_LIMIT) are
// applied when the span ends, so until then a span holds every event and
// attribute it is given; the processor's OnStart is called for a span
// replayed through the SDK, when it is made, after it ended, and not for
// a span copied.
type deferredProvider struct {
	embedded.TracerProvider
	sdk     *sdktrace.TracerProvider
	sampler sdktrace.Sampler
	// proc is the SDK provider's one span processor, res its resource,
	// limits its span limits: what snapshot.go makes a span's copy with.
	// direct is false where the SDK's provider must make every span (see
	// directSpans).
	proc   sdktrace.SpanProcessor
	res    *resource.Resource
	limits sdktrace.SpanLimits
	direct bool

	kick, now, stop, done chan struct{}
	replayMu              sync.Mutex // one replay at a time: the loop's or a flush's

	// ended are the spans ended and not made yet, later the work handed
	// over by Later; both stopped by Shutdown.
	ended spanQueue[*deferredSpan]
	later spanQueue[func()]
}

// replayDelay is how long the replaying goroutine gathers ended spans
// before it makes them: a call's spans, and those of the calls of that
// time, cost it one wake-up. It is far below the span batcher's schedule
// (OTEL_BSP_SCHEDULE_DELAY, 5 s), so that a span is exported when it
// would have been.
const replayDelay = 20 * time.Millisecond

// newDeferredProvider returns the provider of spans given to proc as the
// SDK's provider of res and sampler would give them (a nil res is the
// SDK's default resource), holding at most maxQueue ended spans not yet
// made (more are dropped, and counted to the error handler, as a full
// export queue's are). The span limits are the SDK's (NewSpanLimits, from
// the process's environment); getenv is where OTEL_GO_X_OBSERVABILITY is
// read (directSpans).
func newDeferredProvider(sampler sdktrace.Sampler, maxQueue int, proc sdktrace.SpanProcessor, res *resource.Resource, getenv func(string) string) *deferredProvider {
	if res == nil {
		res = resource.Default()
	}
	p := &deferredProvider{
		sdk: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc), sdktrace.WithResource(res),
			sdktrace.WithSampler(presetSampler{sampler}), sdktrace.WithIDGenerator(presetIDs{})),
		sampler: sampler,
		proc:    proc,
		res:     res,
		limits:  sdktrace.NewSpanLimits(),
		kick:    make(chan struct{}, 1),
		now:     make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	p.direct = directSpans(p.limits, getenv)
	p.ended.max = maxQueue
	p.later.max, p.later.what = maxQueue, "calls' spans"
	go p.loop()
	return p
}

// Tracer returns the tracer of a scope.
func (p *deferredProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	t := &deferredTracer{p: p, sdk: p.sdk.Tracer(name, opts...)}
	t.scope, t.direct = scopeOf(name, trace.NewTracerConfig(opts...))
	return t
}

// loop makes the spans that ended, a replayDelay after the first of
// them, until Shutdown.
func (p *deferredProvider) loop() {
	defer close(p.done)
	t := time.NewTimer(replayDelay)
	t.Stop()
	for {
		select {
		case <-p.kick:
		case <-p.stop:
			return
		}
		t.Reset(replayDelay)
		select {
		case <-t.C:
		case <-p.now:
			t.Stop()
		case <-p.stop:
			t.Stop()
			return // Shutdown makes what is left
		}
		p.replay()
		// The spans the work made ended into the queue this replay took
		// them from, and woke the loop for another: forget that wake-up
		// unless something came after the replay took what it made.
		select {
		case <-p.kick:
		default:
		}
		if !p.later.empty() || !p.ended.empty() {
			wake(p.kick)
		}
	}
}

// enqueue hands an ended span to the loop.
func (p *deferredProvider) enqueue(s *deferredSpan) {
	n := p.ended.push(s)
	if n == 1 {
		wake(p.kick)
	} else if n > 1 && n >= p.ended.max/2 {
		// Spans end faster than one replay a replayDelay makes room for:
		// replay now rather than drop them.
		wake(p.now)
	}
}

// Later runs f on the goroutine that makes the spans that ended, before
// it makes them, a replayDelay after the first work handed over (or at a
// flush, or at Shutdown): the orchestrator and the MCP client make a
// call's spans and measurements there, of values kept on the call's path
// (otelset.Later). Past the queue's bound f is dropped, and counted to
// the error handler as a dropped span is; after Shutdown, f runs at once.
func (p *deferredProvider) Later(f func()) {
	n := p.later.push(f)
	switch {
	case n == 0 && p.later.isStopped():
		f()
	case n == 1:
		wake(p.kick)
	case n > 1 && n >= p.later.max/2:
		wake(p.now)
	}
}

// Draw is the span context Start would give a span under parent
// (invalid: a root), for a span made later (otelset.Laterer): the samplers
// FreeCode chooses (samplerFromEnv) decide by the parent and the trace ID
// alone, and decide the same when the span is made.
func (p *deferredProvider) Draw(parent trace.SpanContext) trace.SpanContext {
	var gen randomIDs
	tid := parent.TraceID()
	if !tid.IsValid() {
		tid = gen.traceID()
	}
	pctx := context.Background() // a root's: no span in it
	if parent.IsValid() {
		pctx = trace.ContextWithSpanContext(pctx, parent)
	}
	res := p.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: pctx, TraceID: tid})
	return decided(parent, tid, gen.spanID(), res)
}

// decided is the span context of a span under parent, of trace tid and
// ID sid, as the sampler's result res makes it: the parent's flags but
// for sampled, which is res's decision, and res's trace state.
func decided(parent trace.SpanContext, tid trace.TraceID, sid trace.SpanID, res sdktrace.SamplingResult) trace.SpanContext {
	flags := parent.TraceFlags() &^ trace.FlagsSampled
	if res.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: res.Tracestate})
}

// wake wakes ch's receiver unless it has been woken already.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// replay makes the SDK's span of each span that ended, in the order they
// ended.
func (p *deferredProvider) replay() {
	p.replayMu.Lock()
	defer p.replayMu.Unlock()
	for _, f := range p.later.take() {
		f()
	}
	p.later.reportDropped()
	for _, s := range p.ended.take() {
		s.replay()
	}
	p.ended.reportDropped()
}

// ForceFlush runs the work handed over by Later, makes the spans that
// ended and exports them.
func (p *deferredProvider) ForceFlush(ctx context.Context) error {
	p.replay()
	return p.sdk.ForceFlush(ctx)
}

// Shutdown runs the work handed over by Later, makes the spans that
// ended, stops taking more and shuts the SDK's provider down (which
// exports what it holds), within ctx.
func (p *deferredProvider) Shutdown(ctx context.Context) error {
	if p.later.stop() {
		return nil
	}
	close(p.stop)
	var err error
	select {
	case <-p.done:
	case <-ctx.Done():
		err = ctx.Err() // the loop's replay, if one runs, ends before ours starts
	}
	p.replay() // what Later was handed runs now, and its spans are made
	p.ended.stop()
	p.replay() // spans that ended meanwhile
	return errors.Join(err, p.sdk.Shutdown(ctx))
}

// deferredTracer is a scope's tracer of a deferredProvider.
type deferredTracer struct {
	embedded.Tracer
	p   *deferredProvider
	sdk trace.Tracer // the SDK's tracer of the scope, which replays
	// scope is the scope as the SDK's tracer has it, when direct; a
	// scope the SDK would change has its spans replayed.
	scope  instrumentation.Scope
	direct bool
}

// Start starts a span as the SDK's tracer would, deciding what it
// decides: the parent (ctx's span, unless WithNewRoot), the IDs (the
// parent's trace, new ones of a root) and, by the sampler, whether the
// span records and is sampled. A span the sampler drops is a
// non-recording span of its span context, as the SDK's is.
func (t *deferredTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background() // as the SDK's tracer takes it
	}
	cfg := trace.NewSpanStartConfig(opts...)
	var psc trace.SpanContext
	if !cfg.NewRoot() {
		psc = trace.SpanContextFromContext(ctx)
	}
	var gen randomIDs
	drawn, isDrawn := otelset.Drawn(ctx) // on a call's path, for a span made now
	tid, sid := psc.TraceID(), drawn.SpanID()
	switch {
	case tid.IsValid():
	case isDrawn:
		tid = drawn.TraceID()
	default:
		tid = gen.traceID()
	}
	if !isDrawn {
		sid = gen.spanID()
	}
	pctx := ctx
	if cfg.NewRoot() {
		pctx = trace.ContextWithSpanContext(ctx, psc)
	}
	res := t.p.sampler.ShouldSample(sdktrace.SamplingParameters{
		ParentContext: pctx, TraceID: tid, Name: name, Kind: cfg.SpanKind(), Attributes: cfg.Attributes(), Links: cfg.Links(),
	})
	s := &deferredSpan{t: t, sc: decided(psc, tid, sid, res)}
	if res.Decision != sdktrace.Drop {
		s.recording, s.decision, s.sampleAttrs = true, res.Decision, res.Attributes
		s.parent, s.name, s.startName, s.kind = psc, name, name, cfg.SpanKind()
		// The config's own copies (WithAttributes and WithLinks append to
		// it): the caller's slices are not kept.
		s.attrs, s.links = cfg.Attributes(), cfg.Links()
		if s.start = cfg.Timestamp(); s.start.IsZero() {
			s.start = time.Now()
		}
	}
	return trace.ContextWithSpan(ctx, s), s
}

// deferredSpan is a span as recorded on the call's path; replay hands it
// to the processor once it has ended. Its methods are safe for
// concurrent use.
type deferredSpan struct {
	embedded.Span
	t         *deferredTracer
	sc        trace.SpanContext
	recording bool // the sampler's decision was not Drop
	// decision and sampleAttrs are the sampler's, which replay has the
	// SDK take (presetSampler) rather than ask the sampler again.
	decision    sdktrace.SamplingDecision
	sampleAttrs []attribute.KeyValue

	// Set by Start, then read-only.
	parent    trace.SpanContext
	startName string
	kind      trace.SpanKind
	start     time.Time
	attrs     []attribute.KeyValue
	links     []trace.Link

	mu         sync.Mutex // guards the fields below
	ended      bool
	end        time.Time
	name       string
	later      []attribute.KeyValue // SetAttributes, in order
	events     []deferredEvent
	addedLinks []trace.Link
	status     codes.Code
	statusDesc string
}

// deferredEvent is an AddEvent or RecordError: a RecordError's error is
// read when it is called (its type and message), as the SDK reads it,
// and not kept.
type deferredEvent struct {
	name  string
	at    time.Time
	attrs []attribute.KeyValue
}

// live reports whether the span still takes what it is told; the caller
// holds s.mu.
func (s *deferredSpan) live() bool { return s.recording && !s.ended }

func (s *deferredSpan) SpanContext() trace.SpanContext { return s.sc }

func (s *deferredSpan) IsRecording() bool {
	if !s.recording {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

func (s *deferredSpan) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live() || code < s.status {
		return // as the SDK's: Ok is final, Error is over Unset only
	}
	s.status, s.statusDesc = code, ""
	if code == codes.Error {
		s.statusDesc = description
	}
}

func (s *deferredSpan) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live() {
		s.name = name
	}
}

func (s *deferredSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live() {
		s.later = append(s.later, kv...)
	}
}

func (s *deferredSpan) AddEvent(name string, opts ...trace.EventOption) {
	s.addEvent(name, nil, opts)
}

func (s *deferredSpan) RecordError(err error, opts ...trace.EventOption) {
	if err != nil {
		s.addEvent("exception", err, opts)
	}
}

// addEvent keeps an event, its time and attributes taken now: for
// RecordError, after the caller's, the error's type and message and, with
// WithStackTrace, the caller's stack, in the SDK's order and form.
func (s *deferredSpan) addEvent(name string, err error, opts []trace.EventOption) {
	if !s.IsRecording() {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	ev := deferredEvent{name: name, at: cfg.Timestamp(), attrs: slices.Clone(cfg.Attributes())}
	if ev.at.IsZero() {
		ev.at = time.Now()
	}
	if err != nil {
		ev.attrs = append(ev.attrs, attribute.String("exception.type", typeStr(err)), attribute.String("exception.message", err.Error()))
		if cfg.StackTrace() {
			ev.attrs = append(ev.attrs, attribute.String("exception.stacktrace", stackTrace()))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live() {
		s.events = append(s.events, ev)
	}
}

func (s *deferredSpan) AddLink(link trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live() {
		s.addedLinks = append(s.addedLinks, link)
	}
}

// End ends the span and hands it to be made. As the SDK's, a span ended
// by a deferred End during a panic records the panic as an exception
// event, and the panic goes on.
func (s *deferredSpan) End(opts ...trace.SpanEndOption) {
	if !s.recording {
		return
	}
	end := monotonicEnd(s.start)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	cfg := trace.NewSpanEndConfig(opts...)
	if recovered := recover(); recovered != nil {
		defer panic(recovered)
		ev := deferredEvent{name: "exception", at: time.Now(), attrs: []attribute.KeyValue{
			attribute.String("exception.type", typeStr(recovered)), attribute.String("exception.message", fmt.Sprint(recovered)),
		}}
		if cfg.StackTrace() {
			ev.attrs = append(ev.attrs, attribute.String("exception.stacktrace", stackTrace()))
		}
		s.events = append(s.events, ev)
	}
	s.ended = true
	if s.end = cfg.Timestamp(); s.end.IsZero() {
		s.end = end
	}
	s.mu.Unlock()
	s.t.p.enqueue(s)
}

func (s *deferredSpan) TracerProvider() trace.TracerProvider { return s.t.p }

// replay hands s, which has ended, to the processor: its copy made at
// once where it can be (snapshot.go), else the SDK's span made of it:
// started at its start under its parent, with the IDs it was given
// (presetIDs), then told what s was told, in the same order where the
// order matters.
func (s *deferredSpan) replay() {
	if ro, ok := s.snapshot(); ok {
		s.t.p.proc.OnEnd(ro)
		return
	}
	ctx := context.WithValue(trace.ContextWithSpanContext(context.Background(), s.parent), presetKey{}, s)
	opts := []trace.SpanStartOption{trace.WithTimestamp(s.start), trace.WithSpanKind(s.kind)}
	if len(s.attrs) > 0 {
		opts = append(opts, trace.WithAttributes(s.attrs...))
	}
	if len(s.links) > 0 {
		opts = append(opts, trace.WithLinks(s.links...))
	}
	_, span := s.t.sdk.Start(ctx, s.startName, opts...)
	if len(s.later) > 0 {
		span.SetAttributes(s.later...)
	}
	for _, l := range s.addedLinks {
		span.AddLink(l)
	}
	for _, ev := range s.events {
		span.AddEvent(ev.name, trace.WithTimestamp(ev.at), trace.WithAttributes(ev.attrs...))
	}
	if s.name != s.startName {
		span.SetName(s.name)
	}
	if s.status != codes.Unset {
		span.SetStatus(s.status, s.statusDesc)
	}
	span.End(trace.WithTimestamp(s.end))
}

// monotonicEnd is the end of a span that started at start, as the SDK
// takes it: start plus the monotonic time since, so that a step of the
// wall clock does not change a span's length.
func monotonicEnd(start time.Time) time.Time {
	if d := time.Since(start); d > 0 {
		return start.Add(d)
	}
	return time.Now()
}

// stackTrace is the caller's stack as the SDK records it for an
// exception: this goroutine's, cut at 2048 bytes.
func stackTrace() string {
	buf := make([]byte, 2048)
	return string(buf[:runtime.Stack(buf, false)])
}

// typeStr is the SDK's name of an error's or a panic value's type.
func typeStr(v any) string {
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}
