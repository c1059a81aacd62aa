package wire

import (
	"encoding/json"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// The JSON of a few values as a frontend gets them, pinned byte for byte
// (internal/protocol's fixtures pin every type's; these pin what the
// conversions make of the packages' values).

func ptr[T any](v T) *T { return &v }

// A read-only tool: no destructive (MCP's default does not apply to a
// read-only tool), openWorld and idempotent as the server said.
func TestToolInfoJSON(t *testing.T) {
	info := orchestrator.ToolInfo{ID: "mcp__s__ro", Server: "s", Name: "ro", Title: "Read only", ReadOnly: true, OpenWorld: ptr(false),
		Idempotent: true, InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}
	b, err := json.Marshal(ToolInfo(info))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"mcp__s__ro","server":"s","name":"ro","title":"Read only","description":"","readOnly":true,"openWorld":false,"idempotent":true,"inputSchema":{"type":"object"}}`
	if string(b) != want {
		t.Errorf("ToolInfo JSON =\n%s\nwant\n%s", b, want)
	}
}

// A result's content blocks and structured content as MCP has them; a call
// as a frontend sends it.
func TestToolResultJSON(t *testing.T) {
	r := orchestrator.ToolResult{
		CallID:            "c1",
		Content:           []mcpsdk.Content{&mcpsdk.TextContent{Text: "hi"}, &mcpsdk.ImageContent{Data: []byte{1}, MIMEType: "image/png"}},
		StructuredContent: map[string]any{"n": 1},
		Decision:          orchestrator.DecisionAsked,
		DurationMs:        12,
		Truncated:         &orchestrator.Truncated{ShownChars: 1, TotalChars: 2, SavedTo: "/tmp/x"},
	}
	wr, err := ToolResult(r)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(wr)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"callId":"c1","content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AQ=="}],"structuredContent":{"n":1},"isError":false,"decision":"asked","durationMs":12,"truncated":{"shownChars":1,"totalChars":2,"savedTo":"/tmp/x"}}`
	if string(b) != want {
		t.Errorf("JSON =\n%s\nwant\n%s", b, want)
	}
	var pc protocol.ToolCall
	if err := json.Unmarshal([]byte(`{"callId":"a","tool":"mcp__s__t","arguments":{"x":1}}`), &pc); err != nil {
		t.Fatal(err)
	}
	if call := ToolCall(pc); call.CallID != "a" || call.Tool != "mcp__s__t" || string(call.Arguments) != `{"x":1}` {
		t.Errorf("ToolCall = %+v", call)
	}
}

// A resource under the protocol's field names.
func TestResourceInfoJSON(t *testing.T) {
	b, err := json.Marshal(ResourceInfo(workspace.ResourceInfo{Server: "everything", URI: "demo://resource/static/document/architecture.md",
		Name: "architecture.md", MIMEType: "text/markdown", Description: "How the server is built"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"server":"everything"`, `"uri":"demo://`, `"name":"architecture.md"`, `"mimeType":"text/markdown"`, `"description":`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("resource JSON %s lacks %s", b, k)
		}
	}
}
