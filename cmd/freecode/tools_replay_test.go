package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
)

// TestToolsCallLostAnswer: `freecode tools call` against a server whose
// answer to the first call of each tool is lost (its response stream
// breaks) sends a read-only or idempotent call once more, and says of a
// write "outcome unknown, not retried", in its text and in --json's
// outcomeUnknown, having sent it once.
func TestToolsCallLostAnswer(t *testing.T) {
	srv := mcptest.NewLossyServer(t, &mcptest.LossyOptions{Stateless: true})
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "l", "remote", srv.URL, "--transport", "http")
	call := func(extra ...string) (string, string, int) {
		return run(t, append([]string{"--config", path, "tools", "--project", dir, "call"}, extra...)...)
	}

	out, errOut, code := call("mcp__l__write", "--yes")
	if code != 1 || !strings.Contains(out+errOut, "outcome unknown, not retried") || srv.Calls("write") != 1 {
		t.Errorf("write: exit %d, the server saw %d calls\nstdout: %s\nstderr: %s\nwant exit 1, 1 call, and \"outcome unknown, not retried\"", code, srv.Calls("write"), out, errOut)
	}
	out, errOut, code = call("mcp__l__put", "--yes")
	if code != 0 || !strings.Contains(out, "put ran, call 2") || srv.Calls("put") != 2 {
		t.Errorf("put: exit %d, the server saw %d calls\nstdout: %s\nstderr: %s\nwant it retried once and answered", code, srv.Calls("put"), out, errOut)
	}

	srv2 := mcptest.NewLossyServer(t, &mcptest.LossyOptions{Stateless: true})
	path2 := filepath.Join(t.TempDir(), "config.json")
	mustRun(t, "--config", path2, "mcp", "add", "l", "remote", srv2.URL, "--transport", "http")
	out, errOut, _ = run(t, "--config", path2, "tools", "--project", dir, "call", "mcp__l__write", "--yes", "--json")
	var r protocol.ToolResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if !r.OutcomeUnknown || !r.IsError || !strings.Contains(r.Text(), "outcome unknown, not retried") {
		t.Errorf("--json: %+v; want outcomeUnknown and the words", r)
	}
}
