package mcptasks

import (
	"net/http"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// HTTPHandler serves server over Streamable HTTP to clients of every
// revision, with the task methods' Mcp-Name checked: mcpwire's
// RevisionRouter in front of a stateful and a stateless handler, as the
// go-sdk serves 2026-07-28 only without sessions, behind RoutingHeaders.
func HTTPHandler(server *mcpsdk.Server) http.Handler {
	get := func(*http.Request) *mcpsdk.Server { return server }
	return mcpwire.RoutingHeaders(&mcpwire.RevisionRouter{
		Stateful:  mcpsdk.NewStreamableHTTPHandler(get, nil),
		Stateless: mcpsdk.NewStreamableHTTPHandler(get, &mcpsdk.StreamableHTTPOptions{Stateless: true}),
	})
}
