package config

import (
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
