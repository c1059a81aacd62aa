package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/orchestrator"
)

// TestCrashThroughManager runs the whole path a sidecar uses: a real stdio
// server process under the workspace's mcp.Manager, its tools registered
// from the Manager's events, calls through the workspace's Runner. The
// server process dies in the first call of each crash_ tool: the
// read-only one is retried once the Conn has reconnected, the destructive
// one is not (the server saw it once).
func TestCrashThroughManager(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	counts := filepath.Join(t.TempDir(), "counts")
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{{
		"name": "crash", "type": "local", "command": []string{exe},
		"env":     map[string]string{mcptest.CrashServerEnv: counts},
		"timeout": 20000,
	}}, nil))
	w := e.open(t)
	settle(t, w)

	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	allow := &orchestrator.ExecOptions{Approver: allowOnce}
	rs := w.Execute(ctx, []orchestrator.ToolCall{{CallID: "1", Tool: "mcp__crash__crash_lookup"}}, allow)
	if got := rs[0].Text(); rs[0].IsError || got != "crash_lookup call 2" {
		t.Errorf("crash_lookup = %q, want the retry's answer", got)
	}
	rs = w.Execute(ctx, []orchestrator.ToolCall{{CallID: "2", Tool: "mcp__crash__crash_remove"}}, allow)
	if !rs[0].IsError || !strings.Contains(rs[0].Text(), "may or may not have run") {
		t.Errorf("crash_remove = %v %q", rs[0].IsError, rs[0].Text())
	}
	// The server comes back: the next call works.
	rs = w.Execute(ctx, []orchestrator.ToolCall{{CallID: "3", Tool: "mcp__crash__lookup"}}, allow)
	if rs[0].IsError {
		t.Errorf("lookup after the crashes: %q", rs[0].Text())
	}

	data, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	want := "crash_lookup\ncrash_lookup\ncrash_remove\nlookup\n"
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("calls the server processes saw (-want +got):\n%s", diff)
	}
}

// memServer is a scripted go-sdk server (internal/mcptest) behind a real
// mcp.Manager and its Conn, its tools run by the workspace's Runner: calls
// take the path they take in production, the Conn's loss detection and
// reconnect included. Its "crash" tools drop the session in the middle of
// their first call, the way a dying process drops its pipes.
type memServer struct {
	srv  *mcptest.Server
	mgr  *mcp.Manager
	run  orchestrator.Runner
	seen sync.Map // tool name → *atomic.Int32
}

func newMemServer(t testing.TB) *memServer {
	m := &memServer{srv: mcptest.NewServer("mem")}
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
			return mcptest.TextResult(fmt.Sprintf("%s #%d: %s", name, n, req.Params.Arguments)), nil
		})
	}
	add("lookup", true, false)
	add("flaky_lookup", true, true)
	add("remove", false, true)
	m.mgr = mcp.NewManager(&mcp.ManagerOptions{ConnOptions: mcp.ConnOptions{Dial: m.srv.Dial}})
	t.Cleanup(func() {
		m.mgr.Close()
		m.srv.Close()
	})
	srv := config.Server{Name: "mem", Type: config.TypeLocal, Enabled: true, Command: []string{"unused"}}
	if err := m.mgr.Apply(t.Context(), []config.Server{srv}); err != nil {
		t.Fatal(err)
	}
	m.run = &serverRunner{server: "mem", mgr: m.mgr}
	release, err := m.run.Ready(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release()
	return m
}

func (m *memServer) count(name string) *atomic.Int32 {
	v, _ := m.seen.LoadOrStore(name, new(atomic.Int32))
	return v.(*atomic.Int32)
}

func (m *memServer) tools(t testing.TB) []*mcpsdk.Tool {
	c, ok := m.mgr.Conn("mem")
	if !ok || len(c.Tools()) == 0 {
		t.Fatal("the in-memory server listed no tools")
	}
	return c.Tools()
}

// TestInMemoryServer runs calls through a real go-sdk server: arguments
// arrive as sent, a read-only call survives a crash through one retry, a
// destructive one that hit the crash is not repeated.
func TestInMemoryServer(t *testing.T) {
	m := newMemServer(t)
	reg := orchestrator.NewRegistry(nil)
	reg.SetServerTools("mem", m.tools(t), m.run)
	// Hang guard only: with the default toolTimeout (10 min, go test's
	// own default timeout) a lost response would hang the package in
	// callOnce instead of failing this test with "timed out".
	o := orchestrator.New(reg, &orchestrator.Options{ToolTimeout: time.Minute})
	ap := &answering{answer: orchestrator.Answer{Decision: orchestrator.AllowOnce}}
	// remove runs alone (not read-only), then flaky_lookup: each crashes
	// the server in its first call.
	rs := o.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "1", Tool: "mcp__mem__remove", Arguments: []byte(`{"q":"c"}`)},
		{CallID: "2", Tool: "mcp__mem__flaky_lookup", Arguments: []byte(`{"q":"b"}`)},
	}, &orchestrator.ExecOptions{Approver: ap})
	if !rs[0].IsError || !strings.Contains(rs[0].Text(), "may or may not have run") {
		t.Errorf("remove = %v %q", rs[0].IsError, rs[0].Text())
	}
	if got := rs[1].Text(); rs[1].IsError || got != `flaky_lookup #2: {"q":"b"}` {
		t.Errorf("flaky_lookup = %q, want the retry's answer", got)
	}
	rs = o.Execute(t.Context(), []orchestrator.ToolCall{
		{CallID: "3", Tool: "mcp__mem__lookup", Arguments: []byte(`{"q":"a"}`)},
		{CallID: "4", Tool: "mcp__mem__lookup", Arguments: []byte(`{"q":1}`)},
	}, nil)
	if got := rs[0].Text(); rs[0].IsError || got != `lookup #1: {"q":"a"}` {
		t.Errorf("lookup = %q", got)
	}
	if rs[1].Decision != orchestrator.DecisionInvalid {
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

// An mcp error reaches the orchestrator as the orchestrator's error of the
// same meaning, and stays the mcp error it was, text and all, for those
// who test for it.
func TestCallError(t *testing.T) {
	needsAuth := fmt.Errorf("calling t on s: the server refused the call before running it: %w", oauth.ErrNeedsAuth)
	for _, tc := range []struct {
		err  error
		mcp  error
		orch error // nil: a *orchestrator.RefusedError
	}{
		{fmt.Errorf("calling t on s: %w: EOF", mcp.ErrConnectionLost), mcp.ErrConnectionLost, orchestrator.ErrConnectionLost},
		{fmt.Errorf("calling t on s: %w", mcp.ErrNotConnected), mcp.ErrNotConnected, orchestrator.ErrNotConnected},
		{needsAuth, oauth.ErrNeedsAuth, nil},
	} {
		got := callError(tc.err)
		if got.Error() != tc.err.Error() || !errors.Is(got, tc.mcp) {
			t.Errorf("callError(%q) = %q, which is not %v", tc.err, got, tc.mcp)
		}
		var refused *orchestrator.RefusedError
		switch {
		case tc.orch != nil && !errors.Is(got, tc.orch):
			t.Errorf("callError(%q) is not %v", tc.err, tc.orch)
		case tc.orch == nil && (!errors.As(got, &refused) || refused.Reason != oauth.Reason(tc.err)):
			t.Errorf("callError(%q) = %#v, want a RefusedError saying %q", tc.err, got, oauth.Reason(tc.err))
		}
		for _, other := range []error{orchestrator.ErrConnectionLost, orchestrator.ErrNotConnected} {
			if other != tc.orch && errors.Is(got, other) {
				t.Errorf("callError(%q) is %v too", tc.err, other)
			}
		}
	}
	if err := callError(errors.New("a tool's own error")); errors.Is(err, orchestrator.ErrConnectionLost) || errors.Is(err, orchestrator.ErrNotConnected) {
		t.Errorf("another error became %v", err)
	}
}
