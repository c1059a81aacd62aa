package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Another client's config saved over FreeCode's is a problem the CLI
// shows where it is, with the import that converts it, and exits non-zero;
// that import, run as shown, turns the file into FreeCode's. Before,
// `mcp list` said "No MCP servers" and exited 0.
func TestOtherClientConfig(t *testing.T) {
	tests := []struct {
		name, src string
		at        string // line:col: key
		shape     string
		kind      string
		want      []string // the servers after the import
	}{
		{"VS Code", "vscode.json", `:6:3: servers: this is VS Code's mcp.json shape ("servers" at the top)`, "VS Code", "vscode", []string{"memory", "githubRemote"}},
		{"Claude", "claude-desktop.json", `:2:3: mcpServers: this is Claude's MCP config shape`, "Claude Desktop", "claude-desktop", []string{"filesystem", "memory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "import", tc.src))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := run(t, "--config", path, "mcp", "list")
			hint := "`freecode mcp import " + tc.kind + " " + path + "`"
			if code == 0 || out != "" || !strings.Contains(errOut, path+tc.at) || !strings.Contains(errOut, hint) {
				t.Fatalf("mcp list: exit %d\nstdout:\n%s\nstderr:\n%s\nwant %s and %s", code, out, errOut, path+tc.at, hint)
			}
			out = mustRun(t, "--config", path, "mcp", "import", tc.kind, path)
			if !strings.Contains(out, "from "+tc.shape+"'s shape to FreeCode's") {
				t.Errorf("import in place:\n%s", out)
			}
			var got []string
			for _, s := range load(t, path).MCP.Servers {
				got = append(got, s.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("servers after the import (-want +got):\n%s", diff)
			}
		})
	}

	// mcp.servers an object: at its key, with what it wants.
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte("{\n  \"mcp\": {\"servers\": {\"memory\": {\"command\": \"npx\"}}}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "--config", path, "mcp", "list")
	if code == 0 || !strings.Contains(errOut, path+`:2:11: mcp.servers: want an array of server entries, each with a "name"`) ||
		!strings.Contains(errOut, "`freecode mcp import vscode "+path+"`") {
		t.Errorf("mcp.servers an object: exit %d\n%s", code, errOut)
	}
}
