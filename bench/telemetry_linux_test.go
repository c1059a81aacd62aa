package bench

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
)

// BaselineEnv names a freecode-serve from before telemetry was added
// (`make bench` builds the one of commit TELEMETRY_BASE in the Makefile):
// BenchmarkTelemetryHop then runs it beside today's with telemetry off,
// and reports what today's adds over it. Unset, that comparison is left
// out.
const baselineEnv = "FREECODE_BENCH_BASELINE"

// telemetryBlocks blocks of telemetryBlock calls of each sidecar are
// measured back to back, a quarter as many paced.
const telemetryBlocks, telemetryBlock = 200, 50

// BenchmarkTelemetryHop is the cost of OpenTelemetry export on a tool
// call through the sidecar (issue 33): freecode-serve processes in one
// run, on the same demo server's echo, one with telemetry off (no OTEL_*
// variable: the default), one exporting traces, metrics and events over
// OTLP/HTTP to an endpoint on loopback in this process (otlpSink), with
// batching (spans every 5 s or each 512, events every second, metrics
// every 60 s), and, with FREECODE_BENCH_BASELINE, the sidecar from before
// telemetry. Blocks of calls go to each in turn, in an order shuffled
// every round, so that load that comes and goes falls on each alike:
// calls back to back (the worst case: the exporting goroutines compete
// with the next call for the machine's cores), then paced, one every 2 ms
// (a model's calls come far apart: the exporting happens between them).
// A sidecar's exporting may run on into the next one's block, which
// makes what telemetry adds look smaller, not larger, and falls on each
// other sidecar alike. It reports each one's p50 and
// p99, what telemetry adds at the p50 of either (goal < 5 %), what
// today's sidecar with telemetry off adds over the baseline's (goal:
// within noise), each sidecar's CPU time a call (from /proc: Linux only;
// load that comes and goes changes it less than the latency), its
// resident memory after the calls, and the bytes exported a call, from
// an export decoded to show it held the calls' spans.
func BenchmarkTelemetryHop(b *testing.B) {
	_, demoBin := binaries(b)
	recv := newOTLPSink(b)
	var quiet []string // this process's environment without OTEL_*
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			quiet = append(quiet, kv)
		}
	}
	start := func(bin string, env []string) *sidecar {
		cfg := writeConfig(b, []entry{{Name: "s", Type: "local", Command: []string{demoBin}, InheritEnv: true, Timeout: 30000}})
		sc := startSidecarBin(b, bin, cfg, env)
		sc.awaitConnected(b, []string{"s"})
		return sc
	}
	sidecarBin, _ := binaries(b)
	type arm struct {
		name          string
		sc            *sidecar
		b2b, paced    []time.Duration
		cpu0, cpuCall int64 // clock ticks
	}
	arms := []*arm{
		{name: "off", sc: start(sidecarBin, quiet)},
		{name: "on", sc: start(sidecarBin, append(quiet, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL))},
	}
	if base := os.Getenv(baselineEnv); base != "" {
		arms = append(arms, &arm{name: "baseline", sc: start(base, quiet)})
	}
	for _, a := range arms {
		defer a.sc.stop(b)
	}
	byName := func(n string) *arm {
		for _, a := range arms {
			if a.name == n {
				return a
			}
		}
		return nil
	}

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
		for _, a := range arms {
			execute(a.sc)
		}
	}
	on := byName("on")
	b.ResetTimer()
	for b.Loop() {
		execute(on.sc)
	}
	b.StopTimer()

	// Blocks of calls back to back, the sidecars in a new order each
	// round (a seeded shuffle: with a rotation, of three sidecars the same
	// one follows the one with telemetry on in two blocks of three, and
	// has its exporting run on into its blocks); each one's CPU is counted
	// over the whole phase, its exports between blocks included.
	order := rand.New(rand.NewPCG(1, 2))
	for _, a := range arms {
		a.cpu0 = cpuTicks(a.sc.cmd.Process.Pid)
	}
	for range telemetryBlocks {
		for _, i := range order.Perm(len(arms)) {
			a := arms[i]
			for range telemetryBlock {
				a.b2b = append(a.b2b, execute(a.sc))
			}
		}
	}
	for _, a := range arms {
		a.cpuCall = cpuTicks(a.sc.cmd.Process.Pid) - a.cpu0
	}
	// Paced: a call every 2 ms, as a model's calls come (far apart, at
	// most a batch at a time), so that what is left on the call's own
	// path is measured.
	for range telemetryBlocks / 4 {
		for _, i := range order.Perm(len(arms)) {
			a := arms[i]
			for range telemetryBlock {
				a.paced = append(a.paced, execute(a.sc))
				time.Sleep(2 * time.Millisecond)
			}
		}
	}

	var sets []samples
	for _, a := range arms {
		sets = append(sets, samples{a.name, a.b2b}, samples{"paced-" + a.name, a.paced})
	}
	report(b, "µs", sets...)
	added := func(x, y []time.Duration) float64 { return 100 * (us(percentile(x, 50))/us(percentile(y, 50)) - 1) }
	off := byName("off")
	b.ReportMetric(added(on.b2b, off.b2b), "added-by-telemetry-p50-%")
	b.ReportMetric(added(on.paced, off.paced), "paced-added-by-telemetry-p50-%")
	if base := byName("baseline"); base != nil {
		b.ReportMetric(added(off.b2b, base.b2b), "off-over-baseline-p50-%")
		b.ReportMetric(added(off.paced, base.paced), "paced-off-over-baseline-p50-%")
	}
	for _, a := range arms {
		b.ReportMetric(float64(a.cpuCall)*1e6/clockTicks/float64(telemetryBlocks*telemetryBlock), a.name+"-cpu-µs/call")
		if kib, err := rssKiB(a.sc.cmd.Process.Pid); err == nil {
			b.ReportMetric(float64(kib)/1024, a.name+"-rss-MiB")
		}
	}
	// The span batcher sends every 5 s, or each 512 spans: wait (bounded)
	// for an export, so that a run where nothing was exported says so.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, n := recv.Bytes(); n > 0 {
			break
		}
	}
	spans, calls, err := recv.ExecuteSpans()
	if err != nil || calls == 0 {
		b.Fatalf("telemetry on, but no call's span reached the endpoint (%d spans, %v)", spans, err)
	}
	bytes, requests := recv.Bytes()
	b.ReportMetric(float64(requests), "exports")
	b.ReportMetric(float64(bytes)/float64(b.N+callWarmUp+telemetryBlocks*telemetryBlock*5/4), "exported-B/call")
}
