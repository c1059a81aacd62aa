package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// With --apps the server is an MCP Apps server as well (the extension
// io.modelcontextprotocol/ui, SEP-1865): it serves one view, the HTML of
// view/files.html as ui://<name>/files.html, and the tool that names it.
// The view lists the files of the result and has a Delete button per file
// that asks the host to call delete_file, the destructive tool: a host
// that gates calls asks the user first, whoever makes the call.

// appMIME is the one mime type of a view.
const appMIME = "text/html;profile=mcp-app"

//go:embed view/files.html
var filesView string

const showFilesSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the project root; default the root."}
  },
  "additionalProperties": false
}`

// addApp registers the view and show_files on s. The view loads nothing
// from the network: its resource declares no _meta.ui.csp.
func (d *demo) addApp(s *mcp.Server, name string) {
	uri := "ui://" + name + "/files.html"
	s.AddResource(&mcp.Resource{URI: uri, Name: "files", Title: "Project files", MIMEType: appMIME,
		Description: "The files of the project, each with a Delete button (show_files' view)."},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: appMIME, Text: filesView,
				Meta: mcp.Meta{"ui": map[string]any{"prefersBorder": true}}}}}, nil
		})
	d.add(s, &mcp.Tool{
		Name:        "show_files",
		Title:       "Show project files",
		Description: "Show the project's files (recursively, under path) in a view where each can be deleted.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		// The flat key is the older spelling, for hosts that read only it.
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": uri, "visibility": []string{"model", "app"}}, "ui/resourceUri": uri},
	}, showFilesSchema, d.showFiles)
}

// showFiles lists the files under path: as lines for the model, and as
// structuredContent {path, files} for the view.
func (d *demo) showFiles(_ context.Context, _ *mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	dir, err := cleanPath(args.Path)
	if err != nil {
		return nil, err
	}
	all, err := d.proj.Files()
	if err != nil {
		return nil, err
	}
	files := []string{}
	for _, f := range all {
		if under(f, dir) && f != dir {
			files = append(files, f)
		}
	}
	text := strings.Join(files, "\n")
	if len(files) == 0 {
		text = "no files under " + dir
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{"path": dir, "files": files},
	}, nil
}
