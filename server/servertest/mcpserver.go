package servertest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// mcpServerEnv makes the test binary an MCP server on stdio (see Main), so
// that the sidecar under test runs real subprocess servers.
const mcpServerEnv = "FREECODE_SERVERTEST_MCP"

// Server returns the JSON of a config entry that runs the test binary as
// the MCP server name, with mcptest.AddBasicTools' tools (echo, write,
// addtool, crash) and these:
//
//	block    read-only: writes "blocking <text>" to stderr, waits until the
//	         call is cancelled, then writes "cancelled <text>" to stderr
//	roots    read-only: asks the client for its roots and returns their URIs,
//	         one per line; an error if the client has no roots capability
//	say      read-only: writes its text argument to stderr, count times
//	         (default once), and returns "said"
//	mcplog   read-only: sends notifications/message with its level and text
//	progress read-only: sends progress 1/2 and 2/2, with messages, then
//	         waits until the call is cancelled
//
// and those that ask the client, with a resource and a prompt (see
// addAskTools); with AppsEnv, an MCP Apps view and its tools. It writes "roots changed" to stderr on
// notifications/roots/list_changed. With ToolsFileEnv in its env, it also
// serves a tool for each name in that file when it starts, returning its
// name: so a server restarted after the file changed lists other tools;
// with FailFileEnv, it does not start while that file exists.
//
// extra is merged into the entry (e.g. {"enabled": false}); its "env", a
// map[string]string, into the entry's env.
func Server(name string, extra map[string]any) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	env := map[string]string{mcpServerEnv: name}
	entry := map[string]any{"name": name, "type": "local", "command": []string{exe}, "env": env}
	for k, v := range extra {
		if e, ok := v.(map[string]string); ok && k == "env" {
			for ek, ev := range e {
				env[ek] = ev
			}
			continue
		}
		entry[k] = v
	}
	b, err := json.Marshal(entry)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ToolsFileEnv, in a Server's env, names a file of more tool names, one a
// line, that the server reads when it starts.
const ToolsFileEnv = "FREECODE_SERVERTEST_TOOLS"

// FailFileEnv, in a Server's env, names a file whose presence makes the
// server exit at once when it starts, as a server that cannot come back.
const FailFileEnv = "FREECODE_SERVERTEST_FAIL_IF"

// lockedWriter keeps the SDK's messages and mcplog's whole on stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// runMCPServer serves the tools Server lists on stdio.
func runMCPServer() int {
	if path := os.Getenv(FailFileEnv); path != "" {
		if _, err := os.Stat(path); err == nil {
			fmt.Fprintln(os.Stderr, "servertest server: refusing to start:", path, "exists")
			return 1
		}
	}
	stdout := &lockedWriter{w: os.Stdout}
	server := mcptest.NewStdioServer("servertest")
	mcptest.AddBasicTools(server, false)
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"},
		"name": map[string]any{"type": "string"},
	}}
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	server.AddTool(&mcpsdk.Tool{Name: "block", Description: "Wait until cancelled", InputSchema: obj, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "blocking", mcptest.StringArg(req, "text"))
			<-ctx.Done()
			// The go-sdk cancels a call's context on notifications/cancelled.
			fmt.Fprintln(os.Stderr, "cancelled", mcptest.StringArg(req, "text"))
			return nil, ctx.Err()
		})
	server.AddTool(&mcpsdk.Tool{Name: "roots", Description: "List the client's roots", InputSchema: obj, Annotations: readOnly},
		mcptest.RootsHandler)
	sayArgs := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"},
	}}
	server.AddTool(&mcpsdk.Tool{Name: "say", Description: "Write the text to stderr", InputSchema: sayArgs, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var args struct {
				Text  string `json:"text"`
				Count int    `json:"count"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			w := bufio.NewWriter(os.Stderr)
			for range max(args.Count, 1) {
				fmt.Fprintln(w, args.Text)
			}
			w.Flush()
			return mcptest.TextResult("said"), nil
		})
	logArgs := map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "level": map[string]any{"type": "string"},
	}}
	server.AddTool(&mcpsdk.Tool{Name: "mcplog", Description: "Send an MCP log message", InputSchema: logArgs, Annotations: readOnly},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			// Written as it is: the go-sdk sends a server's log only once the
			// client set a level, which FreeCode's client does not.
			b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
				"params": map[string]any{"level": mcptest.StringArg(req, "level"), "logger": "servertest", "data": mcptest.StringArg(req, "text")}})
			if err != nil {
				return nil, err
			}
			if _, err := stdout.Write(append(b, '\n')); err != nil {
				return nil, err
			}
			return mcptest.TextResult("logged"), nil
		})
	server.AddTool(&mcpsdk.Tool{Name: "progress", Description: "Report progress", InputSchema: obj, Annotations: readOnly},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if token := req.Params.GetProgressToken(); token != nil {
				for i := 1; i <= 2; i++ {
					req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
						ProgressToken: token, Progress: float64(i), Total: 2, Message: fmt.Sprintf("step %d/2", i),
					})
				}
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
	addAskTools(server)
	if os.Getenv(AppsEnv) != "" {
		addAppTools(server, os.Getenv(mcpServerEnv))
	}
	if path := os.Getenv(ToolsFileEnv); path != "" {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintln(os.Stderr, "servertest server:", err)
			return 1
		}
		for _, name := range strings.Fields(string(data)) {
			server.AddTool(&mcpsdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
					return mcptest.TextResult(name), nil
				})
		}
	}
	if err := server.Run(context.Background(), &mcpsdk.IOTransport{Reader: os.Stdin, Writer: stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "servertest server:", err)
		return 1
	}
	return 0
}
