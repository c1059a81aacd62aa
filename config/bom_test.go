package config

import (
	"errors"
	"strings"
	"testing"
)

// TestBOM: a config file saved with a UTF-8 byte order mark (Notepad and
// Visual Studio write one) loads, its problems are placed as an editor
// counts (the mark is no column), and an edit keeps the mark.
func TestBOM(t *testing.T) {
	path := writeFile(t, bom+userFile, 0o600)
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("Load of a file with a byte order mark: %v", err)
	}
	if len(cfg.MCP.Servers) != 2 {
		t.Errorf("servers %+v, want the file's two", cfg.MCP.Servers)
	}

	_, err = Parse("c.json", []byte(bom+`{"mcp": {"pollInterval": "5s"}}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Line != 1 || ve.Problems[0].Col != 26 {
		t.Errorf("Parse = %v, want the problem at 1:26", err)
	}

	if err := AddServer(path, Server{Name: "new", Type: TypeLocal, Enabled: true, Command: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if !strings.HasPrefix(got, bom+"// FreeCode settings\n{") || strings.Count(got, bom) != 1 {
		t.Errorf("after an edit the file begins %q, want the byte order mark kept, once", got[:min(len(got), 30)])
	}
	if cfg, err := Load(path); err != nil || len(cfg.MCP.Servers) != 3 {
		t.Errorf("after the edit: %v, %+v", err, cfg)
	}
}
