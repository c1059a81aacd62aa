package mcptest

import (
	"net/http"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// HTTPHandler serves server over Streamable HTTP, or legacy SSE when
// transport is config.TransportSSE, for a test's HTTP server on loopback.
// Sessions a client left behind (it never sent DELETE, or was told the
// session is gone) are closed when the test ends.
func HTTPHandler(t testing.TB, server *mcpsdk.Server, transport string) http.Handler {
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	get := func(*http.Request) *mcpsdk.Server { return server }
	if transport == config.TransportSSE {
		return mcpsdk.NewSSEHandler(get, nil)
	}
	return mcpsdk.NewStreamableHTTPHandler(get, nil)
}
