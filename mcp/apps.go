package mcp

import mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

// The MCP Apps extension (SEP-1865): a server ships HTML views as ui://
// resources and names, in a tool's _meta.ui, the view that renders its
// results and who the tool is for (the orchestrator keeps a tool that is
// for the app alone from every model). FreeCode reads the views for its
// frontends (freecode/resources/read) and runs the calls their views
// make; a frontend renders them.
const (
	// AppsExtension is the extension's identifier, under which a client
	// declares it in its capabilities' extensions.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the mime type of a view: HTML for a sandboxed frame.
	AppMIMEType = "text/html;profile=mcp-app"
)

// declareApps declares the extension, with the one kind of view there is,
// so that a server lists its views and its tools for apps. The extension
// has a server's results carry their content for models all the same, so
// a frontend that renders no view loses nothing by it.
func declareApps(caps *mcpsdk.ClientCapabilities) {
	caps.AddExtension(AppsExtension, map[string]any{"mimeTypes": []string{AppMIMEType}})
}
