package mcp

import (
	"path/filepath"
	"testing"

	"github.com/freecode/freecode/config"
)

// server-everything (TypeScript SDK, 2025-11-25) answers server/discover
// with "Method not found" at once: the connect falls back on the same
// process, at 2025-11-25, and remembers why.
func TestInteropNegotiateServerEverything(t *testing.T) {
	script := npmPeer(t, "@modelcontextprotocol/server-everything/dist/index.js")
	srv := config.Server{
		Name: "everything", Type: config.TypeLocal, Enabled: true,
		Command: []string{"node", script, "stdio"}, Timeout: hangGuard,
	}
	memo := NewVersionMemo(filepath.Join(t.TempDir(), "protocol-versions.json"))
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true, Versions: memo})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.Status().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25", got)
	}
	entries, err := readMemo(memo.path)
	if err != nil {
		t.Fatal(err)
	}
	if e := entries[memoKey(srv)]; e.Version != "2025-11-25" || e.Why != "server/discover: Method not found" {
		t.Errorf("remembered %+v", e)
	}
}
