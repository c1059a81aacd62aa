package otelcoltest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What FreeCode's telemetry must say, checked attribute by attribute: the
// MCP client span and mcp.client.operation.duration under the
// OpenTelemetry MCP semantic conventions (the GenAI conventions' MCP
// page), and FreeCode's own spans and events as the README's attribute
// tables list them.

// MCPCall is one tools/call as the MCP conventions describe it.
type MCPCall struct {
	// Tool is gen_ai.tool.name: the tool's name on its server.
	Tool string
	// Transport is network.transport: "pipe" (stdio) or "tcp" (HTTP).
	Transport string
	// SessionID is mcp.session.id: "" where the transport has no session
	// (then it must be absent), "*" for any.
	SessionID string
	// ErrorType is error.type: "" when the call succeeded (then it must
	// be absent and the span's status unset).
	ErrorType string
}

// revision is an MCP protocol revision: 2025-11-25.
var revision = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// mcpOptional are attributes of the MCP conventions' common set that
// FreeCode does not record today (or not everywhere): present, each must
// hold what the check says; absent is no error.
var mcpOptional = []string{"gen_ai.operation.name", "network.transport", "mcp.protocol.version", "network.protocol.name",
	"network.protocol.version", "jsonrpc.request.id", "rpc.response.status_code", "server.address", "server.port"}

// checkMCPAttrs checks the attributes of a tools/call span or point:
// required holds what must be there, with its value; the conventions'
// optional ones, if there, must be right; nothing else may be.
// A span may have mcp.session.id too; a metric's point may not (the
// conventions leave it out of metrics: one series a session).
func checkMCPAttrs(t testing.TB, where string, got Attrs, required Attrs, call MCPCall, span bool) {
	t.Helper()
	if diff := cmp.Diff(required, got.Pick(slices.Collect(maps.Keys(required))...)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", where, diff)
	}
	for k, v := range got {
		if _, ok := required[k]; ok {
			continue
		}
		ok := slices.Contains(mcpOptional, k)
		switch k {
		case "gen_ai.operation.name":
			ok = v == "execute_tool"
		case "network.transport":
			ok = v == call.Transport
		case "mcp.protocol.version":
			s, _ := v.(string)
			ok = revision.MatchString(s)
		case "jsonrpc.request.id":
			_, ok = v.(string) // the conventions' type
		case "mcp.session.id":
			_, ok = v.(string)
			ok = ok && span // CheckClientSpan checks its value
		case "error.type":
			ok = false // required when it failed, never when it did not
		}
		if !ok {
			t.Errorf("%s: %s=%#v is not what the MCP conventions say of a tools/call of %s", where, k, v, call.Tool)
		}
	}
	if call.ErrorType == "" {
		if _, ok := got["error.type"]; ok {
			t.Errorf("%s: error.type=%v on a call that succeeded", where, got["error.type"])
		}
	}
}

// CheckClientSpan checks that sp is FreeCode's MCP client span of call,
// attribute by attribute: named "tools/call {tool}", of kind client;
// mcp.method.name "tools/call" (required); gen_ai.tool.name (required
// for a tool's call); gen_ai.operation.name "execute_tool" (recommended
// for a tool call); network.transport; mcp.protocol.version, a revision;
// mcp.session.id where the transport has a session, absent where not;
// jsonrpc.request.id a string if set (FreeCode sets none: the go-sdk
// assigns the id out of its reach); error.type, and an error status, if
// and only if the call failed. No attribute outside the conventions.
func CheckClientSpan(t testing.TB, sp Span, call MCPCall) {
	t.Helper()
	where := fmt.Sprintf("span %q (%s)", sp.Name, sp.SpanID)
	if want := "tools/call " + call.Tool; sp.Name != want || sp.Kind != "client" {
		t.Errorf("%s: kind %s, want %q of kind client", where, sp.Kind, want)
	}
	required := Attrs{"mcp.method.name": "tools/call", "gen_ai.tool.name": call.Tool, "gen_ai.operation.name": "execute_tool",
		"network.transport": call.Transport}
	if call.ErrorType != "" {
		required["error.type"] = call.ErrorType
	}
	checkMCPAttrs(t, where, sp.Attrs, required, call, true)
	if v, _ := sp.Attrs["mcp.protocol.version"].(string); !revision.MatchString(v) {
		t.Errorf("%s: mcp.protocol.version=%q, want the negotiated revision", where, v)
	}
	id, has := sp.Attrs["mcp.session.id"].(string)
	switch {
	case call.SessionID == "" && has:
		t.Errorf("%s: mcp.session.id=%q over %s, which has no session", where, id, call.Transport)
	case call.SessionID == "*" && id == "", call.SessionID != "" && call.SessionID != "*" && id != call.SessionID:
		t.Errorf("%s: mcp.session.id=%q, want %q", where, id, call.SessionID)
	}
	checkStatus(t, where, sp, call.ErrorType != "")
}

// CheckServerSpan checks that sp, the test MCP server's span of call
// (mcptest.NewTracedServer), joined FreeCode's trace: of kind server,
// named as the client's span, in its trace, and its child.
func CheckServerSpan(t testing.TB, sp, client Span, call MCPCall) {
	t.Helper()
	where := fmt.Sprintf("the server's span %q (%s)", sp.Name, sp.SpanID)
	if sp.Name != "tools/call "+call.Tool || sp.Kind != "server" {
		t.Errorf("%s: kind %s, want %q of kind server", where, sp.Kind, "tools/call "+call.Tool)
	}
	if sp.TraceID != client.TraceID || sp.ParentSpanID != client.SpanID {
		t.Errorf("%s: trace %s, parent %s; want the child of FreeCode's tools/call span: trace %s, span %s",
			where, sp.TraceID, sp.ParentSpanID, client.TraceID, client.SpanID)
	}
	required := Attrs{"mcp.method.name": "tools/call", "gen_ai.tool.name": call.Tool, "network.transport": call.Transport}
	if diff := cmp.Diff(required, sp.Attrs.Pick("mcp.method.name", "gen_ai.tool.name", "network.transport")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", where, diff)
	}
}

// checkStatus checks a span's status: error when failed, else unset.
func checkStatus(t testing.TB, where string, sp Span, failed bool) {
	t.Helper()
	if want := map[bool]string{true: "error", false: "unset"}[failed]; sp.StatusCode != want {
		t.Errorf("%s: status %s %q, want %s", where, sp.StatusCode, sp.StatusMessage, want)
	}
}

// DurationBuckets are the MCP conventions' advised bucket boundaries of
// mcp.client.operation.duration and mcp.client.session.duration, in s.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// CheckOperationDuration checks that m is mcp.client.operation.duration
// of calls: a cumulative histogram in s with the conventions' buckets,
// one point for each distinct call (tool and error.type) counting its
// calls, each with mcp.method.name "tools/call", gen_ai.tool.name and
// error.type if and only if the call failed (and the conventions'
// recommended attributes right where recorded).
func CheckOperationDuration(t testing.TB, m *Metric, calls ...MCPCall) {
	t.Helper()
	if m == nil {
		t.Errorf("no mcp.client.operation.duration was exported")
		return
	}
	if m.Type != "histogram" || m.Unit != "s" || m.Temporality != "cumulative" {
		t.Errorf("mcp.client.operation.duration: a %s %s in %q, want a cumulative histogram in s", m.Temporality, m.Type, m.Unit)
	}
	want := map[string]uint64{}
	byKey := map[string]MCPCall{}
	for _, c := range calls {
		k := c.Tool + " " + c.ErrorType
		want[k]++
		byKey[k] = c
	}
	got := map[string]uint64{}
	for _, p := range m.Points {
		k := p.Attrs.Text("gen_ai.tool.name") + " " + p.Attrs.Text("error.type")
		got[k] += p.Count
		call, ok := byKey[k]
		if !ok {
			continue // told below
		}
		required := Attrs{"mcp.method.name": "tools/call", "gen_ai.tool.name": call.Tool}
		if call.ErrorType != "" {
			required["error.type"] = call.ErrorType
		}
		checkMCPAttrs(t, "a point of mcp.client.operation.duration", p.Attrs, required, call, false)
		if !cmp.Equal(p.Bounds, DurationBuckets) {
			t.Errorf("mcp.client.operation.duration's buckets %v, want the conventions' %v", p.Bounds, DurationBuckets)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mcp.client.operation.duration's counts by tool and error.type (-want +got):\n%s", diff)
	}
}

// ToolCall is what FreeCode's execute_tool span of a call says (the
// README's attribute table); "" fields are absent.
type ToolCall struct {
	ID, CallID, Server                 string // gen_ai.tool.name (the tool id), gen_ai.tool.call.id, freecode.server
	Decision, Rule, RuleSource, Answer string // freecode.permission.*
	Outcome, ErrorType                 string // freecode.outcome, error.type
}

// CheckExecuteTool checks that sp is the execute_tool span of call:
// named "execute_tool {tool id}", internal, with exactly the attributes
// the README lists for it, and an error status if and only if the
// outcome is not ok.
func CheckExecuteTool(t testing.TB, sp Span, call ToolCall) {
	t.Helper()
	where := fmt.Sprintf("span %q (%s)", sp.Name, sp.SpanID)
	if sp.Name != "execute_tool "+call.ID || sp.Kind != "internal" {
		t.Errorf("%s: kind %s, want %q of kind internal", where, sp.Kind, "execute_tool "+call.ID)
	}
	want := nonEmpty(map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.ID, "gen_ai.tool.call.id": call.CallID,
		"freecode.server": call.Server, "freecode.permission.decision": call.Decision, "freecode.permission.rule": call.Rule,
		"freecode.permission.rule.source": call.RuleSource, "freecode.permission.answer": call.Answer, "freecode.outcome": call.Outcome,
		"error.type": call.ErrorType})
	if diff := cmp.Diff(want, sp.Attrs); diff != "" {
		t.Errorf("%s (-want +got):\n%s", where, diff)
	}
	checkStatus(t, where, sp, call.Outcome != "ok")
}

// Decision is what a freecode.tool_decision event says (the README's
// table of its attributes); "" fields are absent.
type Decision struct {
	Frontend, Tool, Server   string
	Decision, Rule, RuleFile string
	Answer, Outcome          string
}

// CheckToolDecision checks that ev is the freecode.tool_decision event of
// want, the call whose execute_tool span is call: severity INFO, no body,
// the trace and span id of call, exactly the attributes of want and
// freecode.duration_ms, an integer.
func CheckToolDecision(t testing.TB, ev LogRecord, want Decision, call Span) {
	t.Helper()
	where := fmt.Sprintf("the %s event of %s", ev.EventName, want.Tool)
	if ev.EventName != "freecode.tool_decision" || ev.SeverityNumber != 9 || ev.Body != nil || ev.Time.IsZero() {
		t.Errorf("%s: severity %d, body %v, time %v; want freecode.tool_decision, INFO (9), no body, a time", where, ev.SeverityNumber, ev.Body, ev.Time)
	}
	if ev.TraceID != call.TraceID || ev.SpanID != call.SpanID {
		t.Errorf("%s: trace %q, span %q; want its span %q's: trace %s, span %s", where, ev.TraceID, ev.SpanID, call.Name, call.TraceID, call.SpanID)
	}
	wantAttrs := nonEmpty(map[string]string{"freecode.frontend": want.Frontend, "gen_ai.tool.name": want.Tool, "freecode.server": want.Server,
		"freecode.permission.decision": want.Decision, "freecode.permission.rule": want.Rule, "freecode.permission.rule.file": want.RuleFile,
		"freecode.permission.answer": want.Answer, "freecode.outcome": want.Outcome})
	got := maps.Clone(ev.Attrs)
	if d, ok := got["freecode.duration_ms"].(int64); !ok || d < 0 {
		t.Errorf("%s: freecode.duration_ms=%#v, want a duration in ms (an int)", where, got["freecode.duration_ms"])
	}
	delete(got, "freecode.duration_ms")
	if diff := cmp.Diff(wantAttrs, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", where, diff)
	}
}

func nonEmpty(m map[string]string) Attrs {
	a := Attrs{}
	for k, v := range m {
		if v != "" {
			a[k] = v
		}
	}
	return a
}

// Paths returns the path (Export.Path) of each span of spans, sorted.
func (e *Export) Paths(spans []Span) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, e.Path(sp))
	}
	slices.Sort(out)
	return out
}

// Only returns the one span of spans named name, failing the test if
// there is not exactly one.
func Only(t testing.TB, spans []Span, name string) Span {
	t.Helper()
	var found []Span
	for _, sp := range spans {
		if sp.Name == name {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Name)
		}
		t.Fatalf("%d spans named %q, want 1; the spans: %s", len(found), name, strings.Join(names, ", "))
	}
	return found[0]
}
