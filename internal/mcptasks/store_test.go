package mcptasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// A task file the server did not write stops it from starting, saying
// which, and is left as it is.
func TestBadTaskFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "abc.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(mcpsdk.NewServer(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("New on a bad task file: %v", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != "{not json" {
		t.Errorf("the bad file became %q", b)
	}
}

// A task kept by a server whose tool is gone fails on Resume, saying why.
func TestResumeWithoutTool(t *testing.T) {
	dir := t.TempDir()
	rec := `{"id":"t1","tool":"gone","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","nextKey":0,"runs":1}`
	if err := os.WriteFile(filepath.Join(dir, "t1.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := New(mcpsdk.NewServer(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil), Options{Dir: dir, TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Resume()
	d, ok := e.Get("t1")
	if !ok || d.Status != mcpwire.TaskFailed || d.Error == nil || !strings.Contains(d.Error.Message, `no longer has tool "gone"`) {
		t.Errorf("resumed task of a gone tool: %+v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "t1.json")); !strings.Contains(string(b), `"status":"failed"`) {
		t.Errorf("kept file: %s", b)
	}
}
