// Package bench holds the sidecar's end-to-end benchmarks: the built
// freecode-serve driven over stdio by a Go frontend, each figure measured
// against a peer in the same run (`make bench`). The MCP servers they run
// are this test binary re-executed (mcpServerEnv), the repo's demo server,
// or server-everything from npm.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/sandbox"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// mcpServerEnv makes the test binary an MCP server over stdio: "echo"
// (a read-only echo tool, and "sleep", which answers after its "ms"
// milliseconds), "tools100" (100 read-only tools), "catalog" (one of
// LiveMCPBench's servers, see serveCatalog) or "hang" (reads its stdin and
// never answers, as a server stuck at start does). With
// mcptest.RelayEnv it is a relay instead.
const mcpServerEnv = "FREECODE_BENCH_MCP"

// binDir holds freecode-serve and the demo server, built by the first
// benchmark that needs them (see binaries): `go test` without -bench
// builds nothing.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// binaries returns the paths of freecode-serve and the demo server.
func binaries(b *testing.B) (sidecar, demo string) {
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "freecode-bench"); binErr != nil {
			return
		}
		args := []string{"build", "-o", binDir + string(filepath.Separator)}
		if hoptrace.Enabled {
			// The benchmark built with -tags hoptrace: its sidecar times
			// the hop's stages too, and prints them as it exits.
			args = append(args, "-tags", "hoptrace")
		}
		args = append(args, "../cmd/freecode-serve", "../examples/demo-server")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			binErr = fmt.Errorf("building freecode-serve and demo-server: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		b.Fatal(binErr)
	}
	return filepath.Join(binDir, "freecode-serve"), filepath.Join(binDir, "demo-server")
}

func TestMain(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunRelayIfAsked()
	if mode := os.Getenv(mcpServerEnv); mode != "" {
		os.Exit(serveMCP(mode))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// serveMCP is the test binary as an MCP server.
func serveMCP(mode string) int {
	switch mode {
	case "hang":
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "catalog":
		return serveCatalog()
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "bench-" + mode, Version: "1"}, nil)
	ro := &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"text":  map[string]any{"type": "string", "description": "what to echo"},
		"count": map[string]any{"type": "integer", "minimum": 1, "description": "how many times"},
	}}
	echo := func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	switch mode {
	case "echo":
		s.AddTool(&mcpsdk.Tool{Name: "echo", Description: "Echo the arguments", InputSchema: schema, Annotations: ro}, echo)
		sleepSchema := map[string]any{"type": "object", "properties": map[string]any{"ms": map[string]any{"type": "integer", "minimum": 0}}}
		s.AddTool(&mcpsdk.Tool{Name: "sleep", Description: "Answer after ms milliseconds", InputSchema: sleepSchema, Annotations: ro},
			func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				var args struct{ MS int }
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
				select {
				case <-time.After(time.Duration(args.MS) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "slept"}}}, nil
			})
	case "tools100":
		for i := range 100 {
			s.AddTool(&mcpsdk.Tool{
				Name:        fmt.Sprintf("tool_%03d", i),
				Description: fmt.Sprintf("Tool number %d of a server with many: echoes its arguments, as a stand-in for a real tool's description of about this length.", i),
				InputSchema: schema, Annotations: ro,
			}, echo)
		}
	default:
		fmt.Fprintf(os.Stderr, "bench: unknown %s %q\n", mcpServerEnv, mode)
		return 2
	}
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "bench server:", err)
		return 1
	}
	return 0
}
