package workspace

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/orchestrator"
)

// BenchmarkAudit measures what the audit trail adds to calls through the
// workspace, against a real stdio server (the test binary): one call a
// batch (single) and a batch of 100 read-only calls (batch100), each timed
// with the trail on and off in alternating rounds of the same size, the
// best round of each kept, so that load elsewhere hits both alike. The
// timed loop is the trail on; the metrics are µs per call on and off and
// audit-added-%, the goal of issue 32 being under 5 for both. The lines are
// written by the trail's own goroutine; a round ends once its lines are
// written, so that it pays for them.
func BenchmarkAudit(b *testing.B) {
	e := newEnv(b)
	writeJSON(b, e.cfgPath, mcpSection([]map[string]any{server(b, "s")}, map[string]any{"maxParallel": 8}))
	w := e.open(b)
	settle(b, w)
	dir := filepath.Join(e.dir, config.AuditDirName)
	for _, n := range []int{1, 100} {
		name := "single"
		if n > 1 {
			name = fmt.Sprintf("batch%d", n)
		}
		calls := make([]orchestrator.ToolCall, n)
		for i := range calls {
			calls[i] = orchestrator.ToolCall{CallID: fmt.Sprint(i), Tool: "mcp__s__echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
		}
		batch := func() {
			for _, r := range w.Execute(b.Context(), calls, nil) {
				if r.IsError || r.Decision != orchestrator.DecisionAllowed {
					b.Fatalf("call: %+v", r)
				}
			}
		}
		round := func(on bool, batches int) time.Duration {
			if on {
				w.trail.configure(dir, false, 0)
			} else {
				w.trail.configure("", false, 0)
			}
			start := time.Now()
			for range batches {
				batch()
			}
			w.trail.flush() // the round pays for its lines' writes
			return time.Since(start) / time.Duration(batches*n)
		}
		b.Run(name, func(b *testing.B) {
			batches := max(1, 400/n)
			round(true, batches) // warm up
			w.trail.configure(dir, false, 0)
			for b.Loop() {
				batch()
			}
			const rounds = 8
			on, off := time.Duration(1<<62), time.Duration(1<<62)
			for range rounds {
				off = min(off, round(false, batches))
				on = min(on, round(true, batches))
			}
			b.ReportMetric(float64(on.Nanoseconds())/1e3, "µs/call-audit-on")
			b.ReportMetric(float64(off.Nanoseconds())/1e3, "µs/call-audit-off")
			b.ReportMetric(100*(float64(on)/float64(off)-1), "audit-added-%")
		})
	}
	w.trail.configure(dir, false, 0)
}
