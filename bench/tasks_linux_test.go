package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/mcpwire"
	"github.com/freecode/freecode/internal/protocol"
)

// tasksN is how many tasks the sidecar follows at once.
const tasksN = 100

// BenchmarkSidecarTasks: one freecode-serve follows tasksN tasks of the
// real tasks server of internal/mcptest (Streamable HTTP on loopback,
// pollIntervalMs 50) at once. It reports the sidecar's CPU while it polls
// them (cpu-polling-%) beside the same sidecar idle for as long just
// before (cpu-idle-%), its resident set with them (rss-KiB), and, once
// they are released together, the delay from each task's completion on
// the server to freecode/tasks/changed saying so at the frontend (p50,
// p99): the poll interval bounds it, plus the hop.
func BenchmarkSidecarTasks(b *testing.B) {
	const window = 2 * time.Second
	var delays []time.Duration
	for b.Loop() {
		h := mcptest.StartTasksHTTP(b, "")
		cfg := writeConfig(b, nil)
		data, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{
			map[string]any{"name": "tasky", "type": "remote", "url": h.URL, "transport": "http"},
		}}})
		if err := os.WriteFile(cfg, data, 0o600); err != nil {
			b.Fatal(err)
		}
		rules := filepath.Join(filepath.Dir(cfg), "settings.json")
		if err := os.WriteFile(rules, []byte(`{"permissions": {"allow": ["mcp__tasky"]}}`), 0o600); err != nil {
			b.Fatal(err)
		}
		s := startSidecar(b, cfg)
		s.awaitConnected(b, []string{"tasky"})
		pid := s.cmd.Process.Pid

		var mu sync.Mutex
		seen := map[string]time.Time{} // task id → when the frontend heard it completed
		f := func(n frontend.Notification) {
			if n.Method != protocol.NotifyTasksChanged {
				return
			}
			var ti protocol.TaskInfo
			if json.Unmarshal(n.Params, &ti) == nil && ti.Status == protocol.TaskCompleted {
				now := time.Now()
				mu.Lock()
				seen[ti.TaskID] = now
				mu.Unlock()
			}
		}
		s.onNote.Store(&f)

		// The tools are registered once they are listed: wait for them.
		for {
			tools, err := s.Tools(b.Context(), "tasky")
			if err == nil && len(tools) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}

		idleStart, idleAt := cpuTicks(pid), time.Now()
		time.Sleep(window)
		idleCPU := float64(cpuTicks(pid)-idleStart) / clockTicks / time.Since(idleAt).Seconds()

		dir := b.TempDir()
		calls := make([]protocol.ToolCall, tasksN)
		for i := range calls {
			calls[i] = protocol.ToolCall{CallID: fmt.Sprint("t", i), Tool: "mcp__tasky__hold",
				Arguments: json.RawMessage(fmt.Sprintf(`{"release":%q}`, filepath.Join(dir, fmt.Sprint("r", i))))}
		}
		rs, err := s.Execute(b.Context(), calls...)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, 0, tasksN)
		for _, r := range rs {
			if r.Task == nil {
				b.Fatalf("a call did not start a task: %+v", r)
			}
			ids = append(ids, r.Task.TaskID)
		}
		time.Sleep(200 * time.Millisecond) // every task polled a few times
		pollStart, pollAt := cpuTicks(pid), time.Now()
		time.Sleep(window)
		pollCPU := float64(cpuTicks(pid)-pollStart) / clockTicks / time.Since(pollAt).Seconds()
		rss, err := rssKiB(pid)
		if err != nil {
			b.Fatal(err)
		}

		// Release them all; note when each completes on the server.
		done := make(chan struct {
			id string
			at time.Time
		}, tasksN)
		for _, id := range ids {
			go func() {
				_, err := h.Engine().Await(b.Context(), id, func(dt mcpwire.Task) bool { return dt.Status == mcpwire.TaskCompleted })
				if err != nil {
					b.Error(err)
				}
				done <- struct {
					id string
					at time.Time
				}{id, time.Now()}
			}()
		}
		for i := range tasksN {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint("r", i)), nil, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		completed := map[string]time.Time{}
		for range tasksN {
			d := <-done
			completed[d.id] = d.at
		}
		deadline := time.Now().Add(hangGuard)
		for {
			mu.Lock()
			n := len(seen)
			mu.Unlock()
			if n == tasksN {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the frontend heard %d of %d tasks complete", n, tasksN)
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		for id, at := range completed {
			delays = append(delays, seen[id].Sub(at))
		}
		mu.Unlock()
		b.ReportMetric(100*idleCPU, "cpu-idle-%")
		b.ReportMetric(100*pollCPU, "cpu-polling-%")
		b.ReportMetric(float64(rss), "rss-KiB")
		s.stop(b)
	}
	report(b, "ms", samples{"completed-to-frontend", delays})
}
