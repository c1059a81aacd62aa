package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recordAll is what the tests do to a span of either provider: the
// calls the orchestrator and the MCP client make, and the rest of the
// API besides; more are attributes the parent is given last.
func recordAll(tr trace.Tracer, parent context.Context, start, end time.Time, more ...attribute.KeyValue) (parentSC, childSC trace.SpanContext) {
	ctx, p := tr.Start(parent, "execute_tool x", trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start),
		trace.WithAttributes(attribute.String("gen_ai.tool.call.id", "c1"), attribute.String("k", "first")))
	_, c := tr.Start(ctx, "tools/call x", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start.Add(time.Millisecond)),
		trace.WithLinks(trace.Link{SpanContext: p.SpanContext(), Attributes: []attribute.KeyValue{attribute.Bool("l", true)}}))
	c.AddEvent("sent", trace.WithTimestamp(start.Add(2*time.Millisecond)), trace.WithAttributes(attribute.Int("n", 1)))
	c.RecordError(errors.New("boom"), trace.WithTimestamp(start.Add(3*time.Millisecond)))
	c.SetStatus(codes.Error, "the call failed")
	c.SetStatus(codes.Unset, "") // no effect after Error, as the SDK's
	c.AddLink(trace.Link{})      // left out: nothing in it
	c.End(trace.WithTimestamp(end.Add(-time.Millisecond)))
	p.SetAttributes(attribute.String("k", "later"), attribute.Int("n", 2))
	p.SetAttributes(more...)
	p.SetName("execute_tool mcp__s__x")
	p.AddLink(trace.Link{SpanContext: c.SpanContext()})
	p.SetStatus(codes.Ok, "ignored for Ok")
	p.SetStatus(codes.Error, "Ok is final")
	p.End(trace.WithTimestamp(end))
	p.SetAttributes(attribute.String("after", "end")) // ignored: the span ended
	p.End()                                           // ignored: the second End
	return p.SpanContext(), c.SpanContext()
}

// newTestDeferred is a deferredProvider exporting to exp at once.
func newTestDeferred(t *testing.T, sampler sdktrace.Sampler, maxQueue int, exp sdktrace.SpanExporter) *deferredProvider {
	p := newDeferredProvider(sampler, maxQueue, sdktrace.NewSimpleSpanProcessor(exp), nil, os.Getenv)
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	return p
}

// howMade is a span processor that counts the spans given it as copies
// (snapshot.go) and as spans the SDK made (a replay), by their type.
type howMade struct {
	sdktrace.SpanProcessor
	mu     sync.Mutex
	copied []string // the names of the spans copied
}

func (h *howMade) OnEnd(s sdktrace.ReadOnlySpan) {
	if fmt.Sprintf("%T", s) == "tracetest.spanSnapshot" {
		h.mu.Lock()
		h.copied = append(h.copied, s.Name())
		h.mu.Unlock()
	}
	h.SpanProcessor.OnEnd(s)
}

// TestDeferredSpansAsTheSDKMakesThem records the same spans through the
// SDK's provider and through deferredProvider: the exported spans are
// the same, field by field but for the IDs, and the deferred ones have
// the IDs their spans had on the call's path; the spans within the SDK's
// limits are copied, the others made by the SDK, which applies them.
func TestDeferredSpansAsTheSDKMakesThem(t *testing.T) {
	const parentName, childName = "execute_tool mcp__s__x", "tools/call x"
	for _, tc := range []struct {
		name   string
		env    []string // name, value
		more   []attribute.KeyValue
		copied []string
	}{
		{name: "within the limits", copied: []string{childName, parentName}},
		{name: "an attribute without a key", more: []attribute.KeyValue{{Value: attribute.StringValue("x")}}, copied: []string{childName, parentName}},
		{name: "attribute count", env: []string{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "2"}, copied: []string{childName}},
		{name: "event count", env: []string{"OTEL_SPAN_EVENT_COUNT_LIMIT", "1"}, copied: []string{parentName}},
		{name: "event attributes", env: []string{"OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "1"}, copied: []string{parentName}},
		{name: "link count", env: []string{"OTEL_SPAN_LINK_COUNT_LIMIT", "0"}},
		{name: "link attributes", env: []string{"OTEL_LINK_ATTRIBUTE_COUNT_LIMIT", "0"}, copied: []string{parentName}},
		{name: "value length", env: []string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "3"}},
		{name: "self-observability", env: []string{"OTEL_GO_X_OBSERVABILITY", "true"}},
		{name: "a nested value", more: []attribute.KeyValue{attribute.Map("m", attribute.String("a", "1"), attribute.String("a", "2"))},
			copied: []string{childName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < len(tc.env); i += 2 {
				t.Setenv(tc.env[i], tc.env[i+1])
			}
			sameAsSDK(t, tc.more, tc.copied)
		})
	}
}

func sameAsSDK(t *testing.T, more []attribute.KeyValue, wantCopied []string) {
	start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	end := start.Add(50 * time.Millisecond)

	sdkExp := tracetest.NewInMemoryExporter()
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(sdkExp))
	defer sdkTP.Shutdown(context.Background())
	recordAll(sdkTP.Tracer("scope", trace.WithInstrumentationVersion("1.2"), trace.WithInstrumentationAttributes(attribute.Int("s", 1))),
		context.Background(), start, end, more...)

	exp := tracetest.NewInMemoryExporter()
	made := &howMade{SpanProcessor: sdktrace.NewSimpleSpanProcessor(exp)}
	p := newDeferredProvider(sdktrace.ParentBased(sdktrace.AlwaysSample()), 100, made, nil, os.Getenv)
	defer p.Shutdown(context.Background())
	parentSC, childSC := recordAll(p.Tracer("scope", trace.WithInstrumentationVersion("1.2"), trace.WithInstrumentationAttributes(attribute.Int("s", 1))),
		context.Background(), start, end, more...)
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans made on the call's path; want none before the replay", n)
	}
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(made.copied, wantCopied) {
		t.Errorf("spans copied: %q; want %q (the others made by the SDK)", made.copied, wantCopied)
	}

	want, got := sdkExp.GetSpans(), exp.GetSpans()
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("spans: got %d, the SDK's %d; want 2", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Name != w.Name || g.SpanKind != w.SpanKind || !g.StartTime.Equal(w.StartTime) || !g.EndTime.Equal(w.EndTime) ||
			g.Status != w.Status || !g.InstrumentationScope.Attributes.Equals(&w.InstrumentationScope.Attributes) ||
			g.InstrumentationScope.Name != w.InstrumentationScope.Name || g.InstrumentationScope.Version != w.InstrumentationScope.Version {
			t.Errorf("span %d: got %q %v %v–%v %+v %v, the SDK's %q %v %v–%v %+v %v", i, g.Name, g.SpanKind, g.StartTime, g.EndTime, g.Status,
				g.InstrumentationScope, w.Name, w.SpanKind, w.StartTime, w.EndTime, w.Status, w.InstrumentationScope)
		}
		if !g.Resource.Equal(w.Resource) || g.Parent.IsValid() != w.Parent.IsValid() || g.SpanContext.TraceFlags() != w.SpanContext.TraceFlags() {
			t.Errorf("span %q: resource %v, parent %v, flags %v; the SDK's %v, %v, %v", g.Name, g.Resource, g.Parent.IsValid(), g.SpanContext.TraceFlags(),
				w.Resource, w.Parent.IsValid(), w.SpanContext.TraceFlags())
		}
		if !slices.Equal(g.Attributes, w.Attributes) || g.DroppedAttributes != w.DroppedAttributes {
			t.Errorf("span %q attributes: got %v (%d dropped), the SDK's %v (%d dropped)", g.Name, g.Attributes, g.DroppedAttributes, w.Attributes, w.DroppedAttributes)
		}
		if len(g.Events) != len(w.Events) || len(g.Links) != len(w.Links) || g.DroppedEvents != w.DroppedEvents || g.DroppedLinks != w.DroppedLinks {
			t.Fatalf("span %q: %d events (%d dropped), %d links (%d dropped); the SDK's %d (%d), %d (%d)", g.Name, len(g.Events), g.DroppedEvents,
				len(g.Links), g.DroppedLinks, len(w.Events), w.DroppedEvents, len(w.Links), w.DroppedLinks)
		}
		for j := range w.Events {
			ge, we := g.Events[j], w.Events[j]
			if ge.Name != we.Name || !ge.Time.Equal(we.Time) || !slices.Equal(ge.Attributes, we.Attributes) || ge.DroppedAttributeCount != we.DroppedAttributeCount {
				t.Errorf("span %q event %d: got %+v, the SDK's %+v", g.Name, j, ge, we)
			}
		}
		for j := range w.Links {
			gl, wl := g.Links[j], w.Links[j]
			if !slices.Equal(gl.Attributes, wl.Attributes) || gl.DroppedAttributeCount != wl.DroppedAttributeCount ||
				gl.SpanContext.TraceFlags() != wl.SpanContext.TraceFlags() {
				t.Errorf("span %q link %d: got %+v, the SDK's %+v", g.Name, j, gl, wl)
			}
		}
	}
	// The IDs are those of the path: the child's is the one a traceparent
	// would have carried to the server.
	child, parent := got[0], got[1]
	if child.SpanContext.SpanID() != childSC.SpanID() || child.SpanContext.TraceID() != childSC.TraceID() ||
		parent.SpanContext.SpanID() != parentSC.SpanID() || child.Parent.SpanID() != parentSC.SpanID() {
		t.Errorf("IDs: exported child %v (parent %v), parent %v; on the path child %v, parent %v",
			child.SpanContext.SpanID(), child.Parent.SpanID(), parent.SpanContext.SpanID(), childSC.SpanID(), parentSC.SpanID())
	}
	if !childSC.IsSampled() || parent.Parent.IsValid() {
		t.Errorf("the child is sampled (%v), the parent a root (parent %v)", childSC.IsSampled(), parent.Parent)
	}
	if len(got[0].Links) > 0 && got[0].Links[0].SpanContext.SpanID() != parentSC.SpanID() ||
		len(got[1].Links) > 0 && got[1].Links[0].SpanContext.SpanID() != childSC.SpanID() {
		t.Errorf("links: %v, %v", got[0].Links, got[1].Links)
	}
}

// TestDeferredRemoteParent: a span under a frontend's traceparent is its
// child, in its trace, the parent kept as remote.
func TestDeferredRemoteParent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), 100, exp)
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	_, s := p.Tracer("scope").Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "freecode.batch")
	s.End()
	p.ForceFlush(context.Background())
	got := exp.GetSpans()
	if len(got) != 1 || !got[0].Parent.Equal(remote) || !got[0].Parent.IsRemote() || got[0].SpanContext.TraceID() != remote.TraceID() || s.SpanContext().TraceID() != remote.TraceID() {
		t.Fatalf("spans %+v; want one, child of %v", got, remote)
	}
}

// TestDeferredSampling: what the sampler decides on the path (recording,
// the sampled flag a traceparent carries) is what is exported.
func TestDeferredSampling(t *testing.T) {
	t.Run("always_off", func(t *testing.T) {
		exp := tracetest.NewInMemoryExporter()
		p := newTestDeferred(t, sdktrace.NeverSample(), 100, exp)
		_, s := p.Tracer("scope").Start(context.Background(), "x")
		if s.IsRecording() || s.SpanContext().IsSampled() || !s.SpanContext().IsValid() {
			t.Errorf("dropped span: recording %v, sampled %v, valid %v; want false, false, true", s.IsRecording(), s.SpanContext().IsSampled(), s.SpanContext().IsValid())
		}
		s.SetAttributes(attribute.Int("n", 1))
		s.End()
		p.ForceFlush(context.Background())
		if n := len(exp.GetSpans()); n != 0 {
			t.Errorf("%d spans exported; want 0", n)
		}
	})
	t.Run("unsampled remote parent", func(t *testing.T) {
		exp := tracetest.NewInMemoryExporter()
		p := newTestDeferred(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), 100, exp)
		remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true})
		_, s := p.Tracer("scope").Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "x")
		s.End()
		p.ForceFlush(context.Background())
		if n := len(exp.GetSpans()); n != 0 || s.SpanContext().IsSampled() {
			t.Errorf("%d spans exported, sampled %v; want 0, false", n, s.SpanContext().IsSampled())
		}
	})
	t.Run("ratio", func(t *testing.T) {
		exp := tracetest.NewInMemoryExporter()
		p := newTestDeferred(t, sdktrace.TraceIDRatioBased(0.5), 1000, exp)
		sampled := map[trace.SpanID]bool{}
		for range 400 {
			_, s := p.Tracer("scope").Start(context.Background(), "x")
			sampled[s.SpanContext().SpanID()] = s.SpanContext().IsSampled()
			s.End()
		}
		p.ForceFlush(context.Background())
		n := 0
		for _, s := range exp.GetSpans() {
			if !sampled[s.SpanContext.SpanID()] {
				t.Errorf("span %v exported, but not sampled on the path", s.SpanContext.SpanID())
			}
			n++
		}
		want := 0
		for _, v := range sampled {
			if v {
				want++
			}
		}
		if n != want || n == 0 || n == 400 {
			t.Errorf("%d spans exported, %d sampled on the path, of 400", n, want)
		}
	})
}

func TestSamplerFromEnv(t *testing.T) {
	for _, tc := range []struct {
		sampler, arg, want string
		err                bool
	}{
		{"", "", "ParentBased{root:AlwaysOnSampler", false},
		{"always_on", "", "AlwaysOnSampler", false},
		{" Always_Off ", "", "AlwaysOffSampler", false},
		{"traceidratio", "0.25", "TraceIDRatioBased{0.25}", false},
		{"traceidratio", "", "TraceIDRatioBased{1}", false},
		{"parentbased_traceidratio", "0.5", "ParentBased{root:TraceIDRatioBased{0.5}", false},
		{"parentbased_always_off", "", "ParentBased{root:AlwaysOffSampler", false},
		{"traceidratio", "2", "TraceIDRatioBased{1}", true},
		{"traceidratio", "half", "TraceIDRatioBased{1}", true},
		{"jaeger_remote", "", "ParentBased{root:AlwaysOnSampler", true},
	} {
		env := map[string]string{"OTEL_TRACES_SAMPLER": tc.sampler, "OTEL_TRACES_SAMPLER_ARG": tc.arg}
		s, err := samplerFromEnv(func(k string) string { return env[k] })
		if got := s.Description(); !strings.HasPrefix(got, tc.want) || (err != nil) != tc.err {
			t.Errorf("%q %q: %s, %v; want %s…, error %v", tc.sampler, tc.arg, got, err, tc.want, tc.err)
		}
	}
}

// TestDeferredEndInPanic: a span ended by a deferred End while a panic
// goes by records it as an exception, as the SDK's, and the panic goes
// on.
func TestDeferredEndInPanic(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.AlwaysSample(), 100, exp)
	func() {
		defer func() {
			if r := recover(); r != "bad" {
				t.Errorf("recovered %v; want the panic to go on", r)
			}
		}()
		_, s := p.Tracer("scope").Start(context.Background(), "x")
		defer s.End()
		panic("bad")
	}()
	p.ForceFlush(context.Background())
	got := exp.GetSpans()
	if len(got) != 1 || len(got[0].Events) != 1 || got[0].Events[0].Name != "exception" {
		t.Fatalf("spans %+v; want one with an exception event", got)
	}
	set := attribute.NewSet(got[0].Events[0].Attributes...)
	if v, _ := set.Value("exception.message"); v.AsString() != "bad" {
		t.Errorf("exception attributes %v", got[0].Events[0].Attributes)
	}
}

// TestDeferredShutdownAndQueue: Shutdown makes and exports every span
// that ended before it, none after; spans past the queue's bound are
// dropped and counted to the error handler, never lost unsaid; spans
// started and ended from many goroutines at once all arrive (run with
// -race).
func TestDeferredShutdownAndQueue(t *testing.T) {
	dropped := handledErrors(t)

	exp := &countingExporter{SpanExporter: tracetest.NewNoopExporter()}
	p := newDeferredProvider(sdktrace.AlwaysSample(), 64, sdktrace.NewSimpleSpanProcessor(exp), nil, os.Getenv)
	tr := p.Tracer("scope")
	var wg sync.WaitGroup
	const goroutines, each = 8, 100
	for range goroutines {
		wg.Go(func() {
			for i := range each {
				ctx, s := tr.Start(context.Background(), "parent")
				_, c := tr.Start(ctx, "child")
				c.SetAttributes(attribute.Int("i", i))
				c.End()
				s.End()
			}
		})
	}
	wg.Wait()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, late := tr.Start(context.Background(), "after shutdown")
	late.End()
	p.replay()

	lost := 0
	for _, d := range dropped() {
		var n int
		if _, err := fmt.Sscanf(d, "%d spans dropped", &n); err != nil {
			t.Errorf("error handler told %q", d)
		}
		lost += n
	}
	exp.mu.Lock()
	exported := exp.exported
	exp.mu.Unlock()
	if got := exported + lost; got != goroutines*each*2 {
		t.Errorf("%d spans exported and %d dropped; want %d in all", exported, lost, goroutines*each*2)
	}
	if exported == 0 {
		t.Error("no span exported")
	}
}

// mutableErr is an error its owner changes after reporting it.
type mutableErr struct{ msg string }

func (e *mutableErr) Error() string { return e.msg }

// RecordError reads the error when it is called, as the SDK's does: the
// event says what the error said then, its attributes in the SDK's order
// (the caller's, the type, the message, the stack cut at 2048 bytes),
// and the replay, on its own goroutine, never reads the error (run with
// -race).
func TestDeferredRecordErrorReadAtOnce(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.AlwaysSample(), 100, exp)
	_, s := p.Tracer("scope").Start(context.Background(), "x")
	e := &mutableErr{msg: "first"}
	s.RecordError(e, trace.WithAttributes(attribute.String("mine", "1")), trace.WithStackTrace(true))
	s.End()
	e.msg = "changed after RecordError" // before, during or after the replay
	p.ForceFlush(context.Background())
	got := exp.GetSpans()
	if len(got) != 1 || len(got[0].Events) != 1 {
		t.Fatalf("spans %+v", got)
	}
	var keys []string
	for _, a := range got[0].Events[0].Attributes {
		keys = append(keys, string(a.Key))
		switch a.Key {
		case "exception.message":
			if a.Value.AsString() != "first" {
				t.Errorf("exception.message %q; want what the error said when recorded", a.Value.AsString())
			}
		case "exception.type":
			if a.Value.AsString() != "*telemetry.mutableErr" { // the SDK's name of a pointer type
				t.Errorf("exception.type %q", a.Value.AsString())
			}
		case "exception.stacktrace":
			if n := len(a.Value.AsString()); n == 0 || n > 2048 || !strings.Contains(a.Value.AsString(), "TestDeferredRecordErrorReadAtOnce") {
				t.Errorf("stack trace of %d bytes, want the caller's, at most 2048", n)
			}
		}
	}
	if strings.Join(keys, " ") != "mine exception.type exception.message exception.stacktrace" {
		t.Errorf("event attributes %v; want the SDK's order", keys)
	}
}

// Shutdown with a context already done still makes what ended before it
// and hands it to the processors, and says the context's error. (The
// SDK's provider, shut down with that context, gives up before its
// processors' Shutdown, as it would have without FreeCode's provider.)
func TestDeferredShutdownDoneContext(t *testing.T) {
	exp := &countingExporter{SpanExporter: tracetest.NewNoopExporter()}
	p := newDeferredProvider(sdktrace.AlwaysSample(), 100, sdktrace.NewSimpleSpanProcessor(exp), nil, os.Getenv)
	_, s := p.Tracer("scope").Start(nil, "started with a nil context, as the SDK's tracer allows") //nolint:staticcheck
	s.End()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v; want the context's error", err)
	}
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if exp.exported != 1 {
		t.Errorf("exported %d; want 1", exp.exported)
	}
}

// TestDeferredUnnamedScope: a tracer asked for without a name gets the
// scope name the SDK gives it, on spans copied as on those it makes.
func TestDeferredUnnamedScope(t *testing.T) {
	sdkExp := tracetest.NewInMemoryExporter()
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(sdkExp))
	defer sdkTP.Shutdown(context.Background())
	_, s := sdkTP.Tracer("").Start(context.Background(), "x")
	s.End()

	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.AlwaysSample(), 100, exp)
	_, s = p.Tracer("").Start(context.Background(), "x")
	s.End()
	p.ForceFlush(context.Background())
	want, got := sdkExp.GetSpans(), exp.GetSpans()
	if len(got) != 1 || len(want) != 1 || got[0].InstrumentationScope.Name != want[0].InstrumentationScope.Name || got[0].InstrumentationScope.Name == "" {
		t.Errorf("scope of an unnamed tracer's span: %+v; the SDK's %+v", got, want)
	}
}

// A span keeps its attributes and links as they were given to Start: the
// caller's slices changed after are not the span's.
func TestDeferredStartKeepsWhatItWasGiven(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := newTestDeferred(t, sdktrace.AlwaysSample(), 100, exp)
	attrs := []attribute.KeyValue{attribute.String("k", "given")}
	_, linked := p.Tracer("scope").Start(context.Background(), "linked")
	links := []trace.Link{{SpanContext: linked.SpanContext()}}
	_, s := p.Tracer("scope").Start(context.Background(), "s", trace.WithAttributes(attrs...), trace.WithLinks(links...))
	attrs[0], links[0] = attribute.String("k", "changed"), trace.Link{}
	s.End()
	linked.End()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, sp := range exp.GetSpans() {
		if sp.Name != "s" {
			continue
		}
		if len(sp.Attributes) != 1 || sp.Attributes[0].Value.AsString() != "given" || len(sp.Links) != 1 || !sp.Links[0].SpanContext.Equal(linked.SpanContext()) {
			t.Errorf("span %v %v; want the attribute and link given", sp.Attributes, sp.Links)
		}
		return
	}
	t.Error("span not exported")
}
