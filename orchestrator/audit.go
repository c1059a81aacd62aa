package orchestrator

import (
	"encoding/json"

	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/permissions"
)

// An Auditor keeps the record of what became of every call: the audit
// trail. Execute tells it of the calls of a batch once, in the batch's
// order, when their results are final, on the batch's goroutine; it must
// not block for long nor keep the records' slices. A call whose question
// goes to the user in another round (ErrAskedLater) is left out: nothing
// was decided, and the call made again with the answer is the one told.
type Auditor interface {
	AuditCalls([]CallRecord)
}

// CallRecord is one call as the audit trail keeps it: who asked, what
// decided it, and how it ended.
type CallRecord struct {
	// Frontend is ExecOptions.Frontend: whose batch it was.
	Frontend string
	CallID   string
	// Tool is the tool as the call named it; Server its server, "" for a
	// built-in or a tool that does not exist, and Name the server's name
	// of the tool.
	Tool, Server, Name string
	// Args are the call's arguments as it had them: the auditor hashes
	// their canonical form (the server got the same values).
	Args json.RawMessage
	// Decision is the gate's, as in the result.
	Decision Decision
	// Rule is the rule that decided, nil when none did (no rule matched,
	// or the call never reached the gate).
	Rule *permissions.Rule
	// Answer is what the person asked answered; "" when nobody was asked
	// or no answer came.
	Answer AnswerDecision
	// Result is the call's result.
	Result *ToolResult
	// Span is the span context of the call's execute_tool span
	// (timeline.go): its line's event carries it, so that the two are
	// found together. Not valid when nothing traces (nor a frontend's
	// traceparent came).
	Span trace.SpanContext
}

// noteRule keeps the rule of a decision for the audit trail.
func (p *prepared) noteRule(d permissions.Decision) {
	if d.Rule != nil {
		r := *d.Rule
		p.rule = &r
	} else {
		p.rule = nil
	}
}

// record is the CallRecord of the call p, which ended with r.
func record(p *prepared, r *ToolResult, eo *ExecOptions) CallRecord {
	rec := CallRecord{
		Frontend: eo.Frontend, CallID: p.call.CallID, Tool: p.call.Tool,
		Decision: r.Decision, Rule: p.rule, Answer: p.answer, Result: r,
		Args: p.call.Arguments,
	}
	if p.tool != nil {
		rec.Tool, rec.Server, rec.Name = p.tool.ID, p.tool.Server, p.tool.Name
	}
	rec.Span = p.tr.context(nil)
	return rec
}

// audit tells the Auditor of every call of a batch.
func (o *Orchestrator) audit(preps []prepared, results []ToolResult, eo *ExecOptions) {
	a := o.opts.Auditor
	if a == nil {
		return
	}
	recs := make([]CallRecord, 0, len(preps))
	for i := range preps {
		p := &preps[i]
		if p.askedLater {
			continue
		}
		recs = append(recs, record(p, &results[i], eo))
	}
	if len(recs) > 0 {
		a.AuditCalls(recs)
	}
}
