package mcpserve

import (
	"os"
	"os/exec"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGatewayInProcess measures sequential echo calls of the test
// server with the go-sdk's client, straight over stdio (the peer) and
// through a Server in this process (the client reaches it over a pair of
// pipes on StdioTransport, and it reaches the server over stdio through
// the workspace). The difference is the gateway's own work per call: the
// extra MCP hop's encoding, the orchestrator's lookup, validation, gate
// and cap; a second process's scheduling is not in it.
func BenchmarkGatewayInProcess(b *testing.B) {
	e := newEnv(b, []map[string]any{backend(b, "srv")}, nil)
	e.open(b)
	via := e.connect(b, nil)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), testServerEnv+"=1")
	direct, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	calls := func(cs *mcpsdk.ClientSession, tool string, n int) float64 {
		params := &mcpsdk.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hello"}}
		start := time.Now()
		for range n {
			res, err := cs.CallTool(b.Context(), params)
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %+v", tool, err, res)
			}
		}
		return float64(n) / time.Since(start).Seconds()
	}
	calls(direct, "echo", 200)
	calls(via, "mcp__srv__echo", 200)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		calls(via, "mcp__srv__echo", 1)
	}
	b.StopTimer()
	var d, g float64
	for range 6 {
		d = max(d, calls(direct, "echo", 1000))
		g = max(g, calls(via, "mcp__srv__echo", 1000))
	}
	b.ReportMetric(d, "direct-calls/s")
	b.ReportMetric(g, "gateway-calls/s")
	b.ReportMetric(100*(d/g-1), "added-%")
}
