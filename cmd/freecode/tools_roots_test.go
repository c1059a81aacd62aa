package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `freecode tools` shows the servers the current directory as their MCP
// root: server-everything, which registers get-roots-list only for a
// client that declares roots, lists it, and the call returns the
// directory the command ran in.
func TestInteropToolsRoots(t *testing.T) {
	npm := npmDir(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "everything", "local", "--timeout", "30s", "--",
		"node", filepath.Join(npm, "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio")
	project := filepath.Join(dir, "my project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, "--config", path, "tools", "list", "--server", "everything")
	if !strings.Contains(out, "mcp__everything__get-roots-list") {
		t.Fatalf("tools list has no get-roots-list: the servers were told of no roots capability\n%s", out)
	}

	out = mustRun(t, "--config", path, "tools", "call", "mcp__everything__get-roots-list")
	want := "URI: " + (&url.URL{Scheme: "file", Path: wd}).String()
	if !strings.Contains(out, "(1 total)") || !strings.Contains(out, want) {
		t.Errorf("get-roots-list does not return the current directory alone (want %q):\n%s", want, out)
	}
}
