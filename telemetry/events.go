package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otellog "go.opentelemetry.io/otel/log"

	"github.com/freecode/freecode/internal/audit"
)

// EventToolDecision is the event name of a tool call's decision: Claude
// Code's tool_decision, under FreeCode's namespace.
const EventToolDecision = "freecode.tool_decision"

// The attributes of a freecode.tool_decision event: the names the call's
// execute_tool span uses where it has the same value.
const (
	attrFrontend = "freecode.frontend"
	attrTool     = "gen_ai.tool.name"
	attrServer   = "freecode.server"
	attrDecision = "freecode.permission.decision"
	attrRule     = "freecode.permission.rule"
	attrRuleFile = "freecode.permission.rule.file"
	attrAnswer   = "freecode.permission.answer"
	attrOutcome  = "freecode.outcome"
	attrDuration = "freecode.duration_ms"
)

// Decisions makes the freecode.tool_decision events out of the audit
// trail's call lines: the trail's writer hands it each line it makes, so
// that the event and the line are one value and cannot disagree. Its
// methods are safe for concurrent use.
type Decisions struct {
	logger otellog.Logger
}

// NewDecisions returns the events of lp (Providers.Logger).
func NewDecisions(lp otellog.LoggerProvider) *Decisions {
	return &Decisions{logger: lp.Logger(instrumentationScope)}
}

// instrumentationScope is the scope of FreeCode's events.
const instrumentationScope = "github.com/freecode/freecode"

// Emit emits the event of e, a call's line (audit.KindCall; other kinds
// are no event), made at at. Of the line it sends who asked, the tool,
// its server, the decision, the rule that made it and its file, the
// person's answer, the outcome and the duration: never the arguments
// (their values or hash), the result's text, the server's identity or
// the definition's hash.
func (d *Decisions) Emit(ctx context.Context, e audit.Event, at time.Time) {
	if e.Kind != audit.KindCall {
		return
	}
	if !d.logger.Enabled(ctx, otellog.EnabledParameters{Severity: otellog.SeverityInfo, EventName: EventToolDecision}) {
		return // off: not even the record is made
	}
	var r otellog.Record
	r.SetEventName(EventToolDecision)
	r.SetTimestamp(at)
	r.SetSeverity(otellog.SeverityInfo)
	attrs := make([]attribute.KeyValue, 0, 9)
	for _, kv := range []struct{ k, v string }{
		{attrFrontend, e.Frontend}, {attrTool, e.Tool}, {attrServer, e.Server}, {attrDecision, e.Decision},
		{attrRule, e.Rule}, {attrRuleFile, e.RuleFile}, {attrAnswer, e.Answer}, {attrOutcome, e.Outcome},
	} {
		if kv.v != "" {
			attrs = append(attrs, attribute.String(kv.k, kv.v))
		}
	}
	if e.Outcome != "" {
		attrs = append(attrs, attribute.Int64(attrDuration, e.DurationMs))
	}
	r.AddAttributes(attrs...)
	d.logger.Emit(ctx, r)
}
