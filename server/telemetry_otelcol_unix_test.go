//go:build unix

package server_test

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/otelcoltest"
)

// A batch through the sidecar (freecode-serve, its telemetry on by the
// OTEL_* variables of its process) exported to a real OpenTelemetry
// Collector and read back from its file exporter: the batch under the
// frontend's traceparent, an allowed call, an asked one and an invalid
// one, each span attribute by attribute under the MCP conventions and the
// README's tables; the test server's own spans (it reads _meta.traceparent
// and exports to the same collector) are children of FreeCode's
// tools/call spans; the metrics; each call's freecode.tool_decision event.
func TestTelemetryThroughTheSidecarToACollector(t *testing.T) {
	col := otelcoltest.Start(t)
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "", "OTEL_TRACES_EXPORTER": "", "OTEL_METRICS_EXPORTER": "", "OTEL_LOGS_EXPORTER": "",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "", "OTEL_EXPORTER_OTLP_HEADERS": "", "OTEL_SDK_DISABLED": "", "OTEL_SERVICE_NAME": "",
		"OTEL_RESOURCE_ATTRIBUTES": "",
	} {
		t.Setenv(k, v)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entry, _ := json.Marshal(map[string]any{"name": "traced", "type": "local", "command": []string{exe},
		"env": map[string]string{mcptest.TracedServerEnv: col.URL}})
	files := "-- config.json --\n" + `{"mcp": {"servers": [` + string(entry) + `]}}` + "\n"

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parentID = "00f067aa0ba902b7"
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("traced", protocol.StateConnected)
		env.Editor.SetAnswer(servertest.Reply(protocol.AllowOnce))
		var res protocol.ExecuteResult
		if err := env.Editor.Call(t.Context(), protocol.MethodToolsExecute, &protocol.ExecuteParams{
			Calls: []protocol.ToolCall{
				call("1", "mcp__traced__lookup", `{}`),
				call("2", "mcp__traced__write", `{}`),
				call("3", "mcp__traced__nosuch", `{}`),
			},
			Traceparent: "00-" + traceID + "-" + parentID + "-01",
		}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 3 || res.Results[0].IsError || res.Results[1].IsError || !res.Results[2].IsError {
			t.Fatalf("results: %+v", res.Results)
		}
		// Exiting flushes the exporters; the collector's stop flushes its
		// files.
		env.Signal(syscall.SIGTERM)
		if code := env.AwaitExit(); code != 0 {
			t.Errorf("exit status after SIGTERM: %d", code)
		}
		got := col.Read(t)

		var spans, connects []otelcoltest.Span
		for _, sp := range got.From(telemetry.ServiceName) {
			if sp.Name == "freecode.connect" {
				connects = append(connects, sp)
			} else {
				spans = append(spans, sp)
			}
		}
		root := "remote:" + parentID + " > freecode.batch"
		want := []string{
			root,
			root + " > execute_tool mcp__traced__lookup",
			root + " > execute_tool mcp__traced__lookup > freecode.attempt",
			root + " > execute_tool mcp__traced__lookup > freecode.attempt > tools/call lookup",
			root + " > execute_tool mcp__traced__lookup > freecode.permission",
			root + " > execute_tool mcp__traced__lookup > freecode.validate",
			root + " > execute_tool mcp__traced__nosuch",
			root + " > execute_tool mcp__traced__nosuch > freecode.validate",
			root + " > execute_tool mcp__traced__write",
			root + " > execute_tool mcp__traced__write > freecode.attempt",
			root + " > execute_tool mcp__traced__write > freecode.attempt > tools/call write",
			root + " > execute_tool mcp__traced__write > freecode.permission",
			root + " > execute_tool mcp__traced__write > freecode.permission > freecode.permission.wait",
			root + " > execute_tool mcp__traced__write > freecode.validate",
		}
		if diff := cmp.Diff(want, got.Paths(spans)); diff != "" {
			t.Errorf("FreeCode's spans (-want +got):\n%s", diff)
		}
		for _, sp := range spans {
			if sp.TraceID != traceID {
				t.Errorf("span %q is of trace %s, want the frontend's %s", sp.Name, sp.TraceID, traceID)
			}
		}

		batch := otelcoltest.Only(t, spans, "freecode.batch")
		frontend := batch.Attrs.Text("freecode.frontend")
		if diff := cmp.Diff(otelcoltest.Attrs{"freecode.batch.size": int64(3), "freecode.frontend": frontend}, batch.Attrs); diff != "" || frontend == "" {
			t.Errorf("the batch's attributes (-want +got):\n%s", diff)
		}
		otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"), otelcoltest.ToolCall{
			ID: "mcp__traced__lookup", CallID: "1", Server: "traced", Decision: "allowed", Outcome: "ok"})
		otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__write"), otelcoltest.ToolCall{
			ID: "mcp__traced__write", CallID: "2", Server: "traced", Decision: "asked", Answer: "allowOnce", Outcome: "ok"})
		otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__nosuch"), otelcoltest.ToolCall{
			ID: "mcp__traced__nosuch", CallID: "3", Decision: "invalid", Outcome: "invalid", ErrorType: "invalid"})
		wait := otelcoltest.Only(t, spans, "freecode.permission.wait")
		if diff := cmp.Diff(otelcoltest.Attrs{"freecode.permission.answer": "allowOnce"}, wait.Attrs); diff != "" {
			t.Errorf("freecode.permission.wait (-want +got):\n%s", diff)
		}

		// The MCP client spans, and the server's own spans as their
		// children: the trace went on to the server in _meta.
		serverSpans := got.From(mcptest.TracedServiceName)
		if len(serverSpans) != 2 {
			t.Errorf("%d spans of the server, want 2 (lookup, write)", len(serverSpans))
		}
		for _, tool := range []string{"lookup", "write"} {
			mc := otelcoltest.MCPCall{Tool: tool, Transport: "pipe"}
			client := otelcoltest.Only(t, spans, "tools/call "+tool)
			otelcoltest.CheckClientSpan(t, client, mc)
			otelcoltest.CheckServerSpan(t, otelcoltest.Only(t, serverSpans, "tools/call "+tool), client, mc)
		}

		// The server's connect: a trace of its own.
		if len(connects) != 1 {
			t.Fatalf("%d connect spans, want 1", len(connects))
		}
		c := connects[0]
		if c.ParentSpanID != "" || c.TraceID == traceID || c.Kind != "client" || c.StatusCode != "unset" {
			t.Errorf("the connect span: parent %q, trace %s, kind %s, status %s", c.ParentSpanID, c.TraceID, c.Kind, c.StatusCode)
		}
		version := c.Attrs.Text("mcp.protocol.version")
		if diff := cmp.Diff(otelcoltest.Attrs{"freecode.server": "traced", "network.transport": "pipe", "mcp.protocol.version": version}, c.Attrs); diff != "" || version == "" {
			t.Errorf("the connect span's attributes (-want +got):\n%s", diff)
		}

		// Metrics, as the last export (at exit) had them.
		otelcoltest.CheckOperationDuration(t, got.Metric("mcp.client.operation.duration"),
			otelcoltest.MCPCall{Tool: "lookup", Transport: "pipe"}, otelcoltest.MCPCall{Tool: "write", Transport: "pipe"})
		calls := got.Metric("freecode.tool.calls")
		if calls == nil || calls.Type != "sum" || !calls.Monotonic || calls.Unit != "{call}" {
			t.Fatalf("freecode.tool.calls: %+v", calls)
		}
		counts := map[string]any{}
		for _, p := range calls.Points {
			counts[p.Attrs.Text("freecode.permission.decision")+"/"+p.Attrs.Text("freecode.outcome")] = p.Value
		}
		if diff := cmp.Diff(map[string]any{"allowed/ok": int64(1), "asked/ok": int64(1), "invalid/invalid": int64(1)}, counts); diff != "" {
			t.Errorf("freecode.tool.calls by decision/outcome (-want +got):\n%s", diff)
		}
		pw := got.Metric("freecode.permission.wait")
		if pw == nil || pw.Type != "histogram" || pw.Unit != "s" || len(pw.Points) != 1 || pw.Points[0].Count != 1 ||
			!cmp.Equal(pw.Points[0].Attrs, otelcoltest.Attrs{"freecode.permission.answer": "allowOnce"}) {
			t.Errorf("freecode.permission.wait: %+v", pw)
		}
		sd := got.Metric("mcp.client.session.duration")
		if sd == nil || sd.Type != "histogram" || sd.Unit != "s" || len(sd.Points) != 1 || sd.Points[0].Count != 1 ||
			!cmp.Equal(sd.Points[0].Bounds, otelcoltest.DurationBuckets) ||
			!cmp.Equal(sd.Points[0].Attrs, otelcoltest.Attrs{"freecode.server": "traced", "network.transport": "pipe", "mcp.protocol.version": version}) {
			t.Errorf("mcp.client.session.duration (the session closed at exit, no error.type): %+v", sd)
		}
		for _, m := range got.Metrics {
			if m.Resource.Text("service.name") != telemetry.ServiceName {
				t.Errorf("metric %s from the resource %v", m.Name, m.Resource)
			}
		}

		// The events: each call's decision.
		evs := got.Events(telemetry.EventToolDecision)
		if len(evs) != 3 {
			t.Fatalf("%d events, want 3: %+v", len(evs), got.Logs)
		}
		byTool := map[string]otelcoltest.LogRecord{}
		for _, ev := range evs {
			byTool[ev.Attrs.Text("gen_ai.tool.name")] = ev
		}
		otelcoltest.CheckToolDecision(t, byTool["mcp__traced__lookup"], otelcoltest.Decision{Frontend: frontend, Tool: "mcp__traced__lookup",
			Server: "traced", Decision: "allowed", Outcome: "ok"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"))
		otelcoltest.CheckToolDecision(t, byTool["mcp__traced__write"], otelcoltest.Decision{Frontend: frontend, Tool: "mcp__traced__write",
			Server: "traced", Decision: "asked", Answer: "allowOnce", Outcome: "ok"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__write"))
		otelcoltest.CheckToolDecision(t, byTool["mcp__traced__nosuch"], otelcoltest.Decision{Frontend: frontend, Tool: "mcp__traced__nosuch",
			Decision: "invalid", Outcome: "error"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__nosuch"))
	}, servertest.Modes(servertest.Binary))
}
