//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// freecode mcp tools says what happened to a server that does not come
// up as the sidecar's status does: first, in the user's terms.
func TestMCPToolsFailureWording(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	// A Claude Desktop-shaped entry whose server exits at once, as a server
	// that wants a token does; and a command that is not there.
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [
		{"name": "gh", "type": "stdio", "command": "sh", "args": ["-c", "echo starting >&2; echo 'error: GITHUB_TOKEN is not set' >&2; exit 3"]},
		{"name": "nope", "command": "freecode-no-such-command-22"}
	]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ server, want string }{
		{"gh", `✗ Server "gh" failed: exited with code 3: error: GITHUB_TOKEN is not set`},
		{"nope", "✗ Server \"nope\" failed: `freecode-no-such-command-22` is not on the PATH the server gets ("},
	}
	for _, tc := range tests {
		_, errOut, code := run(t, "--config", path, "mcp", "tools", tc.server)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != 1 || !strings.HasPrefix(first, tc.want) {
			t.Errorf("mcp tools %s: exit %d, first line %q, want it to start %q\n%s", tc.server, code, first, tc.want, errOut)
		}
		if strings.Contains(errOut, "broken pipe") || strings.Contains(errOut, "calling \"initialize\"") {
			t.Errorf("mcp tools %s leads with internals:\n%s", tc.server, errOut)
		}
	}
}
