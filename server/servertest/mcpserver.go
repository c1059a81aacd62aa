package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerEnv makes the test binary an MCP server on stdio (see Main), so
// that the sidecar under test runs real subprocess servers.
const mcpServerEnv = "FREECODE_SERVERTEST_MCP"

// Server returns the JSON of a config entry that runs the test binary as
// the MCP server name, with these tools:
//
//	echo     read-only: returns its text argument
//	write    destructive: returns "wrote"
//	addtool  adds the tool named by its name argument (tools/list_changed follows)
//	crash    exits the process, as a crashing server does
//	block    read-only: writes "blocking <text>" to stderr, waits until the
//	         call is cancelled, then writes "cancelled <text>" to stderr
//	roots    read-only: asks the client for its roots and returns their URIs, one per line
//	say      read-only: writes its text argument to stderr and returns "said"
//
// extra is merged into the entry (e.g. {"enabled": false}).
func Server(name string, extra map[string]any) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	entry := map[string]any{"name": name, "type": "local", "command": []string{exe}, "env": map[string]string{mcpServerEnv: name}}
	for k, v := range extra {
		entry[k] = v
	}
	b, err := json.Marshal(entry)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

func arg(req *mcpsdk.CallToolRequest, name string) string {
	var args map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &args)
	s, _ := args[name].(string)
	return s
}

// runMCPServer serves the tools Server lists on stdio.
func runMCPServer() int {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "servertest", Version: "1.0.0"}, nil)
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"},
		"name": map[string]any{"type": "string"},
	}}
	yes, no := true, false
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	server.AddTool(&mcpsdk.Tool{Name: "echo", Description: "Echo the text", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text(arg(req, "text")), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "write", Description: "Pretend to write", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("wrote"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "addtool", Description: "Add a tool", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &no}},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			name := arg(req, "name")
			server.AddTool(&mcpsdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
					return text(name), nil
				})
			return text("added " + name), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "crash", Description: "Exit at once", InputSchema: obj},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "block", Description: "Wait until cancelled", InputSchema: obj, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "blocking", arg(req, "text"))
			<-ctx.Done()
			// The go-sdk cancels a call's context on notifications/cancelled.
			fmt.Fprintln(os.Stderr, "cancelled", arg(req, "text"))
			return nil, ctx.Err()
		})
	server.AddTool(&mcpsdk.Tool{Name: "roots", Description: "List the client's roots", InputSchema: obj, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, "\n")), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "say", Description: "Write the text to stderr", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, arg(req, "text"))
			return text("said"), nil
		})
	if err := server.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "servertest server:", err)
		return 1
	}
	return 0
}
