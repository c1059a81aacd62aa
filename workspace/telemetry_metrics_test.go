package workspace

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/tasks"
)

// readInt64 collects reader and returns the int64 points of the metric
// name (a gauge or a sum), by the value of the attribute key.
func readInt64(t *testing.T, reader *sdkmetric.ManualReader, name, key string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				points = d.DataPoints
			case metricdata.Sum[int64]:
				if d.IsMonotonic {
					t.Fatalf("%s is monotonic", name)
				}
				points = d.DataPoints
			default:
				t.Fatalf("%s is a %T", name, m.Data)
			}
			for _, p := range points {
				v, _ := p.Attributes.Value(attribute.Key(key))
				out[v.AsString()] = p.Value
			}
		}
	}
	return out
}

// freecode.servers counts the servers by the state their statuses say,
// every state reported (0 for none); freecode.tasks.running counts the
// tasks followed, by server, while they are followed.
func TestTelemetryGauges(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(t.Context()) })
	h := mcptest.StartTasksHTTP(t, "")
	e := newEnv(t)
	off := server(t, "off")
	off["enabled"] = false
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{
		{"name": "tasky", "type": "remote", "url": h.URL, "transport": "http"},
		off,
		{"name": "broken", "type": "local", "command": []string{"/nonexistent/freecode-test-server"}},
	}, nil))
	w := e.openWith(t, &Options{KeepTasks: true, MeterProvider: mp, NoRetry: true})
	settle(t, w)

	got := readInt64(t, reader, "freecode.servers", "freecode.server.state")
	for state, n := range map[string]int64{"connected": 1, "disabled": 1, "failed": 1, "connecting": 0, "blocked": 0, "needsAuth": 0} {
		if v, ok := got[state]; !ok || v != n {
			t.Errorf("freecode.servers{state=%s} = %d (reported: %v), want %d; all: %v", state, v, ok, n, got)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d states reported, want every one: %v", len(got), got)
	}

	held, release := startTask(t, w, "h1", "hold", &elicitLog{})
	// Its status message comes from a poll: the task is being followed.
	awaitTask(t, w, held, "hold's status message", func(ti TaskInfo) bool { return strings.HasPrefix(ti.StatusMessage, "holding until ") })
	if got := readInt64(t, reader, "freecode.tasks.running", "freecode.server"); got["tasky"] != 1 {
		t.Errorf("freecode.tasks.running while the task runs: %v, want tasky 1", got)
	}
	release()
	awaitTask(t, w, held, "its end", isStatus(tasks.Completed))
	if got := readInt64(t, reader, "freecode.tasks.running", "freecode.server"); got["tasky"] != 0 {
		t.Errorf("freecode.tasks.running once it ended: %v, want tasky 0", got)
	}
}
