package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server-everything's simulate-research-query requires the tasks of the
// 2025-11-25 revision (execution.taskSupport "required"): called as any
// tool, it is refused (-32601). A Conn asks for the task, follows it
// through tasks/get and takes its result from tasks/result; an ambiguous
// query's question (input_required, sent while tasks/result is open) goes
// to the call's Asker, and the report says the answer.
func TestInteropLegacyTaskServerEverything(t *testing.T) {
	srv := everythingServer(t)
	// Elicitation declared: the server asks an ambiguous query's question
	// only of a client that can answer it.
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Elicitation: true})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Run("plain", func(t *testing.T) {
		var mu sync.Mutex
		var steps []string
		res, err := c.CallTool(t.Context(), "simulate-research-query", map[string]any{"topic": "tides"}, &CallOptions{OnProgress: func(p Progress) {
			mu.Lock()
			steps = append(steps, p.Message)
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(res); res.IsError || !strings.Contains(text, "# Research Report: tides") {
			t.Fatalf("the task's result: %+v %q", res, text)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(steps) == 0 || !strings.Contains(steps[0], "working") {
			t.Errorf("the task's progress: %q", steps)
		}
	})
	t.Run("input_required", func(t *testing.T) {
		var asked []string
		asker := &askFuncs{elicit: func(_ context.Context, q question) (*mcpsdk.ElicitResult, error) {
			asked = append(asked, q.Params.Message)
			return &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
		}}
		res, err := c.CallTool(t.Context(), "simulate-research-query", map[string]any{"topic": "tides", "ambiguous": true}, by(asker, "call-1"))
		if err != nil {
			t.Fatal(err)
		}
		if text := resultText(res); res.IsError || !strings.Contains(text, "Clarification**: historical") {
			t.Fatalf("the task's result: %q", text)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "tides") {
			t.Errorf("asked %q, want the server's one question", asked)
		}
	})
}

func resultText(res *mcpsdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
