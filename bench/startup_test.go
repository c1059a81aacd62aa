package bench

import (
	"slices"
	"testing"
	"time"
)

// startupTrials is how many sidecars each configuration starts, in
// alternation.
const startupTrials = 16

// BenchmarkSidecarStartup measures how long after freecode-serve starts
// (process start, initialize, initialized) nine stdio servers report
// connected, with a tenth server that never answers initialize among them,
// against the same nine alone. The servers are this test binary
// re-executed: a go-sdk server with one tool. The metrics are the median
// over the trials of the first and of the last of the nine to connect,
// both ways, and their ratio: the goal is that the server that hangs
// delays none of the nine (a ratio of 1).
func BenchmarkSidecarStartup(b *testing.B) {
	nine, names := selfServers(b, 9, "s", "echo")
	withHang := writeConfig(b, append(slices.Clone(nine), selfServer(b, "stuck", "hang")))
	alone := writeConfig(b, nine)
	trial := func(cfg string) (first, last time.Duration) {
		sc := startSidecar(b, cfg)
		defer sc.stop(b)
		ds := sc.awaitConnected(b, names)
		return slices.Min(ds), slices.Max(ds)
	}
	trial(alone) // the first start pays for the page cache

	b.ResetTimer()
	for b.Loop() {
		trial(withHang)
	}
	b.StopTimer()

	var hangFirst, hangLast, aloneFirst, aloneLast []time.Duration
	for range startupTrials {
		f, l := trial(withHang)
		hangFirst, hangLast = append(hangFirst, f), append(hangLast, l)
		f, l = trial(alone)
		aloneFirst, aloneLast = append(aloneFirst, f), append(aloneLast, l)
	}
	b.ReportMetric(ms(percentile(hangFirst, 50)), "with-hang-first-ms")
	b.ReportMetric(ms(percentile(hangLast, 50)), "with-hang-ninth-ms")
	b.ReportMetric(ms(percentile(aloneFirst, 50)), "alone-first-ms")
	b.ReportMetric(ms(percentile(aloneLast, 50)), "alone-ninth-ms")
	b.ReportMetric(ms(percentile(hangLast, 50))/ms(percentile(aloneLast, 50)), "ninth-ratio")
}
