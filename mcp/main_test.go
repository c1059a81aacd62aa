package mcp

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/sandbox"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// TestMain doubles as the test MCP server: a Conn under test re-executes
// this binary with testServerEnv set (see testserver_test.go).
func TestMain(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunTasksServerIfAsked()
	if os.Getenv(testServerEnv) != "" {
		os.Exit(runTestServer(os.Args[1:]))
	}
	if dir := os.Getenv(testOwnerEnv); dir != "" {
		os.Exit(runTestOwner(dir))
	}
	if dir := os.Getenv(testReapEnv); dir != "" {
		os.Exit(runReaper(dir))
	}
	goleak.VerifyTestMain(m)
}
