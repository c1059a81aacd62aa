package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// `mcp add` then `mcp remove`, and `mcp disable` then `mcp enable`, leave
// the config file byte for byte as it was. Before, the removal moved the
// closing bracket after an entry with a comment to the removed entry's
// indent, and enable left an "enabled": true that had not been there.
func TestAddRemoveDisableEnableRoundTrip(t *testing.T) {
	const before = `{
  "mcp": {
    "servers": [
      {"name": "mine", "command": "my-server"} // keep this one
    ]
  }
}
`
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	same := func(what string) {
		t.Helper()
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, string(after)); diff != "" {
			t.Errorf("after %s (-before +after):\n%s", what, diff)
		}
	}
	mustRun(t, "--config", path, "mcp", "add", "mem", "local", "npx -y @modelcontextprotocol/server-memory")
	mustRun(t, "--config", path, "mcp", "remove", "mem")
	same("add and remove")
	mustRun(t, "--config", path, "mcp", "disable", "mine")
	if s, _ := load(t, path).Server("mine"); s.Enabled {
		t.Fatal("mine is enabled after disable")
	}
	mustRun(t, "--config", path, "mcp", "enable", "mine")
	same("disable and enable")
}
