// Command oauth-newest-server is a test program: an MCP server that speaks
// only the 2026-07-28 protocol, behind an OAuth 2.1 authorization server
// (internal/oauthtest), both on loopback, for tests outside go test (the
// VS Code extension's integration tests). Its consent is automatic: the
// authorization page redirects back to the client's loopback callback at
// once, as a user who consents at once. It is never built into bin/.
//
// It prints one JSON line on stdout once it listens,
//
//	{"mcpURL": "http://127.0.0.1:P/mcp", "issuer": "http://127.0.0.1:Q"}
//
// and serves until its stdin closes or it gets SIGINT or SIGTERM; then it
// writes the authorization server's events to stderr, one a line, and
// exits. Its one tool, echo, returns its text argument.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/oauthtest"
)

// protocolVersion is the one revision it speaks.
const protocolVersion = "2026-07-28"

func main() {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "oauth-newest-server", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{
		Name:        "echo",
		Description: "Return the text unchanged.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
	}, echo)
	// The go-sdk serves 2026-07-28 only from its stateless handler.
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, &mcpsdk.StreamableHTTPOptions{Stateless: true})
	as, stop := oauthtest.Serve(oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, oauthtest.NewestOnly(h, protocolVersion))

	line, _ := json.Marshal(map[string]string{"mcpURL": as.MCPURL, "issuer": as.Issuer})
	fmt.Printf("%s\n", line)

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	<-ctx.Done()
	stop()
	for _, e := range as.Events("") {
		fmt.Fprintln(os.Stderr, e)
	}
}

func echo(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
	var args struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: args.Text}}}, nil
}
