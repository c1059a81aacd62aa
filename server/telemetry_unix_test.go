//go:build unix

package server_test

import (
	"encoding/hex"
	"sort"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// The sidecar's telemetry, turned on by the OTEL_* variables of its own
// process as a user would: a batch sent with a traceparent continues that
// trace (every span of it, down to the MCP tools/call), the server's
// connect is a span of its own, the call's
// freecode.tool_decision event arrives, and what was buffered is flushed
// when the sidecar exits. Binary mode alone: freecode-serve's main starts
// telemetry from its environment, which a sidecar in the test process
// does not have.
func TestTelemetryThroughTheSidecar(t *testing.T) {
	rcv := telemetrytest.NewReceiver(t)
	// Only FreeCode's variables: the test's own environment may have
	// others.
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "",
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "", "OTEL_TRACES_EXPORTER": "", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "", "OTEL_SDK_DISABLED": "", "OTEL_SERVICE_NAME": "", "OTEL_RESOURCE_ATTRIBUTES": "",
	} {
		t.Setenv(k, v)
	}
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("srv", protocol.StateConnected)
		const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		const parentID = "00f067aa0ba902b7"
		var res protocol.ExecuteResult
		if err := env.Editor.Call(t.Context(), protocol.MethodToolsExecute, &protocol.ExecuteParams{
			Calls:       []protocol.ToolCall{call("1", "mcp__srv__echo", `{"text":"hello"}`)},
			Traceparent: "00-" + traceID + "-" + parentID + "-01",
		}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 1 || res.Results[0].IsError {
			t.Fatalf("results: %+v", res.Results)
		}
		// Exiting flushes the exporters.
		env.Signal(syscall.SIGTERM)
		if code := env.AwaitExit(); code != 0 {
			t.Errorf("exit status after SIGTERM: %d", code)
		}

		var names []string
		var batchFrontend string
		connects := 0
		for _, sp := range rcv.Spans() {
			if sp.Name == "freecode.connect" {
				// The server's connect is a trace of its own.
				connects++
				if a := telemetrytest.Attrs(sp.Attributes); a["freecode.server"] != "srv" || a["network.transport"] != "pipe" || len(sp.ParentSpanId) != 0 {
					t.Errorf("the connect span: %v, parent %x", a, sp.ParentSpanId)
				}
				continue
			}
			names = append(names, sp.Name)
			if got := hex.EncodeToString(sp.TraceId); got != traceID {
				t.Errorf("span %q is of trace %s, want the frontend's %s", sp.Name, got, traceID)
			}
			if sp.Name == "freecode.batch" {
				if got := hex.EncodeToString(sp.ParentSpanId); got != parentID {
					t.Errorf("the batch's parent is %s, want the traceparent's %s", got, parentID)
				}
				batchFrontend = telemetrytest.Attrs(sp.Attributes)["freecode.frontend"]
			}
		}
		sort.Strings(names)
		want := []string{"execute_tool mcp__srv__echo", "freecode.attempt", "freecode.batch", "freecode.permission", "freecode.validate", "tools/call echo"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("spans (-want +got):\n%s", diff)
		}
		if connects != 1 {
			t.Errorf("%d connect spans, want 1", connects)
		}
		if res := rcv.Resource(); res["service.name"] != telemetry.ServiceName {
			t.Errorf("resource = %v", res)
		}

		logs := rcv.Logs()
		if len(logs) != 1 || logs[0].EventName != telemetry.EventToolDecision {
			t.Fatalf("events: %v", logs)
		}
		a := telemetrytest.Attrs(logs[0].Attributes)
		if a["gen_ai.tool.name"] != "mcp__srv__echo" || a["freecode.server"] != "srv" || a["freecode.outcome"] != "ok" ||
			a["freecode.frontend"] == "" || a["freecode.frontend"] != batchFrontend {
			t.Errorf("the event's attributes %v; the batch's frontend %q", a, batchFrontend)
		}
		if ms := rcv.Metrics(); len(ms) != 0 {
			t.Errorf("OTEL_METRICS_EXPORTER=none, and %d metrics arrived", len(ms))
		}
	}, servertest.Modes(servertest.Binary))
}
