package tasks

import (
	"encoding/json"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2025-11-25 task answer ({"task": {...}}, ttl and pollInterval without
// "Ms") is folded as the extension's is, and read back with the
// extension's names; an answer that merely holds a "task" field beside
// its content is a result.
func TestFoldLegacyTask(t *testing.T) {
	raw := `{"task":{"taskId":"r-1","status":"working","ttl":300000,"createdAt":"2026-12-02T06:00:00Z","lastUpdatedAt":"2026-12-02T06:00:00Z","pollInterval":1000},"_meta":{"x/y":2}}`
	task, res := foldedTask(t, raw)
	if task.TaskID != "r-1" || task.Status != Working || task.TTLMs == nil || *task.TTLMs != 300000 || task.PollIntervalMs == nil || *task.PollIntervalMs != 1000 {
		t.Errorf("task = %+v", task)
	}
	if res.Meta["x/y"] != 2.0 {
		t.Errorf("the server's _meta was lost: %v", res.Meta)
	}
	for _, other := range []string{
		`{"content":[{"type":"text","text":"x"}],"task":{"taskId":"r-2","status":"working"}}`,
		`{"content":[],"structuredContent":{"task":{"taskId":"r-3"}}}`,
	} {
		if out, ok := Fold(json.RawMessage(other)); ok || string(out) != other {
			t.Errorf("Fold(%s) = %s, %v", other, out, ok)
		}
	}
}

// The tools a tools/list page says require a task get one asked in their
// calls; other tools, a tool no longer requiring one, and a call that
// asks already are left as they are.
func TestLegacyToolsAskForTask(t *testing.T) {
	var l LegacyTools
	call := func(name string) string {
		params, _ := json.Marshal(map[string]any{"name": name, "arguments": map[string]any{"topic": "x"}})
		out, _ := l.AskForTask(params)
		var p map[string]json.RawMessage
		json.Unmarshal(out, &p)
		return string(p["task"])
	}
	if got := call("research"); got != "" {
		t.Errorf("a task asked before any list: %s", got)
	}
	l.Note(json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},{"name":"maybe","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`))
	if got := call("research"); got != "{}" {
		t.Errorf("research's call asks %q, want {}", got)
	}
	for _, name := range []string{"echo", "maybe", "unknown"} {
		if got := call(name); got != "" {
			t.Errorf("%s's call asks %s", name, got)
		}
	}
	// The calls are told apart without a decode by the required name in
	// quotes: a name written with an escape, or one that only appears in
	// another tool's arguments, is still decided by the decode.
	for params, want := range map[string]bool{
		`{"name":"res\u0065arch","arguments":{}}`:      true,
		`{"name":"echo","arguments":{"t":"research"}}`: false,
		`{"arguments":{"t":"x"},"name":"research"}`:    true,
	} {
		if _, ok := l.AskForTask(json.RawMessage(params)); ok != want {
			t.Errorf("%s: a task asked %v, want %v", params, ok, want)
		}
	}
	asking := json.RawMessage(`{"name":"research","task":{"ttl":5}}`)
	if out, ok := l.AskForTask(asking); ok || string(out) != string(asking) {
		t.Errorf("a call that asks already: %s, %v", out, ok)
	}
	l.Note(json.RawMessage(`{"tools":[{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]}`))
	if got := call("research"); got != "" {
		t.Errorf("a tool relisted without the requirement still asks %s", got)
	}
}

// A 2025-11-25 task that ended, or waits for input without its questions,
// needs tasks/result; one with its result, an error, or its questions
// inlined (the extension's) does not.
func TestNeedsResult(t *testing.T) {
	for _, c := range []struct {
		t    Task
		want bool
	}{
		{Task{Status: Working}, false},
		{Task{Status: Completed}, true},
		{Task{Status: Failed}, true},
		{Task{Status: InputRequired}, true},
		{Task{Status: Cancelled}, false},
		{Task{Status: Completed, Result: &mcpsdk.CallToolResult{}}, false},
		{Task{Status: InputRequired, InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{}`)}}, false},
	} {
		if got := NeedsResult(&c.t); got != c.want {
			t.Errorf("%+v: NeedsResult = %v, want %v", c.t, got, c.want)
		}
	}
}

// A 2025-11-25 task that failed with the tool's own error (tasks/result
// answers it as a result) says that error as its failure, not the status
// message alone.
func TestFailureSaysTheToolsError(t *testing.T) {
	failed := Task{Status: Failed, StatusMessage: "stage 2", Result: &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "no\nsources"}}}}
	if got := failed.Failure(); got != "no sources" {
		t.Errorf("Failure = %q, want the tool's error", got)
	}
	if got := (&Task{Status: Failed, StatusMessage: "stage 2"}).Failure(); got != "stage 2" {
		t.Errorf("Failure without a result = %q", got)
	}
}
