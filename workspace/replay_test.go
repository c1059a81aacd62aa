package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/orchestrator"
)

// breakingServer is a real Streamable HTTP MCP server on loopback whose
// first tools/call of each tool runs the tool and then loses its answer:
// the response stream breaks mid-call (after its headers), or the
// connection drops before any answer. It counts the calls each tool saw.
type breakingServer struct {
	ts *httptest.Server

	mu     sync.Mutex
	calls  map[string]int  // tool → calls run
	broken map[string]bool // tool → its first answer was lost already
}

// breakBeforeHeaders drops the connection before any of the answer;
// otherwise the answer's headers go out and its stream breaks.
func newBreakingServer(t *testing.T, breakBeforeHeaders bool) *breakingServer {
	b := &breakingServer{calls: map[string]int{}, broken: map[string]bool{}}
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "breaking", Version: "1"}, nil)
	for _, tool := range []*mcpsdk.Tool{
		{Name: "write", Description: "Appends a line: every call adds one."},
		{Name: "put", Description: "Sets a key: a second call changes nothing more.",
			Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(bool)}},
		{Name: "read", Description: "Reads a key.", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
	} {
		tool.InputSchema = map[string]any{"type": "object"}
		server.AddTool(tool, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			b.mu.Lock()
			b.calls[req.Params.Name]++
			n := b.calls[req.Params.Name]
			b.mu.Unlock()
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: req.Params.Name + " ran, call " + string(rune('0'+n))}}}, nil
		})
	}
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil)
	b.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tool := b.firstCall(r)
		if tool == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !breakBeforeHeaders {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		// The tool runs; its answer goes nowhere.
		h.ServeHTTP(httptest.NewRecorder(), r)
		panic(http.ErrAbortHandler) // net/http drops the connection
	}))
	t.Cleanup(func() {
		b.ts.Close()
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	return b
}

// firstCall returns the tool r calls if this is the first call of it,
// else "". r's body is left for the handler to read.
func (b *breakingServer) firstCall(r *http.Request) string {
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
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken[msg.Params.Name] {
		return ""
	}
	b.broken[msg.Params.Name] = true
	return msg.Params.Name
}

func (b *breakingServer) seen(tool string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[tool]
}

// TestLostAnswerRetriedOnlyIfReplaySafe: a call whose answer is lost (the
// response stream breaks mid-call, or the connection drops before the
// answer) is sent again only for a read-only or idempotent tool; a write
// is reported "outcome unknown, not retried", and its server saw it once.
// Both under 2026-07-28, which has no resumable streams, and 2025-11-25.
func TestLostAnswerRetriedOnlyIfReplaySafe(t *testing.T) {
	for _, tc := range []struct {
		name          string
		version       string
		beforeHeaders bool
	}{
		{"2026-07-28, stream breaks", "", false},
		{"2026-07-28, no answer at all", "", true},
		{"2025-11-25, stream breaks", "2025-11-25", false},
		{"2025-11-25, no answer at all", "2025-11-25", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBreakingServer(t, tc.beforeHeaders)
			entry := map[string]any{"name": "b", "type": "remote", "url": srv.ts.URL, "transport": "http"}
			if tc.version != "" {
				entry["protocolVersion"] = tc.version
			}
			e := newEnv(t)
			writeJSON(t, e.cfgPath, mcpSection([]map[string]any{entry}, nil))
			w := e.open(t)
			settle(t, w)
			if st, _ := w.status("b"); st.State.String() != "connected" {
				t.Fatalf("server b: %v (%s)", st.State, st.LastError)
			}
			for _, want := range []struct {
				tool    string
				calls   int
				unknown bool
			}{
				{"write", 1, true},
				{"put", 2, false},
				{"read", 2, false},
			} {
				r := call(t, w, "mcp__b__"+want.tool, `{}`, allowOnce)
				if got := srv.seen(want.tool); got != want.calls {
					t.Errorf("%s: the server saw %d calls; want %d (result %q)", want.tool, got, want.calls, r.Text())
				}
				if r.OutcomeUnknown != want.unknown || r.IsError != want.unknown {
					t.Errorf("%s: outcomeUnknown %v, isError %v; want %v, %v: %q", want.tool, r.OutcomeUnknown, r.IsError, want.unknown, want.unknown, r.Text())
				}
				if has := strings.Contains(r.Text(), orchestrator.OutcomeUnknownText); has != want.unknown {
					t.Errorf("%s: %q; want it to say %q: %v", want.tool, r.Text(), orchestrator.OutcomeUnknownText, want.unknown)
				}
			}
		})
	}
}
