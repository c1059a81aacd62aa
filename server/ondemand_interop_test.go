package server_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/workspace"
)

// server-everything and server-filesystem, started on demand: the sidecar
// registers them from their manifests (an earlier run's) without starting
// either, and a call through the sidecar starts each one.
func TestInteropOnDemand(t *testing.T) {
	npm := servertest.NPMDir(t)
	pkg := func(name string) string { return filepath.Join(npm, "@modelcontextprotocol", name, "dist", "index.js") }
	servertest.Run(t, fmt.Sprintf(`
-- config.json --
{"mcp": {"servers": [
  {"name": "everything", "type": "local", "command": ["node", %q, "stdio"], "timeout": 30000, "start": "onDemand"},
  {"name": "fs", "type": "local", "command": ["node", %q, "."], "cwd": ".", "timeout": 30000, "start": "onDemand"}
]}}
-- project/hello.txt --
hello from the project
`, pkg("server-everything"), pkg("server-filesystem")), func(t *testing.T, env *servertest.Env) {
		// An earlier run learned their tools and wrote their manifests.
		w, err := workspace.New(t.Context(), &workspace.Options{ConfigPath: env.Sandbox.ConfigPath, Root: env.Sandbox.Project, ResultsDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		settled := func() bool {
			for _, st := range w.Statuses() {
				if st.State != mcp.StateIdle {
					return false
				}
			}
			return true
		}
		sub := w.Subscribe(nil)
		for !settled() {
			<-sub.Events()
		}
		sub.Close()
		w.Close()

		ed := env.Editor
		if _, err := ed.Initialize(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"everything", "fs"} {
			// Idle with its tools counted: registered from its manifest (a
			// resync may show it idle a moment before they are).
			n := ed.Await("status "+name, name+" idle with its tools", func(n frontend.Notification) bool {
				var st protocol.ServerStatus
				return n.Method == protocol.NotifyServersStatus && json.Unmarshal(n.Params, &st) == nil &&
					st.Name == name && st.State == protocol.StateIdle && st.ToolCount > 0
			})
			var st protocol.ServerStatus
			if err := n.Decode(&st); err != nil || st.PID != 0 {
				t.Errorf("%s before any call: %+v, %v", name, st, err)
			}
		}
		// A status read at connect time may come a moment before the
		// tools are registered; their registration is a tools change.
		for {
			tools, err := ed.Tools(t.Context(), "everything")
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) > 0 {
				break
			}
			ed.AwaitToolsChanged(nil)
		}
		if kids := proctest.Children(t); len(kids) != 0 {
			t.Fatalf("processes running before any call: %v", kids)
		}

		if r := execute(t, ed, call("e1", "mcp__everything__echo", `{"message":"started on demand"}`)); r.IsError || !strings.Contains(r.Text(), "started on demand") {
			t.Fatalf("everything's echo: %+v", r)
		}
		if st := ed.AwaitStatus("everything", protocol.StateConnected); st.PID == 0 {
			t.Errorf("everything connected without a pid: %+v", st)
		}
		if kids := proctest.Children(t); len(kids) != 1 {
			t.Errorf("processes after a call to everything: %v, want 1", kids)
		}
		// The sidecar gives its servers the project as their root, which
		// server-filesystem serves in place of its arguments.
		path := filepath.Join(env.Sandbox.Project, "hello.txt")
		if r := execute(t, ed, call("f1", "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, path))); r.IsError || !strings.Contains(r.Text(), "hello from the project") {
			t.Fatalf("fs's read_text_file: %+v", r)
		}
		ed.AwaitStatus("fs", protocol.StateConnected)
		if kids := proctest.Children(t); len(kids) != 2 {
			t.Errorf("processes after a call to each: %v, want 2", kids)
		}
	}, servertest.Modes(servertest.Stdio), servertest.WithEditor(servertest.EditorOptions{NoInitialize: true}))
}
