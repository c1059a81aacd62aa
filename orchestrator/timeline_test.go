package orchestrator

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// With FreeCode's providers, a batch's spans are made after it, of what
// its path kept: with the IDs the servers (Call.Trace) and the audit
// trail (CallRecord.Span) were given, under the frontend's span, at the
// times the steps took, two calls running side by side; and the calls
// are counted.
func TestSpansMadeLaterTakeTheIDsSentOn(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	recv := telemetrytest.NewReceiver(t)
	p, err := telemetry.Start(context.Background(), telemetry.Settings{TracesURL: recv.URL + "/v1/traces", MetricsURL: recv.URL + "/v1/metrics"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fr := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("s", []*mcpsdk.Tool{tool("a", true, ""), tool("b", true, "")}, fr)
	aud := &recordingAuditor{}
	o := New(reg, &Options{Auditor: aud, TracerProvider: p.Tracer, MeterProvider: p.Meter})
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__s__a"}, {CallID: "2", Tool: "mcp__s__b"}}, &ExecOptions{TraceParent: parent})
	if len(rs) != 2 || rs[0].IsError || rs[1].IsError || len(fr.calls) != 2 || len(aud.recs) != 2 {
		t.Fatalf("results %+v, %d calls, %d records", rs, len(fr.calls), len(aud.recs))
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	byID := map[string]*tracepb.Span{}
	var batch *tracepb.Span
	for _, sp := range recv.Spans() {
		byID[hex.EncodeToString(sp.SpanId)] = sp
		if sp.Name == "freecode.batch" {
			batch = sp
		}
	}
	if batch == nil || hex.EncodeToString(batch.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(batch.ParentSpanId) != "00f067aa0ba902b7" {
		t.Fatalf("batch span %v; want one under the frontend's span", batch)
	}
	parentOf := func(sp *tracepb.Span) *tracepb.Span { return byID[hex.EncodeToString(sp.ParentSpanId)] }
	within := func(in, out *tracepb.Span) bool {
		return in.StartTimeUnixNano >= out.StartTimeUnixNano && in.EndTimeUnixNano <= out.EndTimeUnixNano && in.StartTimeUnixNano <= in.EndTimeUnixNano
	}
	for i, c := range fr.calls {
		attempt := byID[c.Trace.SpanID().String()]
		if attempt == nil || attempt.Name != "freecode.attempt" || hex.EncodeToString(attempt.TraceId) != c.Trace.TraceID().String() {
			t.Fatalf("call %d: the server was sent span %v, which was made as %v; want its attempt", i, c.Trace, attempt)
		}
		call := parentOf(attempt)
		if call == nil || call.Name != "execute_tool mcp__s__"+c.Name || parentOf(call) != batch {
			t.Fatalf("call %d: attempt under %v; want its execute_tool span, under the batch's", i, call)
		}
		if !within(attempt, call) || !within(call, batch) {
			t.Errorf("call %d: attempt %d–%d, call %d–%d, batch %d–%d: not one within the other", i,
				attempt.StartTimeUnixNano, attempt.EndTimeUnixNano, call.StartTimeUnixNano, call.EndTimeUnixNano, batch.StartTimeUnixNano, batch.EndTimeUnixNano)
		}
		var rec *CallRecord
		for j := range aud.recs {
			if aud.recs[j].Name == c.Name {
				rec = &aud.recs[j]
			}
		}
		if rec == nil || byID[rec.Span.SpanID().String()] != call {
			t.Errorf("call %d: its audit record names span %v; want its execute_tool span", i, rec)
		}
		var steps []string
		for _, sp := range byID {
			if parentOf(sp) == call {
				steps = append(steps, sp.Name)
				if !within(sp, call) {
					t.Errorf("call %d: %s outside the call's span", i, sp.Name)
				}
			}
		}
		if len(steps) != 3 {
			t.Errorf("call %d: steps %v; want validate, permission and attempt", i, steps)
		}
	}
	if d := time.Duration(batch.EndTimeUnixNano - batch.StartTimeUnixNano); d <= 0 || d > time.Minute {
		t.Errorf("the batch lasted %v", d)
	}
	var counted int64
	for _, m := range recv.Metrics() {
		if m.Name == "freecode.tool.calls" {
			for _, dp := range m.GetSum().GetDataPoints() {
				counted += dp.GetAsInt()
			}
		}
	}
	if counted != 2 {
		t.Errorf("freecode.tool.calls counted %d; want 2", counted)
	}
}
