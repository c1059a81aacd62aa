package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/workspace"
)

// A server on demand whose tool changed since the user accepted it (its
// manifest holds the accepted definition) is started by `tools call`
// before the call is decided: the call asks, so with no terminal it is
// denied, naming the review, and the server never gets it.
func TestToolsCallOnDemandChangedDefinition(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.json")
	entry, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []map[string]any{
		{"name": "demo", "type": "local", "command": []string{demoServer}, "start": "onDemand"},
	}}})
	if err := os.WriteFile(cfgPath, entry, 0o600); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	args := []string{"--config", cfgPath, "tools", "--project", project}
	mustRun(t, append(args, "list")...) // the first run lists and pins the tools

	// The accepted definition, as the manifest holds it, says less than
	// the server now lists.
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := cfg.Server("demo")
	store := manifest.NewStore(filepath.Join(dir, workspace.ManifestDir), nil)
	if _, err := store.Update(t.Context(), config.ManifestKey(project, srv), func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil || !m.Pinned {
			t.Fatalf("no manifest after the first run: %v", corrupt)
		}
		for _, tl := range m.Tools {
			if tl.Name == "echo" {
				tl.Description = "Return the message."
			}
		}
		m.Pins["echo"].Def.Description = "Return the message."
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, append(args, "call", "mcp__demo__echo", "--args", `{"message":"ran"}`)...)
	if code == 0 || strings.Contains(out, "ran") || !strings.Contains(out+errOut, "definition changed") || !strings.Contains(out+errOut, "freecode mcp review demo") {
		t.Errorf("the first call after the change (exit %d):\n%s\n%s", code, out, errOut)
	}
}
