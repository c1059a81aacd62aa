package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/config"
)

// A connect is a span of its own, whose failure says its class and not
// its text; a session that was made records its duration when it ends,
// one that was never made records none.
func TestConnectSpansAndSessionDuration(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel := NewTelemetry(tp, mp)

	s := newMemServer(t, "m")
	ok := newTestConnOpts(t, memSrv("m"), nil, &ConnOptions{Dial: s.Dial, Telemetry: tel})
	if err := ok.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	ok.Close()

	failing := newTestConnOpts(t, memSrv("f"), nil, &ConnOptions{NoRetry: true, Telemetry: tel,
		Dial: func(context.Context, config.Server) (mcpsdk.Transport, error) {
			return nil, errors.New("token=s3cret refused")
		}})
	if err := failing.Start(t.Context()); err == nil {
		t.Fatal("Start of a server whose dial fails succeeded")
	}
	blocked := newTestConnOpts(t, memSrv("b"), nil, &ConnOptions{NoRetry: true, Telemetry: tel,
		Policy: func(srv config.Server, _ func(string) (string, bool)) *config.Blocked {
			return &config.Blocked{Reason: "denied by the test"}
		}})
	if err := blocked.Start(t.Context()); err == nil {
		t.Fatal("Start of a blocked server succeeded")
	}

	type spanInfo struct{ Server, Transport, ErrorType, Status, Version string }
	var got []spanInfo
	for _, sp := range spans.Ended() {
		if sp.Name() != "freecode.connect" {
			t.Errorf("span %q", sp.Name())
			continue
		}
		si := spanInfo{Status: sp.Status().Description}
		for _, kv := range sp.Attributes() {
			switch kv.Key {
			case "freecode.server":
				si.Server = kv.Value.AsString()
			case "network.transport":
				si.Transport = kv.Value.AsString()
			case "error.type":
				si.ErrorType = kv.Value.AsString()
			case "mcp.protocol.version":
				si.Version = "set"
			}
		}
		if sp.Status().Code == codes.Error && si.Status == "" {
			t.Errorf("span of %s: an error status without its description", si.Server)
		}
		got = append(got, si)
	}
	want := []spanInfo{
		{Server: "m", Transport: "pipe", Version: "set"},
		{Server: "f", Transport: "pipe", ErrorType: "_OTHER", Status: "the connect failed"},
		{Server: "b", Transport: "pipe", ErrorType: "config", Status: "the connect failed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("connect spans (-want +got):\n%s", diff)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.client.session.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				srv, _ := dp.Attributes.Value("freecode.server")
				et, _ := dp.Attributes.Value("error.type")
				_, hasVersion := dp.Attributes.Value("mcp.protocol.version")
				for range dp.Count {
					sessions = append(sessions, srv.AsString()+"/"+et.AsString()+"/"+map[bool]string{true: "version"}[hasVersion])
				}
			}
		}
	}
	if diff := cmp.Diff([]string{"m//version"}, sessions); diff != "" {
		t.Errorf("session durations (-want +got):\n%s", diff)
	}
}

// A tools/call the server answers with a JSON-RPC error says its code on
// the span, never the error's message: that is the server's text, which
// may quote the arguments or the server's secrets (README, Telemetry:
// "a failed span's status says only its class").
func TestCallSpanStatusHoldsNoServerText(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tel := NewTelemetry(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), nil)
	c := tel.startCall(trace.SpanContext{}, "lookup", &session{}, memSrv("m"), &mcpsdk.CallToolParams{Name: "lookup"})
	c.end(nil, &jsonrpc.Error{Code: -32602, Message: "invalid params: token=s3cret-from-the-server"})
	ended := spans.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	st := ended[0].Status()
	if st.Code != codes.Error || strings.Contains(st.Description, "s3cret") || strings.Contains(st.Description, "invalid params") {
		t.Errorf("status %+v", st)
	}
	var errType string
	for _, kv := range ended[0].Attributes() {
		if kv.Key == "error.type" {
			errType = kv.Value.AsString()
		}
	}
	if errType != "-32602" {
		t.Errorf("error.type %q", errType)
	}
}
