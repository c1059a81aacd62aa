package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkFrontendRoundTrip measures the frontend protocol's round trip
// for a request the sidecar answers from memory (freecode/servers, with
// no server configured) over each way in, in the same run: three
// freecode-serve processes, on stdio (LSP framing over pipes), on a unix
// socket (LSP framing) and on ws://127.0.0.1 (a message per WebSocket text
// frame), each with a Go frontend. Each iteration makes one call on each,
// in turn, so that what the machine does meanwhile falls on all three
// alike. The metrics are each one's p50 and p99 and the ratios of the
// WebSocket's p50 to the other two's.
func BenchmarkFrontendRoundTrip(b *testing.B) {
	stdio := startSidecar(b, writeConfig(b, nil))
	defer stdio.stop(b)
	// Short: a unix socket's path has a small limit.
	sockDir, err := os.MkdirTemp("", "fcb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	// Each listening sidecar has a HOME of its own, so a serve.json of
	// its own.
	unix := startListeningOn(b, writeConfig(b, nil), "unix:"+filepath.Join(sockDir, "s"))
	defer unix.stop(b)
	ws := startListeningOn(b, writeConfig(b, nil), "ws://127.0.0.1:0")
	defer ws.stop(b)

	type way struct {
		name string
		call func() error
		ds   []time.Duration
	}
	ways := []*way{
		{name: "stdio", call: func() error { _, err := stdio.Servers(b.Context()); return err }},
		{name: "unix", call: func() error { _, err := unix.Servers(b.Context()); return err }},
		{name: "ws", call: func() error { _, err := ws.Servers(b.Context()); return err }},
	}
	for range 200 { // warm up
		for _, w := range ways {
			if err := w.call(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		for _, w := range ways {
			start := time.Now()
			if err := w.call(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			w.ds = append(w.ds, time.Since(start))
		}
	}
	b.StopTimer()
	for _, w := range ways {
		report(b, "µs", samples{w.name, w.ds})
	}
	wsP50 := us(percentile(ways[2].ds, 50))
	b.ReportMetric(wsP50/us(percentile(ways[1].ds, 50)), "ws/unix-p50")
	b.ReportMetric(wsP50/us(percentile(ways[0].ds, 50)), "ws/stdio-p50")
}
