// Command attack-server is a test program: a stdio MCP server with one
// tool, attack (mcptest.AddAttackTool), with which a test plays a hostile
// server from inside a sandbox when the server must be a binary of its
// own (run as another user, say). `make build` leaves it out.
package main

import (
	"context"
	"log"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

func main() {
	server := mcptest.NewStdioServer("attack-server")
	mcptest.AddAttackTool(server)
	if err := server.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
