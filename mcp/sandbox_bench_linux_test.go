package mcp

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
)

// BenchmarkSandboxEverything measures server-everything, from npm, run
// sandboxed (bubblewrap, the default network: the allow-list, through the
// proxy's bridge) against the same server unsandboxed, in alternation in
// one run: start-to-ready (process start, initialize, the first
// tools/list: Conn.Start) and the echo tool's round trip. It reports the
// medians and the sandboxed/plain ratios; the goals are a start under
// 1.15 and an echo ratio within the run's noise (see plain-spread).
func BenchmarkSandboxEverything(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bubblewrap is not installed (make bench installs it)")
	}
	script := filepath.Join(npmDir(b), "@modelcontextprotocol/server-everything/dist/index.js")
	cwd := b.TempDir()
	srv := func(sandboxed bool) config.Server {
		s := config.Server{
			Name: "everything", Type: config.TypeLocal, Enabled: true, Cwd: cwd,
			Command: []string{"node", script, "stdio"}, Timeout: time.Minute,
		}
		if sandboxed {
			s.Sandbox = &config.Sandbox{}
		}
		return s
	}
	const calls = 200
	args := map[string]any{"message": "hello"}
	trial := func(sandboxed bool) (start, echo time.Duration) {
		c := NewConn(srv(sandboxed), &ConnOptions{NoRetry: true})
		defer c.Close()
		t0 := time.Now()
		if err := c.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		start = time.Since(t0)
		for range warmUp {
			if _, err := c.CallTool(b.Context(), "echo", args, nil); err != nil {
				b.Fatal(err)
			}
		}
		var lat []time.Duration
		for range calls {
			t := time.Now()
			if res, err := c.CallTool(b.Context(), "echo", args, nil); err != nil || res.IsError {
				b.Fatalf("echo: %v %+v", err, res)
			}
			lat = append(lat, time.Since(t))
		}
		slices.Sort(lat)
		return start, lat[len(lat)/2]
	}
	trial(false) // the page cache
	trial(true)
	b.ResetTimer()
	for b.Loop() {
		trial(true)
	}
	b.StopTimer()

	const trials = 10
	var sbStart, plStart, sbEcho, plEcho []time.Duration
	for range trials {
		s, e := trial(true)
		sbStart, sbEcho = append(sbStart, s), append(sbEcho, e)
		s, e = trial(false)
		plStart, plEcho = append(plStart, s), append(plEcho, e)
	}
	med := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	spread := func(d []time.Duration) float64 { // the median's noise: (p75-p25)/p50
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)*3/4]-d[len(d)/4]) / float64(d[len(d)/2])
	}
	b.ReportMetric(med(sbStart), "sandboxed-start-ms")
	b.ReportMetric(med(plStart), "plain-start-ms")
	b.ReportMetric(med(sbStart)/med(plStart), "start-ratio")
	b.ReportMetric(med(sbEcho), "sandboxed-echo-ms")
	b.ReportMetric(med(plEcho), "plain-echo-ms")
	b.ReportMetric(med(sbEcho)/med(plEcho), "echo-ratio")
	b.ReportMetric(spread(plEcho), "plain-echo-spread")
}
