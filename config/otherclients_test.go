package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Other clients' whole files saved as FreeCode's config: VS Code's
// mcp.json, Claude's, and "mcp.servers" an object of servers by name.
// Each is a problem at its key, naming the import that converts it, so the
// last good config stays in force; before, the first two loaded as a
// config with no servers, and the third said "want an array" at the
// value with no word of import.
var otherClientFiles = []struct {
	name, data string
	key        string
	line, col  int
	kind       string // the kind of import the hint names
	says       string
}{
	{
		name: "VS Code's mcp.json",
		data: `{
  "servers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
  },
  "inputs": []
}
`,
		key: "servers", line: 2, col: 3, kind: ImportVSCode,
		says: `this is VS Code's mcp.json shape ("servers" at the top), which FreeCode does not read: its servers go in "mcp": {"servers": [...]}, an array of entries with a "name"`,
	},
	{
		name: "Claude's",
		data: `// pasted from claude_desktop_config.json
{"mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}
`,
		key: "mcpServers", line: 2, col: 2, kind: ImportClaudeDesktop,
		says: `this is Claude's MCP config shape ("mcpServers" at the top, as Claude Desktop, Claude Code and Cursor write it), which FreeCode does not read`,
	},
	{
		name: "mcp.servers an object",
		data: `{
  "model": "claude-sonnet",
  "mcp": {
    "trustedProjects": ["/src/app"],
      "servers": {
      "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
    }
  }
}
`,
		key: "mcp.servers", line: 5, col: 7, kind: ImportVSCode,
		says: `want an array of server entries, each with a "name": [{"name": "memory", "command": …}], not an object of servers by name`,
	},
}

func TestParseOtherClientFiles(t *testing.T) {
	const path = "/home/me/.freecode/config.json"
	for _, tc := range otherClientFiles {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(path, []byte(tc.data))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("Parse = %v, want one problem", err)
			}
			p := ve.Problems[0]
			if p.Key != tc.key || p.Line != tc.line || p.Col != tc.col {
				t.Errorf("problem at %s %d:%d, want %s %d:%d", p.Key, p.Line, p.Col, tc.key, tc.line, tc.col)
			}
			hint := "`freecode mcp import " + tc.kind + " " + path + "`"
			if !strings.HasPrefix(p.Msg, tc.says) || !strings.Contains(p.Msg, hint) || !strings.Contains(p.Msg, "Import MCP Servers") {
				t.Errorf("message:\n%s\nwant it to start %q and hold %s", p.Msg, tc.says, hint)
			}
			if want := fmt.Sprintf("%s:%d:%d: ", path, tc.line, tc.col) + tc.key + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q, want it to start %q", err, want)
			}
		})
	}
}

// The keys of someone else that only share a name, and a project's
// settings, are not read as another client's file; a path a shell would
// split is quoted in the hint.
func TestParseOtherClientFilesNot(t *testing.T) {
	for _, data := range []string{
		`{"servers": "eu-west", "mcpServers": ["x"], "mcp": {"servers": []}}`,
		`{"servers": null}`,
	} {
		if _, err := Parse("/c.json", []byte(data)); err != nil {
			t.Errorf("Parse(%s) = %v, want no problem", data, err)
		}
	}
	dir := t.TempDir()
	writeProject(t, dir, `{"servers": {"a": {"command": "x"}}, "mcp": {"servers": {"a": {"command": "x"}}}}`)
	_, err := LoadProject(dir)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Key != "mcp.servers" || strings.Contains(ve.Problems[0].Msg, "import") {
		t.Errorf("a project's mcp.servers object: %v; want one problem at mcp.servers, with no import (which writes the user's file)", err)
	}
	_, err = Parse("/my files/it's.json", []byte(`{"servers": {}}`))
	if err == nil || !strings.Contains(err.Error(), `freecode mcp import vscode '/my files/it'\''s.json'`) {
		t.Errorf("error %v, want the path quoted", err)
	}
}

// ImportFile turns each of those files into FreeCode's, in place: the
// servers in mcp.servers, the other client's map gone, every other byte as
// it was; the file then loads. A dry run writes nothing, and a server
// whose name is taken is skipped.
func TestImportFile(t *testing.T) {
	want := map[string]string{
		"VS Code's mcp.json": `{
  "inputs": [],
  "mcp": {
    "servers": [
      {
        "name": "memory",
        "type": "local",
        "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]
      }
    ]
  }
}
`,
		"Claude's": `// pasted from claude_desktop_config.json
{
    "mcp": {
        "servers": [
            {
                "name": "memory",
                "type": "local",
                "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]
            }
        ]
    }
}
`,
		"mcp.servers an object": `{
  "model": "claude-sonnet",
  "mcp": {
    "trustedProjects": ["/src/app"],
      "servers": [
        {
          "name": "memory",
          "type": "local",
          "command": ["npx", "-y", "@modelcontextprotocol/server-memory"]
        }
      ]
  }
}
`,
	}
	for _, tc := range otherClientFiles {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.data, 0o600)
			res, err := ImportFile(path, tc.kind, true)
			if err != nil || len(res.Added) != 1 || res.Added[0].Name != "memory" {
				t.Fatalf("dry run: %+v, %v", res, err)
			}
			if got := readFile(t, path); got != tc.data {
				t.Fatalf("the dry run wrote:\n%s", got)
			}
			if res, err = ImportFile(path, tc.kind, false); err != nil || len(res.Added) != 1 {
				t.Fatalf("ImportFile: %+v, %v", res, err)
			}
			got := readFile(t, path)
			if diff := cmp.Diff(want[tc.name], got); diff != "" {
				t.Errorf("the file (-want +got):\n%s", diff)
			}
			cfg, err := Load(path)
			if err != nil || len(cfg.MCP.Servers) != 1 || cfg.MCP.Servers[0].Name != "memory" {
				t.Errorf("Load after the import: %v, %v", cfg, err)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"mcp": {"servers": [{"name": "memory", "command": "mine"}]}, "servers": {"memory": {"command": "theirs"}, "fs": {"command": "fs"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ImportFile(path, ImportVSCode, false)
	if err != nil || len(res.Added) != 1 || res.Added[0].Name != "fs" || len(res.Skipped) != 1 || res.Skipped[0].Name != "memory" {
		t.Fatalf("ImportFile over a taken name: %+v, %v", res, err)
	}
	cfg, err := Load(path)
	if err != nil || len(cfg.MCP.Servers) != 2 || cfg.MCP.Servers[0].Command[0] != "mine" {
		t.Errorf("Load: %+v, %v", cfg, err)
	}
}
