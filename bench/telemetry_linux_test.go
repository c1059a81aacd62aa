package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/telemetry/telemetrytest"
)

// BenchmarkTelemetryHop is the cost of OpenTelemetry export on a tool
// call through the sidecar (issue 33): two freecode-serve processes in
// one run, on the same demo server's echo, one with telemetry off (no
// OTEL_* variable: the default) and one exporting traces, metrics and
// events over OTLP/HTTP to a receiver on loopback in this process, with
// the SDK's batching (its defaults: spans every 5 s, metrics every 60 s).
// Rounds alternate the two, so that load that comes and goes falls on
// both: calls back to back (the worst case: the exporter's work competes
// with the next call for the machine's cores), then paced, one every 2 ms
// (a model's calls come far apart: the exporter works between them). It
// reports each one's p50 and p99, what telemetry adds at the p50 of
// either (goal < 5 %), each sidecar's resident memory after the calls, and
// how many spans reached the receiver (that export really ran), and each
// sidecar's CPU time a call (from /proc: Linux only), which load that
// comes and goes changes less than the latency.
func BenchmarkTelemetryHop(b *testing.B) {
	_, demoBin := binaries(b)
	recv := telemetrytest.NewReceiver(b)
	var quiet []string // this process's environment without OTEL_*
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			quiet = append(quiet, kv)
		}
	}
	start := func(env []string) *sidecar {
		cfg := writeConfig(b, []entry{{Name: "s", Type: "local", Command: []string{demoBin}, InheritEnv: true, Timeout: 30000}})
		sc := startSidecarEnv(b, cfg, env)
		sc.awaitConnected(b, []string{"s"})
		return sc
	}
	off := start(quiet)
	defer off.stop(b)
	on := start(append(quiet, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL))
	defer on.stop(b)

	rawArgs, _ := json.Marshal(map[string]any{"message": "hello"})
	execute := func(sc *sidecar) time.Duration {
		t := time.Now()
		res, err := sc.Execute(b.Context(), protocol.ToolCall{CallID: "c", Tool: "mcp__s__echo", Arguments: rawArgs})
		d := time.Since(t)
		if err != nil || len(res) != 1 || res[0].IsError {
			b.Fatalf("execute: %v %+v", err, res)
		}
		return d
	}
	for range callWarmUp {
		execute(off)
		execute(on)
	}
	b.ResetTimer()
	for b.Loop() {
		execute(on)
	}
	b.StopTimer()

	var viaOff, viaOn []time.Duration
	var cpuOff, cpuOn int64 // each sidecar's CPU over its own calls, in clock ticks
	for range callRounds {
		t0 := cpuTicks(off.cmd.Process.Pid)
		for range callN {
			viaOff = append(viaOff, execute(off))
		}
		cpuOff += cpuTicks(off.cmd.Process.Pid) - t0
		t0 = cpuTicks(on.cmd.Process.Pid)
		for range callN {
			viaOn = append(viaOn, execute(on))
		}
		cpuOn += cpuTicks(on.cmd.Process.Pid) - t0
	}
	// Paced: a call every 2 ms, as a model's calls come (far apart, at
	// most a batch at a time), so that the exporter's work runs between
	// calls and what is left on the call's own path is measured.
	var pacedOff, pacedOn []time.Duration
	for range callRounds {
		for range callN / 8 {
			pacedOff = append(pacedOff, execute(off))
			time.Sleep(2 * time.Millisecond)
		}
		for range callN / 8 {
			pacedOn = append(pacedOn, execute(on))
			time.Sleep(2 * time.Millisecond)
		}
	}
	report(b, "µs", samples{"off", viaOff}, samples{"on", viaOn}, samples{"paced-off", pacedOff}, samples{"paced-on", pacedOn})
	b.ReportMetric(100*(us(percentile(viaOn, 50))/us(percentile(viaOff, 50))-1), "added-by-telemetry-p50-%")
	b.ReportMetric(100*(us(percentile(pacedOn, 50))/us(percentile(pacedOff, 50))-1), "paced-added-by-telemetry-p50-%")
	// The sidecar's own CPU a call, which the machine's other load
	// does not change as it does the latency.
	perCall := func(ticks int64) float64 { return float64(ticks) * 1e6 / clockTicks / float64(callRounds*callN) }
	b.ReportMetric(perCall(cpuOff), "off-cpu-µs/call")
	b.ReportMetric(perCall(cpuOn), "on-cpu-µs/call")
	for _, sc := range []struct {
		name string
		s    *sidecar
	}{{"off", off}, {"on", on}} {
		if kib, err := rssKiB(sc.s.cmd.Process.Pid); err == nil {
			b.ReportMetric(float64(kib)/1024, sc.name+"-rss-MiB")
		}
	}
	// The batch exporter sends every 5 s: wait (bounded) for the first
	// export, so that a run where nothing was exported says so.
	for deadline := time.Now().Add(15 * time.Second); len(recv.Spans()) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if len(recv.Spans()) == 0 {
		b.Fatal("telemetry on, but no span reached the receiver")
	}
	b.ReportMetric(float64(len(recv.Spans())), "spans-received")
}
