package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/sandbox"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// testServerEnv makes the test binary an MCP server on stdio: the servers
// behind the MCP server under test are real subprocesses, started by the
// workspace's real Manager.
const testServerEnv = "FREECODE_MCPSERVE_TEST_SERVER"

// testAppsEnv gives the test server its MCP Apps tools (runTestServer).
const testAppsEnv = "FREECODE_MCPSERVE_TEST_APPS"

func TestMain(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunTasksServerIfAsked()
	if os.Getenv(testServerEnv) != "" {
		os.Exit(runTestServer())
	}
	goleak.VerifyTestMain(m)
}

// longToolName makes an id over 64 characters, which gets an alias.
var longToolName = "a_tool_whose_name_is_long_enough_" + strings.Repeat("x", 40)

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

func args(req *mcpsdk.CallToolRequest) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &m)
	return m
}

// testInputSchema is every tool's input schema, written with keys out of
// order and a draft-07 keyword, so that a test can see it listed as the
// server sent it.
const testInputSchema = `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","minimum":0},"file":{"type":"string"}},"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`

// testOutputSchema is the output schema of the structured tool.
const testOutputSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// runTestServer serves these tools:
//
//	echo         read-only: returns its text
//	write        destructive: returns "wrote <text>"
//	progress     read-only: sends n progress notifications, then returns "done"
//	block        read-only: sends progress "blocking", waits until the call
//	             is cancelled, then writes "cancelled" to a TCP connection
//	             to the address text
//	structured   read-only, with an outputSchema: returns {text} as
//	             structuredContent (and as text)
//	addtool      not destructive: adds a tool named text (list_changed follows)
//	<longToolName> read-only: returns "long"
//
// and with testAppsEnv set, two MCP Apps tools naming the view
// ui://srv/view.html: app_only (visibility ["app"]) and app_view
// (["model","app"]), both read-only.
func runTestServer() int {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "servetest", Version: "1.0.0"}, nil)
	in := json.RawMessage(testInputSchema)
	yes, no := true, false
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	server.AddTool(&mcpsdk.Tool{Name: "echo", Title: "Echo", Description: "Echo the text", InputSchema: in, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			s, _ := args(req)["text"].(string)
			return text(s), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "write", Description: "Pretend to write", InputSchema: in,
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			s, _ := args(req)["text"].(string)
			return text("wrote " + s), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "progress", Description: "Report progress n times", InputSchema: in, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n, _ := args(req)["n"].(float64)
			if token := req.Params.GetProgressToken(); token != nil {
				for i := 1; i <= int(n); i++ {
					err := req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: n, Message: fmt.Sprintf("step %d", i)})
					if err != nil {
						return nil, err
					}
				}
			}
			return text("done"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "block", Description: "Wait to be cancelled", InputSchema: in, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{ProgressToken: token, Message: "blocking"})
			}
			<-ctx.Done()
			addr, _ := args(req)["text"].(string)
			var d net.Dialer
			conn, err := d.DialContext(context.Background(), "tcp", addr)
			if err != nil {
				return nil, err
			}
			conn.Write([]byte("cancelled"))
			conn.Close()
			return nil, ctx.Err()
		})
	server.AddTool(&mcpsdk.Tool{Name: "structured", Description: "Return structured content", InputSchema: in,
		OutputSchema: json.RawMessage(testOutputSchema), Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			s, _ := args(req)["text"].(string)
			r := text(s)
			r.StructuredContent = map[string]any{"text": s}
			return r, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "addtool", Description: "Add a tool", InputSchema: in,
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &no}},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			name, _ := args(req)["text"].(string)
			server.AddTool(&mcpsdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Annotations: readOnly},
				func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
					return text(name), nil
				})
			return text("added " + name), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: longToolName, Description: "A long name", InputSchema: in, Annotations: readOnly},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("long"), nil
		})
	if os.Getenv(testAppsEnv) != "" {
		ui := func(visibility ...string) mcpsdk.Meta {
			return mcpsdk.Meta{"ui": map[string]any{"resourceUri": "ui://srv/view.html", "visibility": visibility}}
		}
		server.AddTool(&mcpsdk.Tool{Name: "app_only", Description: "The view's own button", InputSchema: in, Annotations: readOnly, Meta: ui("app")},
			func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return text("app only ran"), nil
			})
		server.AddTool(&mcpsdk.Tool{Name: "app_view", Description: "Show the view", InputSchema: in, Annotations: readOnly, Meta: ui("model", "app")},
			func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return text("view shown"), nil
			})
	}
	if err := server.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}
