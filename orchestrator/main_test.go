package orchestrator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// crashServerEnv makes the test binary a stdio MCP server (the SDK's own
// trick): its tools whose names start with "crash_" exit the process in
// the middle of their first call, as a crashing server would. Calls are
// counted in the file named by crashCountEnv, one line per call, across
// the restarted processes.
const (
	crashServerEnv = "FREECODE_ORCH_TEST_SERVER"
	crashCountEnv  = "FREECODE_ORCH_TEST_COUNTS"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashServerEnv) == "1" {
		runCrashServer()
		return
	}
	goleak.VerifyTestMain(m)
}

func runCrashServer() {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "crash", Version: "1"}, nil)
	countFile := os.Getenv(crashCountEnv)
	for _, name := range []string{"crash_lookup", "crash_remove", "lookup"} {
		var ann *mcpsdk.ToolAnnotations
		if strings.HasSuffix(name, "lookup") {
			ann = &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
		}
		s.AddTool(&mcpsdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Annotations: ann},
			func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				before, _ := os.ReadFile(countFile)
				n := strings.Count(string(before), name+"\n") + 1
				f, err := os.OpenFile(countFile, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
				if err != nil {
					return nil, err
				}
				fmt.Fprintln(f, name)
				f.Close()
				if strings.HasPrefix(name, "crash_") && n == 1 {
					os.Exit(3)
				}
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("%s #%d", name, n)}}}, nil
			})
	}
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
