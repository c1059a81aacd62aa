package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// remoteHangGuard bounds a test that would otherwise hang on a bug; it is
// never what a test asserts.
const remoteHangGuard = 30 * time.Second

// goSDKHandler serves an MCP server with one tool, echo, over Streamable
// HTTP or legacy SSE. Sessions a client left behind (it never sent DELETE,
// or was told the session is gone) are closed when the test ends.
func goSDKHandler(t testing.TB, transport string) http.Handler {
	return mcptest.HTTPHandler(t, goSDKServer(t), transport)
}

// goSDKServer is goSDKHandler's MCP server. Sessions a client left behind
// are closed when the test ends.
func goSDKServer(t testing.TB) *mcpsdk.Server {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "oauth-test", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{Name: "echo", Description: "echoes text", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: args.Text}}}, nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	return server
}

func remoteServer(url, transport string) config.Server {
	return config.Server{Name: "remote", Type: config.TypeRemote, URL: url, Transport: transport, Timeout: remoteHangGuard}.WithDefaults()
}
