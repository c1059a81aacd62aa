package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// everythingServer is server-everything from npm over stdio, as the
// server "everything"; the test is skipped without $FREECODE_NPM.
func everythingServer(t *testing.T) config.Server {
	script := npmPeer(t, "@modelcontextprotocol/server-everything/dist/index.js")
	return config.Server{
		Name: "everything", Type: config.TypeLocal, Enabled: true,
		Command: []string{"node", script, "stdio"}, Timeout: hangGuard,
	}
}

// npmPeer returns the path of an npm package under $FREECODE_NPM, skipping
// the test when it is unset (failing under CI=true).
func npmPeer(t *testing.T, rel string) string {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set")
		}
		t.Skip("FREECODE_NPM is not set (the Makefile sets it)")
	}
	return filepath.Join(dir, rel)
}

// server-everything over stdio: it sends tools/list_changed right after
// initialized and a roots/list request, and ignores stdin EOF, so Close
// needs the SIGTERM step.
func TestInteropServerEverything(t *testing.T) {
	srv := everythingServer(t)
	rec := mcptest.NewRecorder()
	c := startTestConn(t, srv, rec)
	st := c.Status()
	if st.ToolCount < 13 || st.ServerInfo == nil || st.ProtocolVersion != "2025-11-25" {
		t.Errorf("status: %+v", st)
	}
	if got := callText(t, c, "echo", map[string]any{"message": "hi"}); got != "Echo: hi" {
		t.Errorf("echo = %q", got)
	}
	// Its list_changed right after initialized re-lists the same tools:
	// no second event.
	if got := rec.ToolChanges("everything"); len(got) != 1 {
		t.Errorf("tool events = %q, want only the connect", got)
	}
	pgid := st.PID
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := groupMembers(t, pgid); len(got) != 0 {
		t.Errorf("processes left after Close: %v", got)
	}
	if states := rec.States("everything"); slices.Contains(states, StateReconnecting.String()) {
		t.Errorf("states %v: a reconnect happened", states)
	}
}
