package orchestrator

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/internal/otelset"
)

// What a batch is in OpenTelemetry's terms, recorded through its API
// only (the commands pick the SDK's providers, package telemetry):
//
//	freecode.batch                       the batch, a child of ExecOptions.TraceParent
//	└ execute_tool {tool id}             each call, from the batch's start to its result
//	  ├ freecode.validate                lookup and the arguments' schema
//	  ├ freecode.permission              the gate: decision and rule
//	  │ └ freecode.permission.wait       a person answering, when asked
//	  └ freecode.attempt                 each attempt at the tool (a retry is a second)
//	    └ tools/call {tool}              the MCP request (mcp.Telemetry)
//
// Arguments and results are not recorded unless Options.SpanContent says
// what of them to record (the user's or the organization's opt-in, which
// redacts them); the spans say which tool ran, what decided it and how it
// ended.

const instrumentationScope = "github.com/freecode/freecode/orchestrator"

// The attributes of FreeCode's own.
const (
	attrDecision   = "freecode.permission.decision"
	attrRule       = "freecode.permission.rule"
	attrRuleSource = "freecode.permission.rule.source"
	attrAnswer     = "freecode.permission.answer"
	attrOutcome    = "freecode.outcome"
	attrServer     = "freecode.server"
	attrFrontend   = "freecode.frontend"
	attrAttempt    = "freecode.attempt"
	// The GenAI conventions' opt-in attributes of execute_tool.
	attrCallArguments = "gen_ai.tool.call.arguments"
	attrCallResult    = "gen_ai.tool.call.result"
)

// instruments are the orchestrator's tracer and metrics.
type instruments struct {
	tracer trace.Tracer
	// tracing and metering say whether a provider was given: without,
	// spans are not started and measurements not made, and nothing is
	// built for them (telemetry off costs a call nothing).
	tracing, metering bool
	calls             metric.Int64Counter
	wait              metric.Float64Histogram
	// callSets holds the attribute sets of calls, by decision and outcome.
	callSets *otelset.Cache[callKey]
}

// callKey is what the attributes of a freecode.tool.calls measurement
// are made of.
type callKey struct{ decision, outcome string }

func (k callKey) attrs() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(attrDecision, k.decision), attribute.String(attrOutcome, k.outcome)}
}

// noSpan is the span of what is not traced: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// untraced is the span of a child of parent when nothing is traced:
// parent itself, which records nothing and carries the frontend's trace
// context, if any, on down (what a no-op tracer's child would carry).
func untraced(parent trace.Span) trace.Span {
	if parent == nil {
		return noSpan
	}
	return parent
}

func newInstruments(tp trace.TracerProvider, mp metric.MeterProvider) instruments {
	tracing, metering := tp != nil, mp != nil
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(instrumentationScope)
	in := instruments{tracer: tp.Tracer(instrumentationScope), tracing: tracing, metering: metering, callSets: &otelset.Cache[callKey]{}}
	var err error
	if in.calls, err = m.Int64Counter("freecode.tool.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by the permission decision and the outcome.")); err != nil {
		in.calls, _ = metricnoop.Meter{}.Int64Counter("")
	}
	if in.wait, err = m.Float64Histogram("freecode.permission.wait", metric.WithUnit("s"),
		metric.WithDescription("The time a person took to answer a permission request."),
		metric.WithExplicitBucketBoundaries(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)); err != nil {
		in.wait, _ = metricnoop.Meter{}.Float64Histogram("")
	}
	return in
}

// startBatch starts the batch's span, the child of the frontend's trace
// context if it sent one.
func (in *instruments) startBatch(eo *ExecOptions, n int) trace.Span {
	parent := context.Background()
	if eo.TraceParent != "" {
		parent = propagation.TraceContext{}.Extract(parent, propagation.MapCarrier{
			"traceparent": eo.TraceParent, "tracestate": eo.TraceState,
		})
	}
	if !in.tracing {
		// Nothing is traced, but the frontend's trace context goes on, as
		// every span's: to the server in _meta, onto the audit record.
		return trace.SpanFromContext(parent)
	}
	attrs := []attribute.KeyValue{attribute.Int("freecode.batch.size", n)}
	if eo.Frontend != "" {
		attrs = append(attrs, attribute.String(attrFrontend, eo.Frontend))
	}
	_, span := in.tracer.Start(parent, "freecode.batch", trace.WithAttributes(attrs...))
	return span
}

// child starts a span under parent. Spans are started on contexts of
// their own, which hold the parent alone, so that no span rides the
// call's context (a call is what its values say: Call, mcp.CallOptions).
func (in *instruments) child(parent trace.Span, name string, opts ...trace.SpanStartOption) trace.Span {
	if !in.tracing {
		return untraced(parent)
	}
	ctx := context.Background()
	if parent != nil {
		ctx = trace.ContextWithSpan(ctx, parent)
	}
	_, span := in.tracer.Start(ctx, name, opts...)
	return span
}

// startCall starts a call's span under the batch's.
func (in *instruments) startCall(batch trace.Span, c ToolCall) trace.Span {
	if !in.tracing {
		return untraced(batch)
	}
	return in.child(batch, "execute_tool "+c.Tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.call.id", c.CallID)))
}

// startAttempt starts the span of attempt n at a call.
func (in *instruments) startAttempt(call trace.Span, n int) trace.Span {
	if !in.tracing {
		return untraced(call)
	}
	return in.child(call, "freecode.attempt", trace.WithAttributes(attribute.Int(attrAttempt, n)))
}

// endValidate ends a call's validation span.
func endValidate(span trace.Span, p *prepared) {
	if p.done && span.IsRecording() {
		span.SetAttributes(attribute.String("error.type", "invalid"))
		span.SetStatus(codes.Error, "the call was not valid")
	}
	span.End()
}

// endGate ends the permission span of p with the decision d.
func endGate(span trace.Span, p *prepared, d Decision) {
	if span.IsRecording() {
		span.SetAttributes(ruleAttrs(p, d)...)
	}
	span.End()
}

func ruleAttrs(p *prepared, d Decision) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String(attrDecision, string(d))}
	if p.rule != nil {
		attrs = append(attrs, attribute.String(attrRule, p.rule.Pattern), attribute.String(attrRuleSource, p.rule.Source.String()))
	}
	if p.answer != "" {
		attrs = append(attrs, attribute.String(attrAnswer, string(p.answer)))
	}
	return attrs
}

// recordWait records the time a person took to answer, as its own span
// (started when the question was put) and in freecode.permission.wait.
func (in *instruments) recordWait(parent trace.Span, start time.Time, ans AnswerDecision, err error) {
	end := time.Now()
	if in.metering {
		in.wait.Record(context.Background(), end.Sub(start).Seconds(), metric.WithAttributes(attribute.String(attrAnswer, answerOrNone(ans))))
	}
	if !in.tracing {
		return
	}
	span := in.child(parent, "freecode.permission.wait", trace.WithTimestamp(start))
	if ans != "" {
		span.SetAttributes(attribute.String(attrAnswer, string(ans)))
	}
	if err != nil {
		span.SetAttributes(attribute.String("error.type", "no_answer"))
		span.SetStatus(codes.Error, "no answer")
	}
	span.End(trace.WithTimestamp(end))
}

func answerOrNone(a AnswerDecision) string {
	if a == "" {
		return "none"
	}
	return string(a)
}

// outcome classifies a result for the metrics and the call's span.
func outcome(r *ToolResult) string {
	switch {
	case r.Decision == DecisionInvalid:
		return "invalid"
	case r.Decision == DecisionDenied:
		return "denied"
	case r.OutcomeUnknown:
		return "unknown"
	case r.IsError:
		return "error"
	}
	return "ok"
}

// endCall ends a call's span with what became of it, and content (its
// arguments and result, when they are recorded), and counts it.
func (in *instruments) endCall(span trace.Span, p *prepared, r *ToolResult, content []attribute.KeyValue) {
	out := outcome(r)
	if span.IsRecording() {
		attrs := ruleAttrs(p, r.Decision)
		if p.tool != nil {
			if p.tool.ID != p.call.Tool { // the call named it by an alias
				span.SetName("execute_tool " + p.tool.ID)
			}
			attrs = append(attrs, attribute.String("gen_ai.tool.name", p.tool.ID))
			if p.tool.Server != "" {
				attrs = append(attrs, attribute.String(attrServer, p.tool.Server))
			}
		} else {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", p.call.Tool))
		}
		attrs = append(attrs, attribute.String(attrOutcome, out))
		if out != "ok" {
			errType := map[string]string{"invalid": "invalid", "denied": "denied", "unknown": "outcome_unknown", "error": "tool_error"}[out]
			attrs = append(attrs, attribute.String("error.type", errType))
			span.SetStatus(codes.Error, "the call "+map[string]string{"invalid": "was not valid", "denied": "was denied",
				"unknown": "lost its answer", "error": "failed"}[out])
		}
		span.SetAttributes(append(attrs, content...)...)
	}
	span.End()
	if in.metering {
		k := callKey{string(r.Decision), out}
		in.calls.Add(context.Background(), 1, in.callSets.Get(k, k.attrs))
	}
}

// spanContent is what Options.SpanContent says of the call p for its
// span, nil without it or when the call is not recorded (no tracer).
func (o *Orchestrator) spanContent(p *prepared, r *ToolResult, eo *ExecOptions) []attribute.KeyValue {
	if o.opts.SpanContent == nil || p.span == nil || !p.span.IsRecording() {
		return nil
	}
	args, result := o.opts.SpanContent(record(p, r, eo))
	var attrs []attribute.KeyValue
	if args != "" {
		attrs = append(attrs, attribute.String(attrCallArguments, args))
	}
	if result != "" {
		attrs = append(attrs, attribute.String(attrCallResult, result))
	}
	return attrs
}

// endAttempt ends an attempt's span.
func endAttempt(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetAttributes(attribute.String("error.type", attemptErrorType(err)))
		span.SetStatus(codes.Error, "the attempt failed")
	}
	span.End()
}

func attemptErrorType(err error) string {
	switch {
	case err == errIdleTimeout || err == errHardTimeout:
		return "timeout"
	case errors.Is(err, ErrConnectionLost):
		return "connection_lost"
	case errors.Is(err, ErrNotConnected):
		return "not_connected"
	}
	return "_OTHER"
}
