package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp"
)

// memServer is a real go-sdk MCP server reached over in-memory transports.
// Its "crash" tools close the server's session in the middle of their
// first call, the way a dying process drops its pipes.
type memServer struct {
	server *mcpsdk.Server
	client *mcpsdk.Client
	seen   sync.Map // tool name → *atomic.Int32

	mu         sync.Mutex
	sessions   []*mcpsdk.ClientSession
	cs         *mcpsdk.ClientSession
	serverConn mcpsdk.Connection // the server's end of cs
}

// connRecorder hands out its transport's connection and records it.
type connRecorder struct {
	mcpsdk.Transport
	conn mcpsdk.Connection
}

func (r *connRecorder) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	r.conn = c
	return c, err
}

func newMemServer(t testing.TB) *memServer {
	m := &memServer{
		server: mcpsdk.NewServer(&mcpsdk.Implementation{Name: "mem", Version: "1"}, nil),
		client: mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil),
	}
	obj := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	add := func(name string, readOnly, crash bool) {
		var ann *mcpsdk.ToolAnnotations
		if readOnly {
			ann = &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
		}
		m.server.AddTool(&mcpsdk.Tool{Name: name, InputSchema: obj, Annotations: ann}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n := m.count(name).Add(1)
			if crash && n == 1 {
				// Drop the pipe under the call, as a dying process would.
				m.mu.Lock()
				conn := m.serverConn
				m.mu.Unlock()
				conn.Close()
				return nil, errors.New("crashed")
			}
			return textResult(fmt.Sprintf("%s #%d: %s", name, n, req.Params.Arguments)), nil
		})
	}
	// slow_lookup takes 50 ms, like a real server's read, for the batch
	// benchmark.
	m.server.AddTool(&mcpsdk.Tool{Name: "slow_lookup", InputSchema: obj, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
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
	if err := m.reconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.close)
	return m
}

func (m *memServer) count(name string) *atomic.Int32 {
	v, _ := m.seen.LoadOrStore(name, new(atomic.Int32))
	return v.(*atomic.Int32)
}

func (m *memServer) reconnect(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reconnectLocked(ctx)
}

func (m *memServer) reconnectLocked(ctx context.Context) error {
	st, ct := mcpsdk.NewInMemoryTransports()
	rec := &connRecorder{Transport: st}
	ss, err := m.server.Connect(ctx, rec, nil)
	if err != nil {
		return err
	}
	m.serverConn = rec.conn
	cs, err := m.client.Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return err
	}
	m.cs = cs
	m.sessions = append(m.sessions, cs)
	return nil
}

func (m *memServer) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, cs := range m.sessions {
		cs.Close()
	}
}

func (m *memServer) tools(t testing.TB) []*mcpsdk.Tool {
	m.mu.Lock()
	cs := m.cs
	m.mu.Unlock()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// CallTool makes memServer a Caller the way mcp.Conn is one: a session
// that died under the call is reported as mcp.ErrConnectionLost, and the
// next call goes to a fresh session.
func (m *memServer) CallTool(ctx context.Context, name string, args map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
	m.mu.Lock()
	cs := m.cs
	m.mu.Unlock()
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil && ctx.Err() == nil && (errors.Is(err, mcpsdk.ErrConnectionClosed) || errors.Is(err, io.EOF)) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.cs == cs { // the first call to see the loss reconnects
			cs.Close()
			if rerr := m.reconnectLocked(ctx); rerr != nil {
				return nil, rerr
			}
		}
		return nil, fmt.Errorf("calling %s: %w: %v", name, mcp.ErrConnectionLost, err)
	}
	return res, err
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
