package servertest

import (
	"context"
	"fmt"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// AppsEnv, in a Server's env, makes the server an MCP Apps server (the
// extension io.modelcontextprotocol/ui, SEP-1865) as well: it serves the
// view ui://<name>/board.html (mime text/html;profile=mcp-app, its _meta.ui.csp
// letting it connect to https://api.example.com) and these
// tools, each naming the view in its _meta:
//
//	board_show   read-only, for the model and the app (visibility
//	             ["model","app"]): returns "board", then the mime types
//	             of the ui extension the client declared ("ui: none"
//	             when it declared none)
//	board_move   for the app alone (["app"]): writes "moved <text>" to
//	             stderr, returns "moved"
//	board_hint   for the model alone (["model"]): returns "hint"
//	board_legacy no visibility, the view named by the older flat key
//	             _meta["ui/resourceUri"]: returns "legacy"
const AppsEnv = "FREECODE_SERVERTEST_APPS"

// addAppTools adds the view and the tools AppsEnv serves.
func addAppTools(server *mcpsdk.Server, name string) {
	view := "ui://" + name + "/board.html"
	const mime = "text/html;profile=mcp-app"
	server.AddResource(&mcpsdk.Resource{URI: view, Name: "board", MIMEType: mime, Description: "the task board's view"},
		func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: view, MIMEType: mime,
				Text: "<!doctype html><title>board</title><p>the board</p>",
				Meta: mcpsdk.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.example.com"}}}}}}}, nil
		})
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	ui := func(visibility ...string) mcpsdk.Meta {
		m := map[string]any{"resourceUri": view}
		if visibility != nil {
			m["visibility"] = visibility
		}
		return mcpsdk.Meta{"ui": m}
	}
	no := false
	server.AddTool(&mcpsdk.Tool{Name: "board_show", Description: "Show the task board", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}, Meta: ui("model", "app")},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			declared := "ui: none"
			if caps := req.ClientCapabilities(); caps != nil {
				if ext, ok := caps.Extensions["io.modelcontextprotocol/ui"].(map[string]any); ok {
					declared = fmt.Sprintf("ui: %v", ext["mimeTypes"])
				}
			}
			return mcptest.TextResult(strings.Join([]string{"board", declared}, "\n")), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "board_move", Description: "Move a card (the board's own button)", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &no}, Meta: ui("app")},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "moved", mcptest.StringArg(req, "text"))
			return mcptest.TextResult("moved"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "board_hint", Description: "Hint for the model", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}, Meta: ui("model")},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return mcptest.TextResult("hint"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "board_legacy", Description: "A view named the older way", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}, Meta: mcpsdk.Meta{"ui/resourceUri": view}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return mcptest.TextResult("legacy"), nil
		})
}
