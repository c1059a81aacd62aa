package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/otelcoltest"
)

// These tests export to a real OpenTelemetry Collector (otelcoltest: the
// one interop/otelcol builds) and read back what its file exporter wrote;
// the test MCP server (mcptest.NewTracedServer) exports its own spans to
// the same collector, children of the trace context FreeCode sends it in
// params._meta.

// tracedConfig writes a config whose one server, traced, is entry (with
// its name), and the user's rules beside it (nil: none); it returns the
// config's path.
func tracedConfig(t *testing.T, entry map[string]any, rules map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	entry["name"] = "traced"
	cfg := filepath.Join(dir, "config.json")
	b, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{entry}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if rules != nil {
		b, _ := json.Marshal(map[string]any{"permissions": rules})
		if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// tracedHTTP serves the traced server over Streamable HTTP on loopback,
// exporting to col, and returns its config entry, pinned to 2025-11-25 so
// that the session has an id (2026-07-28 has no session).
func tracedHTTP(t *testing.T, col *otelcoltest.Collector) map[string]any {
	t.Helper()
	server, shutdown, err := mcptest.NewTracedServer(col.URL, "", "tcp")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcptest.HTTPHandler(t, server, config.TransportHTTP))
	t.Cleanup(func() {
		srv.Close()
		shutdown(context.Background())
	})
	return map[string]any{"type": "remote", "url": srv.URL, "transport": "http", "protocolVersion": "2025-11-25"}
}

// tracedStdio is the config entry of the traced server on stdio: this
// test binary, re-executed (TestMain), exporting to col; callLog is its
// crash_lookup's call log.
func tracedStdio(t *testing.T, col *otelcoltest.Collector, callLog string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"type": "local", "command": []string{exe},
		"env": map[string]string{mcptest.TracedServerEnv: col.URL, mcptest.TracedCallLogEnv: callLog}}
}

// freecodeSpans splits FreeCode's spans of e into the connects and the
// rest.
func freecodeSpans(e *otelcoltest.Export) (connects, spans []otelcoltest.Span) {
	for _, sp := range e.From(telemetry.ServiceName) {
		if sp.Name == "freecode.connect" {
			connects = append(connects, sp)
		} else {
			spans = append(spans, sp)
		}
	}
	return connects, spans
}

// checkConnect checks a connect span: a root of kind client, its server,
// transport, the protocol version and the session id (want: "" for none),
// failed with errType ("": not).
func checkConnect(t *testing.T, sp otelcoltest.Span, transport, version, session, errType string) {
	t.Helper()
	want := otelcoltest.Attrs{"freecode.server": "traced", "network.transport": transport}
	if version != "" {
		want["mcp.protocol.version"] = version
	}
	if session != "" {
		want["mcp.session.id"] = session
	}
	if errType != "" {
		want["error.type"] = errType
	}
	if diff := cmp.Diff(want, sp.Attrs); diff != "" {
		t.Errorf("freecode.connect (-want +got):\n%s", diff)
	}
	if sp.ParentSpanID != "" || sp.Kind != "client" {
		t.Errorf("freecode.connect: parent %q, kind %s; want a root of kind client", sp.ParentSpanID, sp.Kind)
	}
}

// (b) `freecode tools call` of a server over Streamable HTTP: the batch
// is a root (the CLI has no turn to join), the tools/call span carries
// the session's id, which is the server's, and the server's span is its
// child; the metrics and the event, with the CLI as the frontend.
func TestTelemetryToolsCallToACollector(t *testing.T) {
	col := otelcoltest.Start(t)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL})
	cfg := tracedConfig(t, tracedHTTP(t, col), nil)
	if out := mustRun(t, "--config", cfg, "tools", "--project", t.TempDir(), "call", "mcp__traced__lookup"); out != "found\n" {
		t.Fatalf("output %q", out)
	}
	got := col.Read(t)

	connects, spans := freecodeSpans(got)
	root := "freecode.batch"
	want := []string{
		root,
		root + " > execute_tool mcp__traced__lookup",
		root + " > execute_tool mcp__traced__lookup > freecode.attempt",
		root + " > execute_tool mcp__traced__lookup > freecode.attempt > tools/call lookup",
		root + " > execute_tool mcp__traced__lookup > freecode.permission",
		root + " > execute_tool mcp__traced__lookup > freecode.validate",
	}
	if diff := cmp.Diff(want, got.Paths(spans)); diff != "" {
		t.Errorf("FreeCode's spans (-want +got):\n%s", diff)
	}
	batch := otelcoltest.Only(t, spans, "freecode.batch")
	if diff := cmp.Diff(otelcoltest.Attrs{"freecode.batch.size": int64(1), "freecode.frontend": "cli"}, batch.Attrs); diff != "" {
		t.Errorf("the batch (-want +got):\n%s", diff)
	}
	otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"), otelcoltest.ToolCall{
		ID: "mcp__traced__lookup", CallID: "cli-1", Server: "traced", Decision: "allowed", Outcome: "ok"})

	server := otelcoltest.Only(t, got.From(mcptest.TracedServiceName), "tools/call lookup")
	session := server.Attrs.Text("mcp.session.id")
	if session == "" {
		t.Fatalf("the server's span has no mcp.session.id: %v", server.Attrs)
	}
	call := otelcoltest.MCPCall{Tool: "lookup", Transport: "tcp", SessionID: session}
	client := otelcoltest.Only(t, spans, "tools/call lookup")
	otelcoltest.CheckClientSpan(t, client, call)
	if v := client.Attrs.Text("mcp.protocol.version"); v != "2025-11-25" {
		t.Errorf("tools/call's mcp.protocol.version = %q, want the pinned 2025-11-25", v)
	}
	otelcoltest.CheckServerSpan(t, server, client, call)
	if len(connects) != 1 {
		t.Fatalf("%d connect spans, want 1", len(connects))
	}
	checkConnect(t, connects[0], "tcp", "2025-11-25", session, "")

	otelcoltest.CheckOperationDuration(t, got.Metric("mcp.client.operation.duration"), call)
	sd := got.Metric("mcp.client.session.duration")
	if sd == nil || len(sd.Points) != 1 || sd.Points[0].Count != 1 || sd.Unit != "s" ||
		!cmp.Equal(sd.Points[0].Attrs, otelcoltest.Attrs{"freecode.server": "traced", "network.transport": "tcp", "mcp.protocol.version": "2025-11-25"}) {
		t.Errorf("mcp.client.session.duration: %+v", sd)
	}
	evs := got.Events(telemetry.EventToolDecision)
	if len(evs) != 1 {
		t.Fatalf("events: %+v", got.Logs)
	}
	otelcoltest.CheckToolDecision(t, evs[0], otelcoltest.Decision{Frontend: "cli", Tool: "mcp__traced__lookup", Server: "traced",
		Decision: "allowed", Outcome: "ok"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"))
}

// (d) A call a rule denies: its execute_tool and freecode.permission
// spans name the rule and its source, nothing reaches the server (no
// attempt, no tools/call, no server span, no MCP duration), the counter
// counts it denied, and the event names the rule's file.
func TestTelemetryDeniedCallToACollector(t *testing.T) {
	col := otelcoltest.Start(t)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL})
	cfg := tracedConfig(t, tracedHTTP(t, col), map[string][]string{"deny": {"mcp__traced__write"}})
	out, errOut, code := run(t, "--config", cfg, "tools", "--project", t.TempDir(), "call", "mcp__traced__write", "--yes")
	if code != 1 || !strings.Contains(out, "mcp__traced__write") {
		t.Fatalf("a denied call: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	got := col.Read(t)

	_, spans := freecodeSpans(got)
	want := []string{
		"freecode.batch",
		"freecode.batch > execute_tool mcp__traced__write",
		"freecode.batch > execute_tool mcp__traced__write > freecode.permission",
		"freecode.batch > execute_tool mcp__traced__write > freecode.validate",
	}
	if diff := cmp.Diff(want, got.Paths(spans)); diff != "" {
		t.Errorf("FreeCode's spans (-want +got):\n%s", diff)
	}
	otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__write"), otelcoltest.ToolCall{
		ID: "mcp__traced__write", CallID: "cli-1", Server: "traced", Decision: "denied", Rule: "mcp__traced__write", RuleSource: "user",
		Outcome: "denied", ErrorType: "denied"})
	gate := otelcoltest.Only(t, spans, "freecode.permission")
	if diff := cmp.Diff(otelcoltest.Attrs{"freecode.permission.decision": "denied", "freecode.permission.rule": "mcp__traced__write",
		"freecode.permission.rule.source": "user"}, gate.Attrs); diff != "" {
		t.Errorf("freecode.permission (-want +got):\n%s", diff)
	}
	if n := len(got.From(mcptest.TracedServiceName)); n != 0 {
		t.Errorf("the server exported %d spans of a call that never reached it", n)
	}
	if m := got.Metric("mcp.client.operation.duration"); m != nil {
		t.Errorf("an MCP duration of a call that never reached its server: %+v", m)
	}
	calls := got.Metric("freecode.tool.calls")
	if calls == nil || len(calls.Points) != 1 || calls.Points[0].Value != int64(1) ||
		!cmp.Equal(calls.Points[0].Attrs, otelcoltest.Attrs{"freecode.permission.decision": "denied", "freecode.outcome": "denied"}) {
		t.Errorf("freecode.tool.calls: %+v", calls)
	}
	evs := got.Events(telemetry.EventToolDecision)
	if len(evs) != 1 {
		t.Fatalf("events: %+v", got.Logs)
	}
	otelcoltest.CheckToolDecision(t, evs[0], otelcoltest.Decision{Frontend: "cli", Tool: "mcp__traced__write", Server: "traced",
		Decision: "denied", Rule: "mcp__traced__write", RuleFile: filepath.Join(filepath.Dir(cfg), "settings.json"), Outcome: "denied"},
		otelcoltest.Only(t, spans, "execute_tool mcp__traced__write"))
}

// (e) A read-only call whose server crashes under it is retried after
// the reconnect: one execute_tool, two attempts (the first failed with
// connection_lost), two tools/call spans, each with the server's span of
// the process that served it as its child (the first exported its span
// before it crashed), two connects, and the MCP duration and session
// duration of each.
func TestTelemetryRetriedCallToACollector(t *testing.T) {
	col := otelcoltest.Start(t)
	telemetryEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL})
	calls := filepath.Join(t.TempDir(), "calls")
	cfg := tracedConfig(t, tracedStdio(t, col, calls), nil)
	out, errOut, code := run(t, "--config", cfg, "tools", "--project", t.TempDir(), "call", "mcp__traced__crash_lookup")
	if code != 0 || out != "crash_lookup call 2\n" {
		t.Fatalf("a read-only call whose server crashed: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}
	got := col.Read(t)

	connects, spans := freecodeSpans(got)
	root := "freecode.batch > execute_tool mcp__traced__crash_lookup"
	want := []string{
		"freecode.batch",
		root,
		root + " > freecode.attempt",
		root + " > freecode.attempt",
		root + " > freecode.attempt > tools/call crash_lookup",
		root + " > freecode.attempt > tools/call crash_lookup",
		root + " > freecode.permission",
		root + " > freecode.validate",
	}
	if diff := cmp.Diff(want, got.Paths(spans)); diff != "" {
		t.Errorf("FreeCode's spans (-want +got):\n%s", diff)
	}
	otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__crash_lookup"), otelcoltest.ToolCall{
		ID: "mcp__traced__crash_lookup", CallID: "cli-1", Server: "traced", Decision: "allowed", Outcome: "ok"})

	// Each attempt: its number, its MCP call, and the server's span.
	servers := got.From(mcptest.TracedServiceName)
	if len(servers) != 2 {
		t.Errorf("%d spans of the server, want 2 (the crashed process's, the second's)", len(servers))
	}
	byParent := map[string]otelcoltest.Span{}
	for _, sp := range servers {
		byParent[sp.ParentSpanID] = sp
	}
	attempts := map[int64]string{}
	for _, at := range got.SpansNamed("freecode.attempt") {
		n, _ := at.Attrs["freecode.attempt"].(int64)
		attempts[n] = at.Attrs.Text("error.type")
		failed := n == 1
		wantAttrs := otelcoltest.Attrs{"freecode.attempt": n}
		if failed {
			wantAttrs["error.type"] = "connection_lost"
		}
		if diff := cmp.Diff(wantAttrs, at.Attrs); diff != "" || at.StatusCode != map[bool]string{true: "error", false: "unset"}[failed] {
			t.Errorf("attempt %d, status %s (-want +got):\n%s", n, at.StatusCode, diff)
		}
		var client *otelcoltest.Span
		for _, sp := range spans {
			if sp.ParentSpanID == at.SpanID {
				client = &sp
			}
		}
		if client == nil {
			t.Errorf("attempt %d has no tools/call span", n)
			continue
		}
		call := otelcoltest.MCPCall{Tool: "crash_lookup", Transport: "pipe"}
		if failed {
			call.ErrorType = "connection_lost"
		}
		otelcoltest.CheckClientSpan(t, *client, call)
		if sp, ok := byParent[client.SpanID]; ok {
			otelcoltest.CheckServerSpan(t, sp, *client, call)
		} else {
			t.Errorf("attempt %d: no server span is the child of its tools/call span %s", n, client.SpanID)
		}
	}
	if diff := cmp.Diff(map[int64]string{1: "connection_lost", 2: ""}, attempts); diff != "" {
		t.Errorf("attempts by number: error.type (-want +got):\n%s", diff)
	}

	// The first connect and the reconnect, each a root.
	if len(connects) != 2 {
		t.Fatalf("%d connect spans, want 2", len(connects))
	}
	for _, c := range connects {
		checkConnect(t, c, "pipe", c.Attrs.Text("mcp.protocol.version"), "", "")
		if c.Attrs.Text("mcp.protocol.version") == "" {
			t.Errorf("a connect without mcp.protocol.version: %v", c.Attrs)
		}
	}

	otelcoltest.CheckOperationDuration(t, got.Metric("mcp.client.operation.duration"),
		otelcoltest.MCPCall{Tool: "crash_lookup", Transport: "pipe", ErrorType: "connection_lost"},
		otelcoltest.MCPCall{Tool: "crash_lookup", Transport: "pipe"})
	sd := got.Metric("mcp.client.session.duration")
	ends := map[string]uint64{}
	if sd != nil {
		for _, p := range sd.Points {
			ends[p.Attrs.Text("error.type")] += p.Count
		}
	}
	// The crashed session ends as process_exited, whether the Conn's
	// watch saw the pipe's end or the process's exit first (exitOr,
	// mcp/supervise.go).
	if diff := cmp.Diff(map[string]uint64{"process_exited": 1, "": 1}, ends); diff != "" {
		t.Errorf("mcp.client.session.duration by error.type: the crashed session's and the closed one's (-want +got):\n%s", diff)
	}
	evs := got.Events(telemetry.EventToolDecision)
	if len(evs) != 1 {
		t.Fatalf("events: %+v", got.Logs)
	}
	otelcoltest.CheckToolDecision(t, evs[0], otelcoltest.Decision{Frontend: "cli", Tool: "mcp__traced__crash_lookup", Server: "traced",
		Decision: "allowed", Outcome: "ok"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__crash_lookup"))
}

// (c) A call through the gateway, `freecode mcp serve` on stdio, from a
// client that traces its own turn and sends its trace context in the
// call's params._meta: FreeCode's batch is the child of the client's
// span, in its trace, with its tracestate, down to the server's span, so
// the collector holds one trace from the client to the server; the event
// names the gateway's client.
func TestTelemetryGatewayToACollector(t *testing.T) {
	col := otelcoltest.Start(t)
	home := t.TempDir()
	cfg := tracedConfig(t, tracedStdio(t, col, ""), nil)

	// The gateway, its telemetry on by its own process's variables.
	cmd := exec.Command(freecodeBin, "--config", cfg, "mcp", "serve", "--project", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+home, "OTEL_EXPORTER_OTLP_ENDPOINT="+col.URL, "OTEL_TRACES_EXPORTER=", "OTEL_METRICS_EXPORTER=",
		"OTEL_LOGS_EXPORTER=", "OTEL_SDK_DISABLED=", "OTEL_SERVICE_NAME=", "OTEL_RESOURCE_ATTRIBUTES=", "OTEL_EXPORTER_OTLP_PROTOCOL=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	// The client's own tracing, to the same collector.
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(col.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "gateway-client"))))
	ctx, turn := tp.Tracer("test").Start(t.Context(), "client turn")
	meta := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, meta)
	meta["tracestate"] = "vendor=opaque"

	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-gateway-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcpsdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to freecode mcp serve: %v\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "mcp__traced__lookup", Arguments: map[string]any{},
		Meta: mcpsdk.Meta{"traceparent": meta["traceparent"], "tracestate": meta["tracestate"]}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v, %+v\n%s", err, res, stderr.String())
	}
	turn.End()
	if err := tp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The client leaves: the gateway exits, flushing its telemetry.
	cs.Close()
	err = cmd.Wait()
	exited = true
	if err != nil {
		t.Fatalf("freecode mcp serve: %v\n%s", err, stderr.String())
	}
	got := col.Read(t)

	turnSC := turn.SpanContext()
	clientSpan := otelcoltest.Only(t, got.From("gateway-client"), "client turn")
	if clientSpan.SpanID != turnSC.SpanID().String() {
		t.Fatalf("the client's span read back is %s, want %s", clientSpan.SpanID, turnSC.SpanID())
	}
	_, spans := freecodeSpans(got)
	root := "client turn > freecode.batch"
	want := []string{
		root,
		root + " > execute_tool mcp__traced__lookup",
		root + " > execute_tool mcp__traced__lookup > freecode.attempt",
		root + " > execute_tool mcp__traced__lookup > freecode.attempt > tools/call lookup",
		root + " > execute_tool mcp__traced__lookup > freecode.permission",
		root + " > execute_tool mcp__traced__lookup > freecode.validate",
	}
	if diff := cmp.Diff(want, got.Paths(spans)); diff != "" {
		t.Errorf("FreeCode's spans (-want +got):\n%s", diff)
	}
	for _, sp := range spans {
		if sp.TraceID != turnSC.TraceID().String() || sp.TraceState != "vendor=opaque" {
			t.Errorf("span %q: trace %s, tracestate %q; want the client's %s, vendor=opaque", sp.Name, sp.TraceID, sp.TraceState, turnSC.TraceID())
		}
	}
	batch := otelcoltest.Only(t, spans, "freecode.batch")
	if batch.ParentSpanID != turnSC.SpanID().String() {
		t.Errorf("the batch's parent is %s, want the client's span %s", batch.ParentSpanID, turnSC.SpanID())
	}
	if diff := cmp.Diff(otelcoltest.Attrs{"freecode.batch.size": int64(1), "freecode.frontend": "gateway:test-gateway-client"}, batch.Attrs); diff != "" {
		t.Errorf("the batch (-want +got):\n%s", diff)
	}
	otelcoltest.CheckExecuteTool(t, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"), otelcoltest.ToolCall{
		ID: "mcp__traced__lookup", CallID: "mcp-serve-1", Server: "traced", Decision: "allowed", Outcome: "ok"})
	call := otelcoltest.MCPCall{Tool: "lookup", Transport: "pipe"}
	client := otelcoltest.Only(t, spans, "tools/call lookup")
	otelcoltest.CheckClientSpan(t, client, call)
	server := otelcoltest.Only(t, got.From(mcptest.TracedServiceName), "tools/call lookup")
	otelcoltest.CheckServerSpan(t, server, client, call)
	if p := got.Path(server); p != root+" > execute_tool mcp__traced__lookup > freecode.attempt > tools/call lookup > tools/call lookup" {
		t.Errorf("the server's span's path: %s", p)
	}

	otelcoltest.CheckOperationDuration(t, got.Metric("mcp.client.operation.duration"), call)
	evs := got.Events(telemetry.EventToolDecision)
	if len(evs) != 1 {
		t.Fatalf("events: %+v", got.Logs)
	}
	otelcoltest.CheckToolDecision(t, evs[0], otelcoltest.Decision{Frontend: "gateway:test-gateway-client", Tool: "mcp__traced__lookup",
		Server: "traced", Decision: "allowed", Outcome: "ok"}, otelcoltest.Only(t, spans, "execute_tool mcp__traced__lookup"))
}
