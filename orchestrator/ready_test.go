package orchestrator

import (
	"context"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// readyRunner is a fakeRunner whose server must be made ready: each Ready
// runs the next of its hooks, as a server that starts on demand or
// reconnects lists its tools, and counts what it holds.
type readyRunner struct {
	*fakeRunner
	mu    sync.Mutex
	hooks []func()
	held  int
	calls int
}

func (r *readyRunner) Ready(context.Context) (func(), error) {
	r.mu.Lock()
	var hook func()
	if r.calls < len(r.hooks) {
		hook = r.hooks[r.calls]
	}
	r.calls++
	r.held++
	r.mu.Unlock()
	if hook != nil {
		hook()
	}
	return func() {
		r.mu.Lock()
		r.held--
		r.mu.Unlock()
	}, nil
}

// readyEnv registers demo's read_file and delete_file through a
// readyRunner whose hooks are hooks.
func readyEnv(t *testing.T, rules string, hooks ...func(reg *Registry, rc *readyRunner)) (*Registry, *readyRunner, *Orchestrator) {
	t.Helper()
	e := newGateEnv(t, rules)
	rc := &readyRunner{fakeRunner: e.fc}
	for _, h := range hooks {
		if h == nil {
			rc.hooks = append(rc.hooks, nil)
			continue
		}
		rc.hooks = append(rc.hooks, func() { h(e.reg, rc) })
	}
	e.reg.SetReviewedTools("demo", []ReviewedTool{{Tool: tool("read_file", true, "")}, {Tool: tool("delete_file", false, "")}}, rc, "manifest")
	return e.reg, rc, e.orchestrator(t)
}

// changedDelete registers delete_file anew with a changed definition, as a
// server that lists it differently from its manifest.
func changedDelete(t *testing.T) func(reg *Registry, rc *readyRunner) {
	return func(reg *Registry, rc *readyRunner) {
		reg.SetReviewedTools("demo", []ReviewedTool{{Tool: tool("read_file", true, "")},
			{Tool: tool("delete_file", false, ""), Review: changedReview(t, false)}}, rc, "connected")
	}
}

// A server made ready before the batch is decided (started on demand)
// lists a changed definition: the call is decided on it, so it asks under
// an allow rule, and the server is held until the batch is over.
func TestReadyBeforeDecision(t *testing.T) {
	_, rc, o := readyEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`, changedDelete(t))
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, nil)
	if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "definition changed") || rc.count("delete_file") != 0 {
		t.Errorf("decided on the manifest's definition: %s %q", rs[0].Decision, rs[0].Text())
	}
	if rc.held != 0 {
		t.Errorf("%d holds on the server left after the batch", rc.held)
	}
	a := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	if rs := o.Execute(t.Context(), []ToolCall{{CallID: "2", Tool: "mcp__demo__delete_file"}}, &ExecOptions{Approver: a}); rs[0].Decision != DecisionAsked || len(a.reqs) != 1 || a.reqs[0].Review == nil {
		t.Errorf("with someone to ask: %s, %+v", rs[0].Decision, a.reqs)
	}
}

// A server that lists the tool anew between the decision and the call
// (it reconnected meanwhile) gets the call decided again on what it lists.
func TestReadyRecheckBeforeCall(t *testing.T) {
	_, rc, o := readyEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`, nil, changedDelete(t))
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, nil)
	if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "definition changed") || rc.count("delete_file") != 0 {
		t.Errorf("called on the decision made before the server listed the change: %s %q", rs[0].Decision, rs[0].Text())
	}
	// Unchanged, it runs as decided.
	_, rc, o = readyEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`)
	if rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, nil); rs[0].IsError || rc.count("delete_file") != 1 {
		t.Errorf("an unchanged tool: %s %q", rs[0].Decision, rs[0].Text())
	}
}

// A read-only call running beside others whose tool is listed anew as not
// read-only is not run: it would run beside them.
func TestReadyRecheckNoLongerReadOnly(t *testing.T) {
	flip := func(reg *Registry, rc *readyRunner) {
		reg.SetReviewedTools("demo", []ReviewedTool{{Tool: tool("read_file", false, "")}, {Tool: tool("delete_file", false, "")}}, rc, "reconnected")
	}
	reg, rc, o := readyEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`, nil, flip)
	other := newFakeRunner()
	reg.SetServerTools("other", []*mcpsdk.Tool{tool("peek", true, "")}, other)
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__read_file"}, {CallID: "2", Tool: "mcp__other__peek"}}, nil)
	if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "no longer read-only") || rc.count("read_file") != 0 {
		t.Errorf("read_file listed anew as not read-only: %s %q", rs[0].Decision, rs[0].Text())
	}
	if rs[1].IsError || other.count("peek") != 1 {
		t.Errorf("peek: %s %q", rs[1].Decision, rs[1].Text())
	}
}

// A call a deny rule forbids starts no server.
func TestReadyNotForDenied(t *testing.T) {
	_, rc, o := readyEnv(t, `{"permissions":{"deny":["mcp__demo__delete_file"]}}`)
	if rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, nil); rs[0].Decision != DecisionDenied {
		t.Errorf("denied call: %s", rs[0].Decision)
	}
	if rc.calls != 0 {
		t.Errorf("a denied call made its server ready %d times", rc.calls)
	}
}

// A batch whose calls are all one server's makes that server ready on the
// caller's goroutine: with nothing to overlap, a goroutine to start and
// wait for would only cost the wake-ups.
func TestReadyOneServerNoGoroutine(t *testing.T) {
	_, rc, o := readyEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`)
	rc.handle("read_file", func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error) {
		return textResult("read"), nil
	})
	const n = 100
	before := goroutinesCreated()
	for range n {
		rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__read_file"}, {CallID: "2", Tool: "mcp__demo__read_file"}}, nil)
		mustNotError(t, rs[0])
	}
	// Two read-only calls run beside each other, one goroutine each; what
	// else the process starts meanwhile is left room for.
	if got := goroutinesCreated() - before; got > 2*n+n/4 {
		t.Errorf("%d batches of one server's two calls started %d goroutines; want 2 a batch", n, got)
	}
	if rc.held != 0 {
		t.Errorf("%d holds on the server left after the batches", rc.held)
	}
}

// goroutinesCreated is how many goroutines this process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
