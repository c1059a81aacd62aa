package orchestrator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// memServer is a scripted go-sdk server (internal/mcptest) behind a go-sdk
// client session over in-memory transports, as the Runner of its tools: a
// call the orchestrator lets through reaches a real server, which counts
// it. The workspace's tests run the same kind of server behind the real
// mcp.Conn, loss detection and reconnect included (workspace/runner_test.go).
type memServer struct {
	srv  *mcptest.Server
	cs   *mcpsdk.ClientSession
	seen sync.Map // tool name → *atomic.Int32
}

var _ Runner = (*memServer)(nil)

func newMemServer(t testing.TB) *memServer {
	m := &memServer{srv: mcptest.NewServer("mem")}
	obj := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	// slow_lookup takes 50 ms, like a real server's read, for the batch
	// benchmark.
	m.srv.AddTool(&mcpsdk.Tool{Name: "slow_lookup", InputSchema: obj, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			m.count("slow_lookup").Add(1)
			select {
			case <-time.After(50 * time.Millisecond):
				return textResult("slow"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	m.srv.AddTool(&mcpsdk.Tool{Name: "lookup", InputSchema: obj, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n := m.count("lookup").Add(1)
			return textResult(fmt.Sprintf("lookup #%d: %s", n, req.Params.Arguments)), nil
		})
	tr, err := m.srv.Dial(t.Context(), config.Server{Name: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "orchestrator-test", Version: "1"}, nil)
	if m.cs, err = client.Connect(context.Background(), tr, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.cs.Close()
		m.srv.Close()
	})
	return m
}

func (m *memServer) CallTool(ctx context.Context, call Call) (Outcome, error) {
	res, err := m.cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: call.Name, Arguments: call.Args})
	return Outcome{Result: res}, err
}

func (m *memServer) ToolTimeout() time.Duration { return 0 }

func (m *memServer) Ready(context.Context) (func(), error) { return func() {}, nil }

func (m *memServer) count(name string) *atomic.Int32 {
	v, _ := m.seen.LoadOrStore(name, new(atomic.Int32))
	return v.(*atomic.Int32)
}

// addTool serves a tool from now on.
func (m *memServer) addTool(_ testing.TB, tool *mcpsdk.Tool, h mcpsdk.ToolHandler) {
	m.srv.AddTool(tool, h)
}

// tools lists the server's tools as they are now.
func (m *memServer) tools(t testing.TB) []*mcpsdk.Tool {
	res, err := m.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) == 0 {
		t.Fatal("the in-memory server listed no tools")
	}
	return res.Tools
}
