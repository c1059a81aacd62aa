package mcpserve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// hangGuard only stops a broken test from hanging; no test relies on it.
const hangGuard = 60 * time.Second

// backend returns a config entry that runs the test server as name.
func backend(t testing.TB, name string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"name": name, "type": "local", "command": []string{exe}, "env": map[string]string{testServerEnv: "1"}}
}

// writeJSON writes v to path as JSON, making the directory.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// env is one test's files, workspace and MCP server.
type env struct {
	dir     string // holds config.json and the user's settings.json
	cfgPath string
	root    string // the project
	w       *workspace.Workspace
	s       *Server
	// stateDir is the servers' Options.StateDir: "" keeps their
	// permission questions in memory.
	stateDir string
}

// newEnv writes a config whose mcp section holds servers and extra keys,
// and the user's deny, ask and allow rules.
func newEnv(t testing.TB, servers []map[string]any, extra map[string]any) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{dir: dir, cfgPath: filepath.Join(dir, "config.json"), root: t.TempDir()}
	m := map[string]any{"servers": servers}
	for k, v := range extra {
		m[k] = v
	}
	writeJSON(t, e.cfgPath, map[string]any{"mcp": m})
	return e
}

// rules writes the user's rule file.
func (e *env) rules(t testing.TB, rules map[string][]string) {
	t.Helper()
	writeJSON(t, filepath.Join(e.dir, "settings.json"), map[string]any{"permissions": rules})
}

// open starts the workspace, waits for its servers and starts the MCP
// server over it; the test's cleanup closes both.
func (e *env) open(t testing.TB, builtins ...*orchestrator.Tool) *Server {
	t.Helper()
	w, err := workspace.New(t.Context(), &workspace.Options{ConfigPath: e.cfgPath, Root: e.root, ResultsDir: t.TempDir(), Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := New(w, &Options{StateDir: e.stateDir})
	t.Cleanup(func() { s.Close() })
	e.w, e.s = w, s
	return s
}

// connect connects a client with opts to the server over a pair of pipes,
// the server on StdioTransport as `freecode mcp serve --stdio` runs it.
// The client offers the go-sdk's newest revision (2026-07-28).
func (e *env) connect(t testing.TB, opts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	return e.connectAt(t, opts, "")
}

// connectAt is connect with a client that offers the revision version
// ("" for the go-sdk's newest).
func (e *env) connectAt(t testing.TB, opts *mcpsdk.ClientOptions, version string) *mcpsdk.ClientSession {
	t.Helper()
	ct, st := stdioPipes(t)
	if _, err := e.s.Connect(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), ct, &mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// stdioPipes returns the two ends of a stdio session over OS pipes: the
// client's (the go-sdk's own newline transport) and the server's.
func stdioPipes(t testing.TB) (client *mcpsdk.IOTransport, server *StdioTransport) {
	t.Helper()
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The server closes its input when its session ends, never its
	// output (standard output is not its to close); the client closes
	// both of its ends.
	t.Cleanup(func() { fromServer.Close() })
	return &mcpsdk.IOTransport{Reader: toClient, Writer: fromClient}, &StdioTransport{In: toServer, Out: fromServer}
}

// callTool calls name with the JSON arguments args; a protocol error fails
// the test.
func callTool(t testing.TB, cs *mcpsdk.ClientSession, name, args string) *mcpsdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// resultText joins a result's text contents.
func resultText(r *mcpsdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// listNames returns the names the client is listed.
func listNames(t testing.TB, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// approveProject records the user's approval of the project's server name
// in the config file, as `freecode mcp approve` does.
func (e *env) approveProject(t testing.TB, name string) {
	t.Helper()
	servers, err := config.LoadProject(e.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if s.Name == name {
			if err := config.Approve(e.cfgPath, config.ApprovalKey(e.root, s)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no project server %q", name)
}

// askRevisions are the two ways a client is asked for permission: an
// input_required result (2026-07-28) and an elicitation request while the
// call runs (2025-11-25); the go-sdk's client answers both with its
// ElicitationHandler.
var askRevisions = []string{"2026-07-28", "2025-11-25"}

// waitFor receives from ch within the hang guard.
func waitFor[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("no %s within %v", what, hangGuard)
	}
	var zero T
	return zero
}
