package orchestrator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/freecode/freecode/telemetry"
)

// BenchmarkExecuteNoopTelemetry is BenchmarkExecuteNoop with telemetry
// off and on (traces and metrics exported over OTLP/HTTP to a loopback
// endpoint that takes every export), as the sidecar starts it: what
// telemetry adds to the orchestrator's own cost a call, the spans'
// recording and the metrics' measurements on the call's path, besides
// what the exporting goroutines do with the machine's other core.
// BenchmarkTelemetryHop (bench/) is the same through the sidecar.
func BenchmarkExecuteNoopTelemetry(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			opts := &Options{}
			if on {
				p, err := telemetry.Start(context.Background(), telemetry.Settings{TracesURL: sink.URL + "/v1/traces", MetricsURL: sink.URL + "/v1/metrics"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Shutdown(context.Background())
				opts.TracerProvider, opts.MeterProvider = p.Tracer, p.Meter
			}
			o := benchOrchestrator(b, noopRunner{res: textResult("ok")}, opts)
			calls := []ToolCall{{CallID: "1", Tool: "mcp__bench__lookup", Arguments: execBenchArgs}}
			b.ReportAllocs()
			for b.Loop() {
				runOne(b, o, calls)
			}
		})
	}
}
