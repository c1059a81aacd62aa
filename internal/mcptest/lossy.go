package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// LossyServer is a real Streamable HTTP MCP server on loopback whose first
// tools/call of each tool runs the tool and then loses its answer: the
// response stream breaks mid-call, after its headers went out, or (with
// BreakBeforeHeaders) the connection drops before any of the answer. Later
// calls are answered. It counts the calls each tool ran, so that a test
// sees whether a client sent a call again. Its tools:
//
//	write  no hints (destructive, not idempotent): every call appends
//	put    idempotentHint, not destructive: a second call changes nothing more
//	read   readOnlyHint
type LossyServer struct {
	// URL is the server's endpoint.
	URL string

	mu     sync.Mutex
	calls  map[string]int  // tool → calls run
	broken map[string]bool // tool → its first answer was lost already
}

// LossyOptions configures NewLossyServer.
type LossyOptions struct {
	// BreakBeforeHeaders drops the connection before any of the answer
	// instead of breaking its stream.
	BreakBeforeHeaders bool
	// Stateless serves the go-sdk's stateless handler, which speaks MCP
	// 2026-07-28 (and 2025-11-25 without sessions); otherwise the
	// stateful one, which speaks 2025-11-25 and older.
	Stateless bool
}

// NewLossyServer starts a LossyServer; the test's cleanup stops it.
func NewLossyServer(t testing.TB, opts *LossyOptions) *LossyServer {
	t.Helper()
	if opts == nil {
		opts = &LossyOptions{}
	}
	ls := &LossyServer{calls: map[string]int{}, broken: map[string]bool{}}
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "lossy", Version: "1"}, nil)
	no := false
	for _, tool := range []*mcpsdk.Tool{
		{Name: "write", Description: "Append a line: every call adds one."},
		{Name: "put", Description: "Set a key: a second call changes nothing more.",
			Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no}},
		{Name: "read", Description: "Read a key.", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
	} {
		tool.InputSchema = map[string]any{"type": "object"}
		server.AddTool(tool, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			ls.mu.Lock()
			ls.calls[req.Params.Name]++
			n := ls.calls[req.Params.Name]
			ls.mu.Unlock()
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("%s ran, call %d", req.Params.Name, n)}}}, nil
		})
	}
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server },
		&mcpsdk.StreamableHTTPOptions{Stateless: opts.Stateless})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ls.firstCall(r) == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !opts.BreakBeforeHeaders {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		h.ServeHTTP(httptest.NewRecorder(), r) // the tool runs; its answer goes nowhere
		panic(http.ErrAbortHandler)            // net/http drops the connection
	}))
	ls.URL = ts.URL
	t.Cleanup(func() {
		ts.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	return ls
}

// firstCall returns the tool r calls if this is the first call of it,
// else "". r's body is left for the handler to read.
func (ls *LossyServer) firstCall(r *http.Request) string {
	if r.Method != http.MethodPost {
		return ""
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return ""
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.broken[msg.Params.Name] {
		return ""
	}
	ls.broken[msg.Params.Name] = true
	return msg.Params.Name
}

// Calls returns how many calls of tool the server ran.
func (ls *LossyServer) Calls(tool string) int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.calls[tool]
}
