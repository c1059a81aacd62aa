package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp"
)

// memServer is a scripted go-sdk server (internal/mcptest) behind a real
// mcp.Conn: calls take the path they take in production, the Conn's
// loss detection and reconnect included. Its "crash" tools drop the
// session in the middle of their first call, the way a dying process
// drops its pipes.
type memServer struct {
	Caller // the Conn, as the registry calls it
	srv    *mcptest.Server
	conn   *mcp.Conn
	seen   sync.Map      // tool name → *atomic.Int32
	status chan struct{} // a status came: the tools may have changed; buffered 1
}

// oneConn is the ConnSource of a single Conn.
type oneConn struct{ c *mcp.Conn }

func (o oneConn) Conn(string) (*mcp.Conn, bool) { return o.c, true }

func newMemServer(t testing.TB) *memServer {
	m := &memServer{srv: mcptest.NewServer("mem"), status: make(chan struct{}, 1)}
	obj := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	add := func(name string, readOnly, crash bool) {
		var ann *mcpsdk.ToolAnnotations
		if readOnly {
			ann = &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
		}
		m.srv.AddTool(&mcpsdk.Tool{Name: name, InputSchema: obj, Annotations: ann}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n := m.count(name).Add(1)
			if crash && n == 1 {
				m.srv.Kill()
				return nil, errors.New("crashed")
			}
			return textResult(fmt.Sprintf("%s #%d: %s", name, n, req.Params.Arguments)), nil
		})
	}
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
	add("lookup", true, false)
	add("flaky_lookup", true, true)
	add("remove", false, true)
	srv := config.Server{Name: "mem", Type: config.TypeLocal, Enabled: true, Command: []string{"unused"}}
	m.conn = mcp.NewConn(srv, &mcp.ConnOptions{Dial: m.srv.Dial, OnStatus: func(mcp.Status) {
		select {
		case m.status <- struct{}{}:
		default:
		}
	}})
	m.Caller = ConnCaller("mem", oneConn{m.conn})
	t.Cleanup(func() {
		m.conn.Close()
		m.srv.Close()
	})
	if err := m.conn.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *memServer) count(name string) *atomic.Int32 {
	v, _ := m.seen.LoadOrStore(name, new(atomic.Int32))
	return v.(*atomic.Int32)
}

// addTool serves a tool from now on and waits until the Conn has listed it.
func (m *memServer) addTool(t testing.TB, tool *mcpsdk.Tool, h mcpsdk.ToolHandler) {
	m.srv.AddTool(tool, h)
	for !slices.ContainsFunc(m.conn.Tools(), func(x *mcpsdk.Tool) bool { return x.Name == tool.Name }) {
		select {
		case <-m.status:
		case <-t.Context().Done():
			t.Fatalf("the Conn never listed %s", tool.Name)
		}
	}
}

func (m *memServer) tools(t testing.TB) []*mcpsdk.Tool {
	tools := m.conn.Tools()
	if len(tools) == 0 {
		t.Fatal("the in-memory server listed no tools")
	}
	return tools
}

// TestInMemoryServer runs calls through a real go-sdk server: arguments
// arrive as sent, a read-only call survives a crash through one retry, a
// destructive one that hit the crash is not repeated.
func TestInMemoryServer(t *testing.T) {
	m := newMemServer(t)
	reg := NewRegistry(nil)
	reg.SetServerTools("mem", m.tools(t), m)
	// Hang guard only: with the default toolTimeout (10 min, go test's
	// own default timeout) a lost response would hang the package in
	// callOnce instead of failing this test with "timed out".
	o := New(reg, &Options{ToolTimeout: time.Minute})
	ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	// remove runs alone (not read-only), then flaky_lookup: each crashes
	// the server in its first call.
	rs := o.Execute(t.Context(), []ToolCall{
		{CallID: "1", Tool: "mcp__mem__remove", Arguments: []byte(`{"q":"c"}`)},
		{CallID: "2", Tool: "mcp__mem__flaky_lookup", Arguments: []byte(`{"q":"b"}`)},
	}, &ExecOptions{Approver: ap})
	if !rs[0].IsError || !strings.Contains(rs[0].Text(), "may or may not have run") {
		t.Errorf("remove = %v %q", rs[0].IsError, rs[0].Text())
	}
	mustNotError(t, rs[1])
	if got := rs[1].Text(); got != `flaky_lookup #2: {"q":"b"}` {
		t.Errorf("flaky_lookup = %q, want the retry's answer", got)
	}
	rs = o.Execute(t.Context(), []ToolCall{
		{CallID: "3", Tool: "mcp__mem__lookup", Arguments: []byte(`{"q":"a"}`)},
		{CallID: "4", Tool: "mcp__mem__lookup", Arguments: []byte(`{"q":1}`)},
	}, nil)
	mustNotError(t, rs[0])
	if got := rs[0].Text(); got != `lookup #1: {"q":"a"}` {
		t.Errorf("lookup = %q", got)
	}
	if rs[1].Decision != DecisionInvalid {
		t.Errorf("lookup with a number: %s %q", rs[1].Decision, rs[1].Text())
	}
	got := map[string]int32{"lookup": m.count("lookup").Load(), "flaky_lookup": m.count("flaky_lookup").Load(), "remove": m.count("remove").Load()}
	want := map[string]int32{"lookup": 1, "flaky_lookup": 2, "remove": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("server saw %s %d times, want %d", k, got[k], v)
		}
	}
}
