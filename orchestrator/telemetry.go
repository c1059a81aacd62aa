package orchestrator

import (
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/freecode/freecode/internal/otelset"
	"github.com/freecode/freecode/permissions"
)

// What a batch is in OpenTelemetry's terms, made through its API only
// (the commands pick the SDK's providers, package telemetry), of what the
// calls' path kept (timeline.go):
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
	tp     trace.TracerProvider // the one given; nil when not tracing
	// tracing and metering say whether a provider was given: without,
	// spans and measurements are not kept, and nothing is built for them
	// (telemetry off costs a call nothing).
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

func newInstruments(tp trace.TracerProvider, mp metric.MeterProvider) instruments {
	tracing, metering := tp != nil, mp != nil
	given := tp
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(instrumentationScope)
	in := instruments{tracer: tp.Tracer(instrumentationScope), tp: given, tracing: tracing, metering: metering, callSets: &otelset.Cache[callKey]{}}
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

// endValidate ends a call's validation span.
func endValidate(s *pendingSpan, p *prepared) {
	if p.done {
		s.fail("invalid", "the call was not valid")
	}
	s.finish()
}

// endGate ends the permission span of p with the decision d.
func endGate(s *pendingSpan, p *prepared, d Decision) {
	if s != nil {
		s.dec = &decided{decision: d, rule: p.rule, answer: p.answer}
	}
	s.finish()
}

// decided is a decision as a span says it: kept on the call's path, made
// into attributes with the span (attrs).
type decided struct {
	decision Decision
	rule     *permissions.Rule // nil: no rule
	answer   AnswerDecision    // "": nobody was asked
}

// attrs appends the decision's attributes to dst.
func (d *decided) attrs(dst []attribute.KeyValue) []attribute.KeyValue {
	dst = append(dst, attribute.String(attrDecision, string(d.decision)))
	if d.rule != nil {
		dst = append(dst, attribute.String(attrRule, d.rule.Pattern), attribute.String(attrRuleSource, d.rule.Source.String()))
	}
	if d.answer != "" {
		dst = append(dst, attribute.String(attrAnswer, string(d.answer)))
	}
	return dst
}

// recordWait records the time a person took to answer, as its own span
// under the permission span gate (started when the question was put) and
// in freecode.permission.wait.
func (t *callTrace) recordWait(gate *pendingSpan, start time.Time, ans AnswerDecision, err error) {
	if t == nil {
		return
	}
	end := time.Now()
	if t.b.in.metering {
		t.waits = append(t.waits, answerWait{end.Sub(start).Seconds(), answerOrNone(ans)})
	}
	s := t.child(gate, "freecode.permission.wait")
	if s == nil {
		return
	}
	s.start, s.end = start, end
	if ans != "" {
		s.set(attribute.String(attrAnswer, string(ans)))
	}
	if err != nil {
		s.fail("no_answer", "no answer")
	}
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
// arguments and result, when they are recorded), and counts it. Its
// attributes are made with the span (callEnd.attrs).
func endCall(p *prepared, r *ToolResult, content []attribute.KeyValue) {
	t := p.tr
	if t == nil || t.b.calls == nil { // nothing kept: the batch's bare timeline
		return
	}
	out := outcome(r)
	t.ended, t.key = true, callKey{string(r.Decision), out}
	s := t.callSpan()
	if s == nil {
		return
	}
	s.end = time.Now()
	// The tool's id names the span, whether the call named it so or by
	// its provider alias; the call's own name when there is no such tool.
	t.end = callEnd{decided: decided{decision: r.Decision, rule: p.rule, answer: p.answer}, tool: p.call.Tool, outcome: out, content: content}
	if p.tool != nil {
		t.end.tool, t.end.server = p.tool.ID, p.tool.Server
	}
}

// callEnd is how a call ended, as its execute_tool span says it.
type callEnd struct {
	decided
	tool, server string
	outcome      string
	content      []attribute.KeyValue
}

// attrs are the call span's attributes of its end, and the description
// of its error status ("" for none).
func (e *callEnd) attrs() ([]attribute.KeyValue, string) {
	attrs := e.decided.attrs(make([]attribute.KeyValue, 0, 9+len(e.content)))
	attrs = append(attrs, attribute.String("gen_ai.tool.name", e.tool))
	if e.server != "" {
		attrs = append(attrs, attribute.String(attrServer, e.server))
	}
	attrs = append(attrs, attribute.String(attrOutcome, e.outcome))
	var desc string
	if e.outcome != "ok" {
		attrs = append(attrs, attribute.String("error.type", map[string]string{"invalid": "invalid", "denied": "denied", "unknown": "outcome_unknown", "error": "tool_error"}[e.outcome]))
		desc = "the call " + map[string]string{"invalid": "was not valid", "denied": "was denied",
			"unknown": "lost its answer", "error": "failed"}[e.outcome]
	}
	return append(attrs, e.content...), desc
}

// spanContent is what Options.SpanContent says of the call p for its
// span, nil without it or when the call is not traced.
func (o *Orchestrator) spanContent(p *prepared, r *ToolResult, eo *ExecOptions) []attribute.KeyValue {
	if o.opts.SpanContent == nil || p.tr.callSpan() == nil {
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
func endAttempt(s *pendingSpan, err error) {
	if err != nil {
		s.fail(attemptErrorType(err), "the attempt failed")
	}
	s.finish()
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
