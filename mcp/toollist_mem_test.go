package mcp

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
)

// peakRSS returns this process's peak resident set (VmHWM), or 0 where
// /proc is not there.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// liveHeap returns the bytes live on the heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestToolListMemoryBounded: the memory a Conn keeps for a tool list is
// bounded by the list's bound on definition bytes, not a multiple of it.
// A server that pages forever is cut at the bound, and the decoded pages
// it drops are not held.
func TestToolListMemoryBounded(t *testing.T) {
	const bound = 8 << 20
	before := liveHeap()
	srv := testSrv(t, "schemapager", "schemapages")
	// Listing 8 MiB of definitions under the race detector on a loaded
	// machine can outlast the usual guard; the time is not what this
	// test is about.
	srv.Timeout = 5 * time.Minute
	c := newTestConn(t, srv, nil)
	c.listBytes = bound
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	kept := int64(liveHeap()) - int64(before)
	tools := len(c.Tools())
	t.Logf("kept %d tools in %.1f MiB of heap for a %d MiB bound; peak RSS %.0f MiB", tools, float64(kept)/(1<<20), bound>>20, float64(peakRSS())/(1<<20))
	if kept > 2*bound {
		t.Errorf("the Conn keeps %.1f MiB for a tool list bounded at %d MiB", float64(kept)/(1<<20), bound>>20)
	}
	runtime.KeepAlive(c)
}

// BenchmarkToolListMemory lists the schemapages server's endless tool list
// at the default bound (64 MiB of definitions) and reports the heap the
// Conn keeps and the process's peak RSS. Run it alone:
//
//	go test ./mcp -run '^$' -bench ToolListMemory -benchtime 1x
func BenchmarkToolListMemory(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	srv := config.Server{
		Name: "schemapager", Type: config.TypeLocal, Enabled: true,
		Command: []string{exe, "schemapages"}, Env: map[string]string{testServerEnv: "1"},
		Timeout: 5 * time.Minute,
	}
	for range b.N {
		before := liveHeap()
		c := NewConn(srv, &ConnOptions{NoRetry: true})
		if err := c.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		kept := int64(liveHeap()) - int64(before)
		b.ReportMetric(float64(kept)/(1<<20), "MiB-kept")
		b.ReportMetric(float64(len(c.Tools())), "tools")
		b.ReportMetric(float64(peakRSS())/(1<<20), "MiB-peak-RSS")
		c.Close()
	}
}
