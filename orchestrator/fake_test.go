package orchestrator

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeRunner is a Runner whose tools are Go functions; it counts the calls
// each tool received (what "the server saw").
type fakeRunner struct {
	timeout time.Duration // ToolTimeout; 0 means the orchestrator's default

	mu    sync.Mutex
	seen  map[string]int
	calls []Call // every call, as the Runner got it
	tools map[string]func(ctx context.Context, args map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error)
}

func newFakeRunner() *fakeRunner {
	return &fakeRunner{seen: map[string]int{}, tools: map[string]func(context.Context, map[string]any, func(Progress)) (*mcpsdk.CallToolResult, error){}}
}

func (f *fakeRunner) handle(name string, fn func(ctx context.Context, args map[string]any, onProgress func(Progress)) (*mcpsdk.CallToolResult, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools[name] = fn
}

func (f *fakeRunner) CallTool(ctx context.Context, call Call) (Outcome, error) {
	f.mu.Lock()
	f.seen[call.Name]++
	f.calls = append(f.calls, call)
	fn := f.tools[call.Name]
	f.mu.Unlock()
	if fn == nil {
		return Outcome{Result: textResult("ok " + call.Name)}, nil
	}
	res, err := fn(ctx, call.Args, call.OnProgress)
	return Outcome{Result: res}, err
}

func (f *fakeRunner) ToolTimeout() time.Duration { return f.timeout }

// Ready returns at once: the fake's server is always up (readyRunner's is
// not).
func (f *fakeRunner) Ready(context.Context) (func(), error) { return func() {}, nil }

func (f *fakeRunner) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen[name]
}

func textResult(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

// tool describes one fake MCP tool for register.
func tool(name string, readOnly bool, schema string) *mcpsdk.Tool {
	t := &mcpsdk.Tool{Name: name, Description: "the " + name + " tool"}
	if readOnly {
		t.Annotations = &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	}
	if schema == "" {
		schema = `{"type":"object"}`
	}
	t.InputSchema = json.RawMessage(schema)
	return t
}

// allowOnce is an Approver that allows every call once and records what it
// was asked.
type recordingApprover struct {
	answer Answer
	err    error

	mu   sync.Mutex
	reqs []Request
}

func (a *recordingApprover) Approve(_ context.Context, req Request) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reqs = append(a.reqs, req)
	return a.answer, a.err
}

func (a *recordingApprover) asked() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.reqs {
		out = append(out, r.Tool)
	}
	return out
}

func decisions(rs []ToolResult) []Decision {
	out := make([]Decision, len(rs))
	for i, r := range rs {
		out[i] = r.Decision
	}
	return out
}

func callIDs(rs []ToolResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.CallID
	}
	return out
}

func mustNotError(t *testing.T, r ToolResult) {
	t.Helper()
	if r.IsError {
		t.Fatalf("call %s: unexpected error result: %s", r.CallID, r.Text())
	}
}
