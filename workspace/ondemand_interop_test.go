package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/mcp"
)

// npmDir returns $FREECODE_NPM (interop/node_modules, set by the Makefile).
// Without it the interop tests skip, except under CI where they must run.
func npmDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("FREECODE_NPM")
	if dir == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FREECODE_NPM is not set (CI=true): run `make npm` and export FREECODE_NPM")
		}
		t.Skip("FREECODE_NPM not set; run through `make test` for the npm interop tests")
	}
	return dir
}

// npmServer returns the entry of the npm server pkg run by node, started
// on demand.
func npmServer(npm, name, pkg string, args ...string) map[string]any {
	argv := append([]string{"node", filepath.Join(npm, "@modelcontextprotocol", pkg, "dist", "index.js")}, args...)
	return map[string]any{"name": name, "type": "local", "command": argv, "timeout": 30000, "start": "onDemand"}
}

// server-everything and server-filesystem, started on demand: the first
// workspace learns their tools and lets them idle; the next registers
// them from their manifests without starting either, and a call starts
// each one.
func TestInteropOnDemand(t *testing.T) {
	npm := npmDir(t)
	e := newEnv(t)
	files := t.TempDir()
	writeRaw(t, filepath.Join(files, "hello.txt"), "hello from disk\n")
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{
		npmServer(npm, "everything", "server-everything", "stdio"),
		npmServer(npm, "fs", "server-filesystem", files),
	}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	idle := map[string]bool{}
	await(t, sub, "both idle after learning their tools", func(ev *StatusEvent) bool {
		idle[ev.Status.Name] = ev.Status.State == mcp.StateIdle
		return idle["everything"] && idle["fs"]
	})
	settle(t, w)
	sub.Close()
	w.Close()

	w = e.open(t)
	settle(t, w)
	for _, name := range []string{"everything", "fs"} {
		st := statusNamed(t, w, name)
		if st.State != mcp.StateIdle || st.PID != 0 || st.ToolCount == 0 {
			t.Errorf("%s before any call: %+v", name, st)
		}
	}
	if kids := proctest.Children(t); len(kids) != 0 {
		t.Fatalf("child processes before any call: %v", kids)
	}
	if n := len(w.Tools("everything")); n != 13 {
		t.Errorf("everything has %d tools registered from its manifest, want 13", n)
	}

	if r := call(t, w, "mcp__everything__echo", `{"message":"on demand"}`, nil); r.IsError || !strings.Contains(r.Text(), "on demand") {
		t.Fatalf("everything's echo: %+v", r)
	}
	if st := statusNamed(t, w, "everything"); st.State != mcp.StateConnected || st.PID == 0 {
		t.Errorf("everything after its call: %+v", st)
	}
	if st := statusNamed(t, w, "fs"); st.State != mcp.StateIdle {
		t.Errorf("fs started by a call to everything: %+v", st)
	}
	if kids := proctest.Children(t); len(kids) != 1 {
		t.Errorf("child processes after one call: %v, want 1", kids)
	}
	path := filepath.Join(files, "hello.txt")
	if r := call(t, w, "mcp__fs__read_text_file", `{"path":"`+path+`"}`, nil); r.IsError || !strings.Contains(r.Text(), "hello from disk") {
		t.Fatalf("fs's read_text_file: %+v", r)
	}
	if st := statusNamed(t, w, "fs"); st.State != mcp.StateConnected || st.PID == 0 {
		t.Errorf("fs after its call: %+v", st)
	}
	if rs := w.Reviews(""); len(rs) != 0 {
		t.Errorf("reviews after starting from the manifests: %+v", rs)
	}
}
