package workspace

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// askAnswers answers by tool: allow once what it lists, deny the rest.
type askAnswers struct{ allow map[string]bool }

func (a askAnswers) Approve(_ context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	if a.allow[req.Tool] {
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}

// One batch through the real orchestrator, MCP client and go-sdk server,
// exported by the real SDK to an OTLP/HTTP receiver on loopback: an
// allowed call, an asked one, a denied one and a retried one, each a span
// under the batch's, the batch under the frontend's traceparent, the
// server given the trace context in _meta, and the metrics; the server's
// connects (the first, and the one after the crash) as spans of their
// own, and its two sessions' durations.
func TestTelemetryOfABatch(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	s, err := telemetry.Resolve(nil, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}[k]
	})
	if err != nil || !s.Enabled() {
		t.Fatalf("Resolve = %+v, %v", s, err)
	}
	p, err := telemetry.Start(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}

	srv := mcptest.NewServer("mem")
	obj := map[string]any{"type": "object"}
	ro := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	metas := make(chan map[string]any, 8)
	srv.AddTool(&mcpsdk.Tool{Name: "lookup", InputSchema: obj, Annotations: ro}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		metas <- req.Params.Meta
		return mcptest.TextResult("found"), nil
	})
	var flaky atomic.Int32
	srv.AddTool(&mcpsdk.Tool{Name: "flaky", InputSchema: obj, Annotations: ro}, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		if flaky.Add(1) == 1 {
			srv.Kill()
			return nil, errors.New("crashed")
		}
		return mcptest.TextResult("second time"), nil
	})
	for _, name := range []string{"write", "drop"} {
		srv.AddTool(&mcpsdk.Tool{Name: name, InputSchema: obj}, mcptest.Handler)
	}
	tel := mcp.NewTelemetry(p.Tracer, p.Meter)
	mgr := mcp.NewManager(&mcp.ManagerOptions{ConnOptions: mcp.ConnOptions{Dial: srv.Dial, Telemetry: tel}})
	t.Cleanup(func() {
		mgr.Close()
		srv.Close()
	})
	if err := mgr.Apply(t.Context(), []config.Server{{Name: "mem", Type: config.TypeLocal, Enabled: true, Command: []string{"unused"}}}); err != nil {
		t.Fatal(err)
	}
	run := &serverRunner{server: "mem", mgr: mgr, tel: tel}
	release, err := run.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release()
	conn, _ := mgr.Conn("mem")
	reg := orchestrator.NewRegistry(nil)
	reg.SetServerTools("mem", conn.Tools(), run)
	o := orchestrator.New(reg, &orchestrator.Options{ToolTimeout: time.Minute, TracerProvider: p.Tracer, MeterProvider: p.Meter})

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parentID = "00f067aa0ba902b7"
	rs := o.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "1", Tool: "mcp__mem__lookup", Arguments: []byte(`{"secret":"hunter2"}`)},
		{CallID: "2", Tool: "mcp__mem__write"},
		{CallID: "3", Tool: "mcp__mem__drop"},
		{CallID: "4", Tool: "mcp__mem__flaky"},
	}, &orchestrator.ExecOptions{
		Approver:    askAnswers{allow: map[string]bool{"mcp__mem__write": true}},
		Frontend:    "test",
		TraceParent: "00-" + traceID + "-" + parentID + "-01",
	})
	var decisions []string
	for _, r := range rs {
		decisions = append(decisions, fmt.Sprintf("%s %v", r.Decision, r.IsError))
	}
	if diff := cmp.Diff([]string{"allowed false", "asked false", "denied true", "allowed false"}, decisions); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
	mgr.Close() // the second session ends
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	var spans, connects []*tracepb.Span
	for _, sp := range rcv.Spans() {
		if sp.Name == "freecode.connect" {
			connects = append(connects, sp)
		} else {
			spans = append(spans, sp)
		}
	}
	// The connects are roots: each serves the calls after it, not the
	// batch that may have caused it.
	if len(connects) != 2 {
		t.Errorf("%d connect spans, want 2 (the first, the reconnect)", len(connects))
	}
	for _, sp := range connects {
		a := telemetrytest.Attrs(sp.Attributes)
		if len(sp.ParentSpanId) != 0 || a["freecode.server"] != "mem" || a["network.transport"] != "pipe" || a["mcp.protocol.version"] == "" ||
			a["error.type"] != "" || sp.Kind != tracepb.Span_SPAN_KIND_CLIENT {
			t.Errorf("connect span: parent %x, kind %v, attributes %v", sp.ParentSpanId, sp.Kind, a)
		}
	}
	byID := map[string]*tracepb.Span{}
	for _, sp := range spans {
		byID[hex.EncodeToString(sp.SpanId)] = sp
		if got := hex.EncodeToString(sp.TraceId); got != traceID {
			t.Errorf("span %q is of trace %s, want the frontend's %s", sp.Name, got, traceID)
		}
		for k, v := range telemetrytest.Attrs(sp.Attributes) {
			if strings.Contains(v, "hunter2") || strings.Contains(v, "found") {
				t.Errorf("span %q exports %s=%q, which is an argument or a result", sp.Name, k, v)
			}
		}
	}
	// path is a span's name with its ancestors', root first.
	path := func(sp *tracepb.Span) string {
		names := []string{sp.Name}
		for len(sp.ParentSpanId) > 0 {
			parent, ok := byID[hex.EncodeToString(sp.ParentSpanId)]
			if !ok {
				names = append(names, "remote:"+hex.EncodeToString(sp.ParentSpanId))
				break
			}
			sp = parent
			names = append(names, sp.Name)
		}
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		return strings.Join(names, " > ")
	}
	var paths []string
	for _, sp := range spans {
		paths = append(paths, path(sp))
	}
	sort.Strings(paths)
	root := "remote:" + parentID + " > freecode.batch"
	want := []string{
		root,
		root + " > execute_tool mcp__mem__drop",
		root + " > execute_tool mcp__mem__drop > freecode.permission",
		root + " > execute_tool mcp__mem__drop > freecode.permission > freecode.permission.wait",
		root + " > execute_tool mcp__mem__drop > freecode.validate",
		root + " > execute_tool mcp__mem__flaky",
		root + " > execute_tool mcp__mem__flaky > freecode.attempt",
		root + " > execute_tool mcp__mem__flaky > freecode.attempt",
		root + " > execute_tool mcp__mem__flaky > freecode.attempt > tools/call flaky",
		root + " > execute_tool mcp__mem__flaky > freecode.attempt > tools/call flaky",
		root + " > execute_tool mcp__mem__flaky > freecode.permission",
		root + " > execute_tool mcp__mem__flaky > freecode.validate",
		root + " > execute_tool mcp__mem__lookup",
		root + " > execute_tool mcp__mem__lookup > freecode.attempt",
		root + " > execute_tool mcp__mem__lookup > freecode.attempt > tools/call lookup",
		root + " > execute_tool mcp__mem__lookup > freecode.permission",
		root + " > execute_tool mcp__mem__lookup > freecode.validate",
		root + " > execute_tool mcp__mem__write",
		root + " > execute_tool mcp__mem__write > freecode.attempt",
		root + " > execute_tool mcp__mem__write > freecode.attempt > tools/call write",
		root + " > execute_tool mcp__mem__write > freecode.permission",
		root + " > execute_tool mcp__mem__write > freecode.permission > freecode.permission.wait",
		root + " > execute_tool mcp__mem__write > freecode.validate",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}

	// The attributes, span by span, of what matters.
	attrsOf := func(name string) []map[string]string {
		var out []map[string]string
		for _, sp := range spans {
			if sp.Name == name {
				out = append(out, telemetrytest.Attrs(sp.Attributes))
			}
		}
		return out
	}
	pick := func(m map[string]string, keys ...string) map[string]string {
		out := map[string]string{}
		for _, k := range keys {
			if v, ok := m[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	callKeys := []string{"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "freecode.permission.decision",
		"freecode.permission.answer", "freecode.outcome", "error.type", "freecode.server"}
	for _, tc := range []struct {
		span string
		want map[string]string
	}{
		{"execute_tool mcp__mem__lookup", map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__mem__lookup",
			"gen_ai.tool.call.id": "1", "freecode.permission.decision": "allowed", "freecode.outcome": "ok", "freecode.server": "mem"}},
		{"execute_tool mcp__mem__write", map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__mem__write",
			"gen_ai.tool.call.id": "2", "freecode.permission.decision": "asked", "freecode.permission.answer": "allowOnce", "freecode.outcome": "ok", "freecode.server": "mem"}},
		{"execute_tool mcp__mem__drop", map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__mem__drop",
			"gen_ai.tool.call.id": "3", "freecode.permission.decision": "denied", "freecode.permission.answer": "deny", "freecode.outcome": "denied",
			"error.type": "denied", "freecode.server": "mem"}},
		{"execute_tool mcp__mem__flaky", map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "mcp__mem__flaky",
			"gen_ai.tool.call.id": "4", "freecode.permission.decision": "allowed", "freecode.outcome": "ok", "freecode.server": "mem"}},
	} {
		got := attrsOf(tc.span)
		if len(got) != 1 {
			t.Errorf("%d spans %q, want 1", len(got), tc.span)
			continue
		}
		if diff := cmp.Diff(tc.want, pick(got[0], callKeys...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.span, diff)
		}
	}
	mcpKeys := []string{"mcp.method.name", "gen_ai.tool.name", "gen_ai.operation.name", "network.transport", "error.type"}
	if diff := cmp.Diff([]map[string]string{{"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"network.transport": "pipe"}}, []map[string]string{pick(attrsOf("tools/call lookup")[0], mcpKeys...)}); diff != "" {
		t.Errorf("tools/call lookup (-want +got):\n%s", diff)
	}
	if v := attrsOf("tools/call lookup")[0]["mcp.protocol.version"]; v == "" {
		t.Errorf("tools/call lookup has no mcp.protocol.version")
	}
	var flakyErrs []string
	for _, a := range attrsOf("tools/call flaky") {
		flakyErrs = append(flakyErrs, a["error.type"])
	}
	sort.Strings(flakyErrs)
	if diff := cmp.Diff([]string{"", "connection_lost"}, flakyErrs); diff != "" {
		t.Errorf("the two attempts' error.type (-want +got):\n%s", diff)
	}
	var attempts []string
	for _, a := range attrsOf("freecode.attempt") {
		attempts = append(attempts, a["freecode.attempt"])
	}
	sort.Strings(attempts)
	if diff := cmp.Diff([]string{"1", "1", "1", "2"}, attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}

	// The server got the trace context of FreeCode's tools/call span.
	meta := <-metas
	tp, _ := meta["traceparent"].(string)
	var lookupCall *tracepb.Span
	for _, sp := range spans {
		if sp.Name == "tools/call lookup" {
			lookupCall = sp
		}
	}
	if want := "00-" + traceID + "-" + hex.EncodeToString(lookupCall.SpanId) + "-01"; tp != want {
		b, _ := json.Marshal(meta)
		t.Errorf("the server's _meta = %s, want traceparent %s", b, want)
	}

	// Metrics: the calls by decision and outcome, the MCP histogram, the
	// person's wait.
	got := map[string]string{}
	for _, m := range rcv.Metrics() {
		if h := m.GetHistogram(); h != nil {
			var n uint64
			var keys []string
			for _, dp := range h.DataPoints {
				n += dp.Count
				a := telemetrytest.Attrs(dp.Attributes)
				keys = append(keys, a["gen_ai.tool.name"]+a["freecode.server"]+"/"+a["error.type"]+"/"+a["freecode.permission.answer"])
				// The conventions' recommended attributes of the metric;
				// no session id (too many values for a metric).
				if m.Name == "mcp.client.operation.duration" && (a["gen_ai.operation.name"] != "execute_tool" || a["network.transport"] != "pipe" ||
					a["mcp.protocol.version"] == "" || a["mcp.session.id"] != "") {
					t.Errorf("a point of mcp.client.operation.duration: %v", a)
				}
			}
			sort.Strings(keys)
			got[m.Name] = fmt.Sprintf("%s %d %v", m.Unit, n, keys)
		}
		if s := m.GetSum(); s != nil {
			var keys []string
			for _, dp := range s.DataPoints {
				a := telemetrytest.Attrs(dp.Attributes)
				keys = append(keys, fmt.Sprintf("%s/%s=%d", a["freecode.permission.decision"], a["freecode.outcome"], dp.GetAsInt()))
			}
			sort.Strings(keys)
			got[m.Name] = fmt.Sprint(keys)
		}
	}
	wantMetrics := map[string]string{
		"mcp.client.operation.duration": "s 4 [flaky// flaky/connection_lost/ lookup// write//]",
		"freecode.tool.calls":           "[allowed/ok=2 asked/ok=1 denied/denied=1]",
		"freecode.permission.wait":      "s 2 [//allowOnce //deny]",
		"mcp.client.session.duration":   "s 2 [mem// mem/connection_lost/]",
	}
	if diff := cmp.Diff(wantMetrics, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if res := rcv.Resource(); res["service.name"] != "freecode" {
		t.Errorf("resource = %v, want service.name freecode", res)
	}
}

// The events are the audit trail's call lines: one freecode.tool_decision
// per line, made from the same value, with its fields and no argument,
// result or hash; the trail's other lines are no event.
func TestTelemetryEventsAreTheTrail(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	s, err := telemetry.Resolve(nil, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": rcv.URL + "/v1/logs"}[k]
	})
	if err != nil || s.LogsURL == "" || s.TracesURL != "" {
		t.Fatalf("Resolve = %+v, %v", s, err)
	}
	p, err := telemetry.Start(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "s")}, nil))
	writeJSON(t, e.userRules(), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__s__echo"}}})
	w := e.openWith(t, &Options{OnCallEvent: p.CallEvents})
	settle(t, w)
	rs := w.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "1", Tool: "mcp__s__echo", Arguments: json.RawMessage(`{"text":"hello, token=abc"}`)},
		{CallID: "2", Tool: "mcp__s__write", Arguments: json.RawMessage(`{"text":"x"}`)},
		{CallID: "3", Tool: "mcp__s__nosuch"},
	}, &orchestrator.ExecOptions{Frontend: "test#1", Approver: &answering{answer: orchestrator.Answer{Decision: orchestrator.Deny}}})
	if rs[0].IsError || rs[1].Decision != orchestrator.DecisionDenied {
		t.Fatalf("results: %+v", rs)
	}
	var want []map[string]string
	for _, en := range trailOf(t, e) { // flushes the trail's writer
		if en.Kind != "call" {
			continue
		}
		m := map[string]string{"freecode.frontend": en.Frontend, "gen_ai.tool.name": en.Tool, "freecode.server": en.Server,
			"freecode.permission.decision": en.Decision, "freecode.permission.rule": en.Rule, "freecode.permission.rule.file": en.RuleFile,
			"freecode.permission.answer": en.Answer, "freecode.outcome": en.Outcome, "freecode.duration_ms": fmt.Sprint(en.DurationMs)}
		for k, v := range m {
			if v == "" {
				delete(m, k)
			}
		}
		want = append(want, m)
	}
	if len(want) != 3 {
		t.Fatalf("%d call lines, want 3", len(want))
	}
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	var got []map[string]string
	for _, r := range rcv.Logs() {
		if r.EventName != telemetry.EventToolDecision || r.TimeUnixNano == 0 || r.SeverityNumber != logspb.SeverityNumber_SEVERITY_NUMBER_INFO {
			t.Errorf("an event named %q at %d, severity %v", r.EventName, r.TimeUnixNano, r.SeverityNumber)
		}
		if r.Body.GetValue() != nil {
			t.Errorf("event has a body: %v", r.Body)
		}
		got = append(got, telemetrytest.Attrs(r.Attributes))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events against the trail's call lines (-want +got):\n%s", diff)
	}
	// The keys compared above are all an event has: no arguments, hash,
	// identity or detail. And the fields are the ones expected.
	if len(got) == 3 && (got[0]["freecode.permission.rule"] != "mcp__s__echo" || got[0]["freecode.outcome"] != "ok" ||
		got[1]["freecode.permission.answer"] != "deny" || got[2]["gen_ai.tool.name"] != "mcp__s__nosuch") {
		t.Errorf("events: %v", got)
	}
}
