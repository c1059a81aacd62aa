package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/server/servertest"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) { servertest.Main(m) }

// npmWith returns $FREECODE_NPM if it holds pkg, and skips the test if
// not (failing it under CI=true, where it must run).
func npmWith(t *testing.T, pkg string) string {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	skip := t.Skip
	if os.Getenv("CI") == "true" {
		skip = t.Fatal
	}
	if dir == "" {
		skip("FREECODE_NPM is not set: run through `make test`, or set it to interop/node_modules after `make npm`")
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); errors.Is(err, fs.ErrNotExist) {
		skip(fmt.Sprintf("%s is not installed in %s (FREECODE_NPM): run `make npm`, which installs interop/package.json", pkg, dir))
	}
	return dir
}

// nodeSaw is what interop/sidecar-client.cjs prints.
type nodeSaw struct {
	ServerInfo      string
	ProtocolVersion int
	Servers         []struct {
		Name, State string
		ToolCount   int
	}
	Tools       []string
	ProjectRoot string
	Prompts     []struct {
		CallID, Tool, Server string
		Arguments            map[string]any
		ReadOnly             bool
		ProjectTrusted       bool
	}
	Deleted struct {
		Decision string
		IsError  bool
		Text     string
	}
	Progress     struct{ CallID, Message string }
	Cancelled    *struct{ Code int }
	ToolsChanged bool
	Exit         struct {
		Code   *int
		Signal *string
	}
}

// The built freecode-serve, driven over stdio by vscode-jsonrpc, the
// JSON-RPC library the VS Code extension uses: initialize with workspace
// folders, initialized, the status notifications, freecode/servers,
// freecode/tools, freecode/project, a destructive call whose permission
// request node answers, a call cancelled with a CancellationToken once
// its progress came, shutdown and exit.
func TestInteropVSCodeJSONRPC(t *testing.T) {
	npm := npmWith(t, "vscode-jsonrpc")
	dir := t.TempDir()
	cfg, project, home := filepath.Join(dir, "config.json"), filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	demo := config.Server{Name: "demo", Type: config.TypeLocal, Enabled: true, Command: []string{servertest.BinaryPath(t, "demo-server")}}
	if err := config.AddServer(cfg, demo.WithDefaults()); err != nil {
		t.Fatal(err)
	}
	// A hang guard only; the script has its own.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("..", "..", "interop", "sidecar-client.cjs"), servertest.BinaryPath(t, "freecode-serve"), cfg, project)
	cmd.Env = append(os.Environ(), "FREECODE_NPM="+npm, "HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sidecar-client.cjs: %v\n%s", err, stderr.String())
	}
	var got nodeSaw
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("sidecar-client.cjs printed %q: %v", out, err)
	}

	var want nodeSaw
	zero := 0
	if err := json.Unmarshal([]byte(`{
		"serverInfo": "freecode-serve", "protocolVersion": 1,
		"servers": [{"name": "demo", "state": "connected", "toolCount": 7}],
		"tools": ["mcp__demo__build", "mcp__demo__create_issue", "mcp__demo__delete_file", "mcp__demo__echo",
			"mcp__demo__list_files", "mcp__demo__read_file", "mcp__demo__search"],
		"prompts": [
			{"callId": "n1", "tool": "mcp__demo__delete_file", "server": "demo", "arguments": {"path": "docs/notes.md"}},
			{"callId": "n2", "tool": "mcp__demo__build", "server": "demo", "arguments": {"steps": 60, "seconds": 60}}
		],
		"deleted": {"decision": "asked", "text": "deleted docs/notes.md"},
		"progress": {"callId": "n2", "message": "build started"},
		"cancelled": {"code": -32800},
		"toolsChanged": true
	}`), &want); err != nil {
		t.Fatal(err)
	}
	want.ProjectRoot = project
	want.Exit.Code = &zero
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what node saw (-want +got):\n%s\nnode's stderr:\n%s", diff, stderr.String())
	}
}
