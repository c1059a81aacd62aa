package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An installed entry's registry block survives AddServer and Load, and
// mcp.registry.url is read.
func TestRegistryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	s := local("everything", "npx", "-y", "@modelcontextprotocol/server-everything@2026.1.26")
	s.Registry = &Registry{Name: "io.github.modelcontextprotocol/everything", Version: "2026.1.26", URL: "http://127.0.0.1:9/", Digest: "sha256:ab"}
	if err := AddServer(path, s); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{s}, cfg.MCP.Servers); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	cfg, err = parse("config.json", []byte(`{"mcp": {"registry": {"url": "http://localhost:8080"}}}`), ScopeUser, "/")
	if err != nil || cfg.MCP.RegistryURL != "http://localhost:8080" {
		t.Errorf("mcp.registry.url = %q, %v", cfg.MCP.RegistryURL, err)
	}
}

func TestRegistryProblems(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"latest", `{"name": "s", "command": "x", "registry": {"name": "a/b", "version": "latest", "url": "https://r.example"}}`,
			`mcp.servers[0].registry.version (server "s"): want a concrete version, not "latest"`},
		{"no name", `{"name": "s", "command": "x", "registry": {"version": "1", "url": "https://r.example"}}`,
			`mcp.servers[0].registry.name`},
		{"plain http", `{"name": "s", "command": "x", "registry": {"name": "a/b", "version": "1", "url": "http://r.example"}}`,
			`mcp.servers[0].registry.url`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse("config.json", []byte(`{"mcp": {"servers": [`+tc.file+`]}}`), ScopeUser, "/")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse = %v, want %q", err, tc.want)
			}
		})
	}
	_, err := parse("config.json", []byte(`{"mcp": {"registry": {"url": "http://r.example"}}}`), ScopeUser, "/")
	if err == nil || !strings.Contains(err.Error(), "mcp.registry.url") {
		t.Errorf("mcp.registry.url over plain http to another host: %v", err)
	}
	s := local("s", "x")
	s.Registry = &Registry{Name: "a/b", Version: "latest", URL: "https://r.example"}
	if err := AddServer(filepath.Join(t.TempDir(), "c.json"), s); err == nil || !strings.Contains(err.Error(), "registry.version") {
		t.Errorf("AddServer with version latest = %v", err)
	}
}

// The registry identity is part of the approval hash, and an entry
// without it hashes as before the key existed (TestEntryHashStable).
func TestEntryHashCoversRegistry(t *testing.T) {
	s := local("fs", "npx", "-y", "pkg")
	plain := EntryHash(s)
	s.Registry = &Registry{Name: "a/b", Version: "1.0.0", URL: "https://r.example"}
	one := EntryHash(s)
	s.Registry.Version = "1.0.1"
	two := EntryHash(s)
	s.Registry.Digest = "sha256:00"
	three := EntryHash(s)
	if plain == one || one == two || two == three {
		t.Errorf("EntryHash does not follow the registry block: %s %s %s %s", plain, one, two, three)
	}
}

// UpdateInstalled rewrites what an install decides of an entry and leaves
// the user's own keys, comments and the other entries as they are.
func TestUpdateInstalled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	const before = `{
  // mine
  "mcp": {
    "servers": [
      {
        "name": "weather",
        "type": "local",
        // pinned by freecode mcp install
        "command": ["uvx", "mcp-weather==1.3.0", "eu"],
        "env": {"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "OLD": "x"},
        "timeout": 5000, // slow to start
        "registry": {"name": "io.example/weather", "version": "1.3.0", "url": "https://registry.example.com"}
      },
      {"name": "other", "command": ["other"]}
    ]
  }
}
`
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.MCP.Servers[0]
	s.Command = []string{"uvx", "mcp-weather==1.4.0", "eu"}
	s.Env = map[string]string{"WEATHER_API_KEY": "${secret:WEATHER_API_KEY}", "NEW": "y"}
	s.Registry = &Registry{Name: "io.example/weather", Version: "1.4.0", URL: "https://registry.example.com", Digest: "sha256:ab"}
	if err := UpdateInstalled(path, s); err != nil {
		t.Fatal(err)
	}
	after, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Server{s, cfg.MCP.Servers[1]}, after.MCP.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	raw := readFile(t, path)
	for _, want := range []string{"// mine", "// slow to start", `"timeout": 5000`, `{"name": "other", "command": ["other"]}`} {
		if !strings.Contains(raw, want) {
			t.Errorf("the update lost %q:\n%s", want, raw)
		}
	}
	if strings.Contains(raw, "OLD") || strings.Contains(raw, "1.3.0") {
		t.Errorf("the old version's values stayed:\n%s", raw)
	}
	if ManifestKey("", after.MCP.Servers[0]) != ManifestKey("", cfg.MCP.Servers[0]) {
		t.Error("the update changed the server's manifest key: its pins would be forgotten")
	}

	s.Registry = nil
	if err := UpdateInstalled(path, s); err == nil || !strings.Contains(err.Error(), "registry") {
		t.Errorf("an update without a registry block: %v", err)
	}
	s.Name, s.Registry = "nothing", after.MCP.Servers[0].Registry
	if err := UpdateInstalled(path, s); err == nil {
		t.Error("an update of no entry succeeded")
	}
}
