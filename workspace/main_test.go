package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/sandbox"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// testServerEnv makes the test binary an MCP server on stdio: the servers
// of these tests are real subprocesses, started by the real Manager.
const testServerEnv = "FREECODE_WORKSPACE_TEST_SERVER"

// changesEnv names the file whose existence changes the test server's
// definitions (see runTestServer).
const changesEnv = "FREECODE_WORKSPACE_TEST_CHANGES"

// startsEnv names a file the test server appends a line to each time it
// starts: how a test knows whether a server ran.
const startsEnv = "FREECODE_WORKSPACE_TEST_STARTS"

func TestMain(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunCrashServerIfAsked()
	if os.Getenv(testServerEnv) != "" {
		os.Exit(runTestServer())
	}
	goleak.VerifyTestMain(m)
}

// runTestServer serves mcptest.AddBasicTools' tools (echo, write,
// addtool, crash) and, run with testServerEnv set to "extra" (extraServer),
//
//	say      writes its text argument to stderr, count times (default 1)
//	roots    asks the client for its roots: their URIs, one per line; an
//	         error if the client did not declare the roots capability
//
// and writes "roots changed" to stderr on notifications/roots/list_changed.
//
// If the file named by $FREECODE_WORKSPACE_TEST_CHANGES exists when the
// server starts, the basic tools' definitions change as a server's may
// between two runs (AddBasicTools with changed). The variable is part of
// the entry, the file's contents are not: the same server, changed.
func runTestServer() int {
	if path := os.Getenv(startsEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, "started")
			f.Close()
		}
	}
	server := mcptest.NewStdioServer("wstest")
	_, err := os.Stat(os.Getenv(changesEnv))
	mcptest.AddBasicTools(server, err == nil)
	if os.Getenv(testServerEnv) == "extra" {
		addExtraTools(server)
	}
	if err := server.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

func addExtraTools(server *mcpsdk.Server) {
	obj := map[string]any{"type": "object"}
	server.AddTool(&mcpsdk.Tool{Name: "say", Description: "Write to stderr", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"},
	}}, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var args struct {
				Text  string `json:"text"`
				Count int    `json:"count"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			w := bufio.NewWriter(os.Stderr)
			for i := range max(args.Count, 1) {
				fmt.Fprintf(w, "%s %d\n", args.Text, i)
			}
			w.Flush()
			return mcptest.TextResult("said"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "roots", Description: "List the client's roots", InputSchema: obj,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		mcptest.RootsHandler)
}
