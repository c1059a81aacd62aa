package bench

import (
	"testing"
	"time"

	"github.com/freecode/freecode/internal/protocol"
)

// scaleCalls is how many times each request is timed per configuration.
const scaleCalls = 100

// BenchmarkSidecarScale runs freecode-serve with 50 stdio servers of 100
// tools each (this test binary re-executed as a go-sdk server), and
// measures, once all are connected: the sidecar's resident memory, alone
// and with its servers' processes; and the latency of freecode/tools (all
// 5,000) and freecode/tools/definitions (the Anthropic array, cached) over
// the protocol. The peer is the same requests to a sidecar with one such
// server (100 tools), in the same run, alternating. The timed loop is
// freecode/tools with 5,000 tools.
func BenchmarkSidecarScale(b *testing.B) {
	fifty, names := selfServers(b, 50, "s", "tools100")
	big := startSidecar(b, writeConfig(b, fifty))
	defer big.stop(b)
	big.awaitConnected(b, names)
	one := startSidecar(b, writeConfig(b, fifty[:1]))
	defer one.stop(b)
	one.awaitConnected(b, names[:1])

	tools := func(sc *sidecar, want int) time.Duration {
		start := time.Now()
		ts, err := sc.Tools(b.Context(), "")
		d := time.Since(start)
		if err != nil || len(ts) < want {
			b.Fatalf("freecode/tools: %v, %d tools, want %d", err, len(ts), want)
		}
		return d
	}
	defs := func(sc *sidecar) time.Duration {
		start := time.Now()
		res, err := sc.Definitions(b.Context(), protocol.FormatAnthropic)
		d := time.Since(start)
		if err != nil || res.Hash == "" {
			b.Fatalf("freecode/tools/definitions: %v", err)
		}
		return d
	}
	// Every registry change has been built into the definitions, and the
	// first requests paid for their buffers.
	for range 10 {
		tools(big, 5000)
		defs(big)
		tools(one, 100)
		defs(one)
	}

	b.ResetTimer()
	for b.Loop() {
		tools(big, 5000)
	}
	b.StopTimer()

	var bigTools, bigDefs, oneTools, oneDefs []time.Duration
	for range scaleCalls {
		bigTools = append(bigTools, tools(big, 5000))
		oneTools = append(oneTools, tools(one, 100))
		bigDefs = append(bigDefs, defs(big))
		oneDefs = append(oneDefs, defs(one))
	}
	report(b, "ms", samples{"tools-5000", bigTools}, samples{"tools-100", oneTools}, samples{"defs-5000", bigDefs}, samples{"defs-100", oneDefs})
	b.ReportMetric(ms(percentile(bigTools, 50))/ms(percentile(oneTools, 50)), "tools-50x-ratio")
	b.ReportMetric(ms(percentile(bigDefs, 50))/ms(percentile(oneDefs, 50)), "defs-50x-ratio")

	for _, m := range []struct {
		name string
		sc   *sidecar
	}{{"50", big}, {"1", one}} {
		alone, err := rssKiB(m.sc.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		tree, procs, err := treeRSSKiB(m.sc.cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(alone)/1024, "sidecar-"+m.name+"-rss-MiB")
		b.ReportMetric(float64(tree)/1024, "tree-"+m.name+"-rss-MiB")
		b.ReportMetric(float64(procs), "tree-"+m.name+"-procs")
	}
}
