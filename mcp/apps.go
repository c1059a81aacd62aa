package mcp

import (
	"fmt"
	"maps"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp/sandbox"
)

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

// ViewReachKey is the _meta key under which FreeCode tells a frontend, on
// a view it read for it, what it left out of the view's _meta.ui.csp and
// why (see keepViewInSandbox): {"dropped": ["connectDomains: https://x.example: outside …"]}.
const ViewReachKey = "freecode/viewReach"

// cspLists are the lists of a view's _meta.ui.csp that open its page to
// the network.
var cspLists = []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}

// keepViewInSandbox keeps the views of a sandboxed server from reaching
// further than the server may: of each ui:// content's _meta.ui.csp lists,
// only the origins the server's sandbox reaches are kept
// (sandbox.Reaches), and the others are said under ViewReachKey. The
// maps it changes are copies: what the session may hold stays as it was.
func keepViewInSandbox(srv config.Server, res *mcpsdk.ReadResourceResult) {
	if res == nil || !srv.Sandboxed() {
		return
	}
	network, domains := srv.SandboxOf().Net()
	for i, c := range res.Contents {
		if c == nil || !strings.HasPrefix(c.URI, "ui://") {
			continue
		}
		ui, _ := c.Meta["ui"].(map[string]any)
		csp, _ := ui["csp"].(map[string]any)
		if csp == nil {
			continue
		}
		kept := maps.Clone(csp)
		var dropped []any
		for _, key := range cspLists {
			list, ok := csp[key].([]any)
			if !ok {
				continue
			}
			in := []any{}
			for _, o := range list {
				s, _ := o.(string)
				if ok, why := sandbox.Reaches(network, domains, strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), "/")); ok {
					in = append(in, o)
				} else {
					dropped = append(dropped, fmt.Sprintf("%s: %s: %s", key, s, why))
				}
			}
			kept[key] = in
		}
		if dropped == nil {
			continue
		}
		cc := *c
		cc.Meta = maps.Clone(c.Meta)
		ui = maps.Clone(ui)
		ui["csp"] = kept
		cc.Meta["ui"] = ui
		cc.Meta[ViewReachKey] = map[string]any{"dropped": dropped}
		res.Contents[i] = &cc
	}
}
