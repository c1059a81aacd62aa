package workspace

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// startTelemetry exports traces and events (and metrics) to a loopback
// OTLP/HTTP receiver, as the standard variables would.
func startTelemetry(t *testing.T) (*telemetrytest.Receiver, *telemetry.Providers) {
	rcv := telemetrytest.NewReceiver(t)
	s, err := telemetry.Resolve(nil, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := telemetry.Start(t.Context(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rcv, p
}

// exportedBytes is every span, metric and event the receiver holds, as
// protobuf bytes, and the resource's attributes.
func exportedBytes(rcv *telemetrytest.Receiver) string {
	var b strings.Builder
	for _, m := range rcv.Spans() {
		out, _ := proto.Marshal(m)
		b.Write(out)
	}
	for _, m := range rcv.Metrics() {
		out, _ := proto.Marshal(m)
		b.Write(out)
	}
	for _, m := range rcv.Logs() {
		out, _ := proto.Marshal(m)
		b.Write(out)
	}
	for k, v := range rcv.Resource() {
		b.WriteString(k + "=" + v)
	}
	return b.String()
}

// spanNamed returns the one span of name.
func spanNamed(t *testing.T, rcv *telemetrytest.Receiver, name string) *tracepb.Span {
	t.Helper()
	var found []*tracepb.Span
	for _, sp := range rcv.Spans() {
		if sp.Name == name {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q", len(found), name)
	}
	return found[0]
}

// With the opt-in, a call's arguments and result are on its execute_tool
// span, members named like credentials masked as the audit trail masks
// them, their values masked in the result too, the server's ${secret:}
// values masked as its logs mask them; neither secret is in any byte
// exported. Without it, neither attribute is sent.
func TestTelemetryArguments(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	const secret = "sEcReT-v4lue-from-the-store"
	const token = "ghp_t0kenLikeArgumentValue"
	dir, err := config.SecretsDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secretstore.Open(dir).Set(t.Context(), "TOK", secret); err != nil {
		t.Fatal(err)
	}
	for _, optIn := range []bool{true, false} {
		rcv, p := startTelemetry(t)
		e := newEnv(t)
		srv := server(t, "s")
		srv["env"].(map[string]string)["UPSTREAM_KEY"] = "${secret:TOK}"
		writeJSON(t, e.cfgPath, mcpSection([]map[string]any{srv}, nil))
		w := e.openWith(t, &Options{TracerProvider: p.Tracer, MeterProvider: p.Meter, OnCallEvent: p.CallEvents, TelemetryArguments: optIn})
		settle(t, w)
		args := `{"text": "look: ` + secret + ` and ` + token + `", "name": "n1", "api_token": "` + token + `"}`
		r := call(t, w, "mcp__s__echo", args, allowOnce)
		if r.IsError || !strings.Contains(r.Text(), secret) {
			t.Fatalf("the echo: %+v", r)
		}
		w.Close()
		if err := p.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		a := telemetrytest.Attrs(spanNamed(t, rcv, "execute_tool mcp__s__echo").Attributes)
		gotArgs, gotResult := a["gen_ai.tool.call.arguments"], a["gen_ai.tool.call.result"]
		if !optIn {
			if _, ok := a["gen_ai.tool.call.arguments"]; ok {
				t.Errorf("without the opt-in, the arguments are exported: %q", gotArgs)
			}
			if _, ok := a["gen_ai.tool.call.result"]; ok {
				t.Errorf("without the opt-in, the result is exported: %q", gotResult)
			}
			if b := exportedBytes(rcv); strings.Contains(b, "look: ") || strings.Contains(b, "n1") {
				t.Errorf("without the opt-in, something of the arguments is exported")
			}
		} else {
			var m map[string]string
			if err := json.Unmarshal([]byte(gotArgs), &m); err != nil {
				t.Fatalf("gen_ai.tool.call.arguments %q: %v", gotArgs, err)
			}
			if m["api_token"] != "***" || m["name"] != "n1" || m["text"] != "look: *** and ***" {
				t.Errorf("gen_ai.tool.call.arguments = %q", gotArgs)
			}
			if gotResult != "look: *** and ***" {
				t.Errorf("gen_ai.tool.call.result = %q", gotResult)
			}
		}
		if b := exportedBytes(rcv); strings.Contains(b, secret) || strings.Contains(b, token) {
			t.Errorf("opt-in %v: a secret is in an exported byte", optIn)
		}
	}
}

// The bound on what a span carries.
func TestClip(t *testing.T) {
	long := strings.Repeat("é", maxSpanContent) // two bytes each
	got := clip(long)
	if len(got) > maxSpanContent+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("clip: %d bytes, suffix %q", len(got), got[len(got)-6:])
	}
	if clip("short") != "short" {
		t.Error("clip cut a short text")
	}
}

// The freecode.tool_decision event of a call carries the trace id and
// span id of the call's execute_tool span.
func TestTelemetryEventLinkedToSpan(t *testing.T) {
	rcv, p := startTelemetry(t)
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "s")}, nil))
	w := e.openWith(t, &Options{TracerProvider: p.Tracer, OnCallEvent: p.CallEvents})
	settle(t, w)
	w.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "1", Tool: "mcp__s__echo", Arguments: json.RawMessage(`{"text":"a"}`)},
		{CallID: "2", Tool: "mcp__s__write", Arguments: json.RawMessage(`{"text":"b"}`)},
	}, &orchestrator.ExecOptions{Approver: allowOnce})
	w.Close() // the trail's writer made the events
	if err := p.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := map[string]*tracepb.Span{}
	for _, sp := range rcv.Spans() {
		if strings.HasPrefix(sp.Name, "execute_tool ") {
			spans[telemetrytest.Attrs(sp.Attributes)["gen_ai.tool.name"]] = sp
		}
	}
	logs := rcv.Logs()
	if len(logs) != 2 || len(spans) != 2 {
		t.Fatalf("%d events, %d execute_tool spans; want 2 each", len(logs), len(spans))
	}
	for _, r := range logs {
		tool := telemetrytest.Attrs(r.Attributes)["gen_ai.tool.name"]
		sp := spans[tool]
		if sp == nil {
			t.Fatalf("an event of %q, which has no span", tool)
		}
		if hex.EncodeToString(r.TraceId) != hex.EncodeToString(sp.TraceId) || hex.EncodeToString(r.SpanId) != hex.EncodeToString(sp.SpanId) {
			t.Errorf("the event of %s is of trace %x span %x; its span is %x %x", tool, r.TraceId, r.SpanId, sp.TraceId, sp.SpanId)
		}
	}
	if hex.EncodeToString(logs[0].SpanId) == hex.EncodeToString(logs[1].SpanId) {
		t.Error("two calls' events name one span")
	}
}

// A call whose server's Conn is gone by the time its span ends (the
// server removed from the config during the call) cannot be masked of
// that server's secrets: nothing of it is exported.
func TestSpanContentWithoutTheServersConn(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "s")}, nil))
	w := e.openWith(t, &Options{TelemetryArguments: true})
	settle(t, w)
	res := &orchestrator.ToolResult{Decision: orchestrator.DecisionAllowed}
	res.Content = []mcpsdk.Content{&mcpsdk.TextContent{Text: "the upstream key is sEcReT-v4lue"}}
	rec := orchestrator.CallRecord{Tool: "mcp__gone__echo", Server: "gone", Name: "echo", Decision: orchestrator.DecisionAllowed,
		Args: json.RawMessage(`{"text":"sEcReT-v4lue"}`), Result: res}
	if args, result := w.spanContent(rec); args != "" || result != "" {
		t.Errorf("spanContent of a server with no Conn = %q, %q: want nothing", args, result)
	}
	rec.Server, rec.Tool = "s", "mcp__s__echo"
	if args, result := w.spanContent(rec); args == "" || result == "" {
		t.Errorf("spanContent of a configured server = %q, %q: want both", args, result)
	}
}

// A credential-named member of a JSON result is masked, and so is its
// value where else the result or the arguments repeat it, as the
// arguments' own are.
func TestSpanContentMasksTheResultsOwnCredentials(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "s")}, nil))
	w := e.openWith(t, &Options{TelemetryArguments: true})
	settle(t, w)
	const key = "rEsUlTkEy-0123456789"
	for _, res := range []*orchestrator.ToolResult{
		{Decision: orchestrator.DecisionAllowed, StructuredContent: map[string]any{"api_key": key, "note": "created " + key}},
		{Decision: orchestrator.DecisionAllowed, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: `{"api_key": "` + key + `", "note": "created ` + key + `"}`}}},
	} {
		rec := orchestrator.CallRecord{Tool: "mcp__s__echo", Server: "s", Name: "echo", Decision: orchestrator.DecisionAllowed,
			Args: json.RawMessage(`{"text":"renew ` + key + `"}`), Result: res}
		args, result := w.spanContent(rec)
		if strings.Contains(result, key) || !strings.Contains(result, `"note":"created ***"`) {
			t.Errorf("gen_ai.tool.call.result = %q", result)
		}
		if args != `{"text":"renew ***"}` {
			t.Errorf("gen_ai.tool.call.arguments = %q", args)
		}
	}
}
