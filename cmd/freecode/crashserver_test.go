package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// crashServerEnv makes the test binary an MCP server over stdio (see
// runCrashServerIfAsked) whose tools crash the process mid-call the first
// time each is called: the variable names the directory that counts calls.
const crashServerEnv = "FREECODE_CLI_TEST_CRASHSERVER"

// runCrashServerIfAsked serves, when the environment asks for it, two
// tools: lookup (read-only) and remove (destructive). Each call of a tool
// is counted in <dir>/<tool>; the first one ever exits the process before
// it answers, as a server that crashes mid-call. Later calls answer "<tool>
// call N". It returns only when not asked.
func runCrashServerIfAsked() {
	dir := os.Getenv(crashServerEnv)
	if dir == "" {
		return
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "crashy", Version: "1.0.0"}, nil)
	yes := true
	for _, tool := range []*mcpsdk.Tool{
		{Name: "lookup", InputSchema: map[string]any{"type": "object"}, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "remove", InputSchema: map[string]any{"type": "object"}, Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}},
	} {
		s.AddTool(tool, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n := countCall(filepath.Join(dir, tool.Name))
			if n == 1 {
				fmt.Fprintf(os.Stderr, "crashing in the first call of %s\n", tool.Name)
				os.Exit(3)
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("%s call %d", tool.Name, n)}}}, nil
		})
	}
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "crash server:", err)
	}
	os.Exit(0)
}

// countCall adds one to the count in file and returns it.
func countCall(file string) int {
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	n++
	os.WriteFile(file, []byte(strconv.Itoa(n)), 0o600)
	return n
}

// callCount reads the count countCall keeps in file.
func callCount(file string) int {
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
