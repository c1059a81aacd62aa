package mcptest

import (
	"context"
	"fmt"
	"os"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CrashServerEnv, set in a server entry's env to the path of a file, makes
// the test binary (whose TestMain calls RunCrashServerIfAsked) a stdio MCP
// server whose tools crash it mid-call, as a server that dies under a call
// does. The file logs every call the server processes saw, one tool name a
// line, in order, across the restarted processes.
const CrashServerEnv = "FREECODE_MCPTEST_CRASHSERVER"

// RunCrashServerIfAsked serves, when CrashServerEnv is set, three tools:
//
//	crash_lookup  read-only
//	crash_remove  destructive
//	lookup        read-only
//
// A crash_ tool exits the process (status 3, saying so on stderr) in the
// first call of it ever, before it answers; every other call answers
// "<tool> call <n>", n counting the calls of that tool. It returns only
// when not asked.
func RunCrashServerIfAsked() {
	log := os.Getenv(CrashServerEnv)
	if log == "" {
		return
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "crashy", Version: "1.0.0"}, nil)
	yes := true
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	for _, tool := range []*mcpsdk.Tool{
		{Name: "crash_lookup", Annotations: readOnly},
		{Name: "crash_remove", Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}},
		{Name: "lookup", Annotations: readOnly},
	} {
		tool.InputSchema = map[string]any{"type": "object"}
		s.AddTool(tool, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			n, err := logCall(log, tool.Name)
			if err != nil {
				return nil, err
			}
			if n == 1 && strings.HasPrefix(tool.Name, "crash_") {
				fmt.Fprintf(os.Stderr, "crashing in the first call of %s\n", tool.Name)
				os.Exit(3)
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf("%s call %d", tool.Name, n)}}}, nil
		})
	}
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "crash server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// logCall appends name to the call log and returns how many calls of it
// the log holds now.
func logCall(log, name string) (int, error) {
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, err
	}
	_, err = fmt.Fprintln(f, name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return CrashCalls(log, name), err
}

// CrashCalls returns how many calls of tool the crash server's call log
// holds (0 when there is no log yet).
func CrashCalls(log, tool string) int {
	b, _ := os.ReadFile(log)
	n := 0
	for l := range strings.Lines(string(b)) {
		if strings.TrimSuffix(l, "\n") == tool {
			n++
		}
	}
	return n
}
