package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An edit and its undoing leave the file as it was, byte for byte: add
// then remove, disable then enable. Before, the removal re-indented the
// closing bracket after an entry with a comment (moving "]" under the
// removed entry's indent), and enable wrote "enabled": true where there
// had been no key.
func TestEditRoundTrips(t *testing.T) {
	files := map[string]string{
		"the user's file": userFile,
		"a comment after the last entry": `{
  "mcp": {
    "servers": [
      {"name": "a", "command": "x"} // mine
    ]
  }
}
`,
		"a comment after the last entry, trailing comma": `{
  "mcp": {
    "servers": [
      {"name": "a", "command": "x"}, // mine
    ],
  },
}
`,
		"tabs and a comment after the last member": "{\n\t\"mcp\": {\n\t\t\"servers\": [\n\t\t\t{\n\t\t\t\t\"name\": \"a\",\n\t\t\t\t\"command\": \"x\" // the program\n\t\t\t}\n\t\t]\n\t}\n}\n",
		"on one line":     `{"mcp": {"servers": [{"name": "a", "command": "x"}]}}` + "\n",
		"an entry a line": "{\n  \"mcp\": {\n    \"servers\": [\n      {\"name\": \"a\", \"command\": \"x\"},\n      {\"name\": \"b\", \"command\": \"y\"}\n    ]\n  }\n}\n",
	}
	for name, data := range files {
		t.Run(name+": add, remove", func(t *testing.T) {
			path := writeFile(t, data, 0o600)
			if err := AddServer(path, Server{Name: "mem", Type: TypeLocal, Enabled: true, Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}}); err != nil {
				t.Fatal(err)
			}
			if err := RemoveServer(path, "mem"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(data, readFile(t, path)); diff != "" {
				t.Errorf("after add and remove (-before +after):\n%s", diff)
			}
		})
		t.Run(name+": disable, enable", func(t *testing.T) {
			path := writeFile(t, data, 0o600)
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range cfg.MCP.Servers {
				if !s.Enabled {
					continue
				}
				if err := SetEnabled(path, s.Name, false); err != nil {
					t.Fatal(err)
				}
				if s, _ := load(t, path).Server(s.Name); s.Enabled {
					t.Fatalf("%s enabled after SetEnabled false", s.Name)
				}
				if err := SetEnabled(path, s.Name, true); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(data, readFile(t, path)); diff != "" {
				t.Errorf("after disable and enable (-before +after):\n%s", diff)
			}
		})
	}
}

func load(t *testing.T, path string) *Config {
	t.Helper()
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
