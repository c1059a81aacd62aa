package mcpserve

import (
	"encoding/json"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/freecode/freecode/workspace"
)

// A client's trace context in a tools/call's params._meta (traceparent,
// tracestate) is the parent of the gateway's batch: every span of the
// call is of the client's trace, the tracestate goes along, and the
// trace context sent on to the server is of that trace. A call without
// one, or with one that is no traceparent, starts a trace of its own.
func TestGatewayJoinsTheClientsTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	w, err := workspace.New(t.Context(), &workspace.Options{ConfigPath: e.cfgPath, Root: e.root, ResultsDir: t.TempDir(), TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.w, e.s = w, New(w, nil)
	t.Cleanup(func() { e.s.Close() })
	cs := e.connect(t, nil)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parentID = "00f067aa0ba902b7"
	call := func(meta mcpsdk.Meta) []sdktrace.ReadOnlySpan {
		t.Helper()
		before := len(rec.Ended())
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Meta: meta, Name: "mcp__srv__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		if err != nil || res.IsError {
			t.Fatalf("call: %v, %+v", err, res)
		}
		return rec.Ended()[before:]
	}

	spans := call(mcpsdk.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01", "tracestate": "vendor=opaque"})
	names := map[string]int{}
	for _, sp := range spans {
		names[sp.Name()]++
		if got := sp.SpanContext().TraceID().String(); got != traceID {
			t.Errorf("span %q is of trace %s, want the client's %s", sp.Name(), got, traceID)
		}
		if got := sp.SpanContext().TraceState().String(); got != "vendor=opaque" {
			t.Errorf("span %q has tracestate %q, want the client's", sp.Name(), got)
		}
		if sp.Name() == "freecode.batch" {
			if got := sp.Parent().SpanID().String(); got != parentID || !sp.Parent().IsRemote() {
				t.Errorf("the batch's parent is %s (remote %v), want the client's span %s", got, sp.Parent().IsRemote(), parentID)
			}
			if got := attrOf(sp, "freecode.frontend"); got != "gateway:test-client" {
				t.Errorf("the batch's frontend = %q", got)
			}
		}
	}
	for _, n := range []string{"freecode.batch", "execute_tool mcp__srv__echo", "freecode.attempt", "tools/call echo"} {
		if names[n] != 1 {
			t.Errorf("%d spans %q, want 1; spans: %v", names[n], n, names)
		}
	}

	for _, meta := range []mcpsdk.Meta{nil, {"traceparent": "not a traceparent"}, {"traceparent": 7}} {
		for _, sp := range call(meta) {
			if sp.SpanContext().TraceID().String() == traceID {
				t.Errorf("with _meta %v, span %q is of the earlier call's trace", meta, sp.Name())
			}
			if sp.Name() == "freecode.batch" && sp.Parent().IsValid() {
				t.Errorf("with _meta %v, the batch has the parent %s", meta, sp.Parent().SpanID())
			}
		}
	}
}

// attrOf returns the string attribute key of sp ("" without it).
func attrOf(sp sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
