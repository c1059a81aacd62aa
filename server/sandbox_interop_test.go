//go:build linux

package server_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// server-everything and server-filesystem, from npm, sandboxed through the
// sidecar: each runs under bubblewrap and answers its tools; the
// filesystem server, run by npx from its cwd, writes where it was given;
// npx writes its cache in the sidecar's ~/.npm.
func TestInteropSandboxedThroughTheSidecar(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed (make test installs it)")
	}
	npm := servertest.NPMDir(t)
	everything := filepath.Join(npm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	// npx runs the package installed beside it (interop/node_modules):
	// the tests reach no registry. Its cwd is the interop directory, so
	// the served directory is an allowWrite of its own.
	files := fmt.Sprintf(`
-- config.json --
{"mcp": {"servers": [
	{"name": "everything", "command": ["node", %q, "stdio"], "timeout": 30000, "sandbox": true},
	{"name": "fs", "command": ["npx", "--offline", "@modelcontextprotocol/server-filesystem", "{{.Served}}"], "cwd": %q,
	 "timeout": 60000, "sandbox": {"filesystem": {"allowWrite": ["{{.Served}}"]}, "network": "none"}}
]}}
`, everything, filepath.Dir(npm))
	served := t.TempDir()
	files = strings.ReplaceAll(files, "{{.Served}}", served)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		for _, name := range []string{"everything", "fs"} {
			st := ed.AwaitStatus(name, protocol.StateConnected)
			if prog, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.PID)); err != nil || prog != bwrap {
				t.Errorf("%s runs %q (%v), want it under %s", name, prog, err, bwrap)
			}
		}
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		if r := execute(t, ed, call("e", "mcp__everything__echo", `{"message":"from the sandbox"}`)); r.IsError || !strings.Contains(r.Text(), "from the sandbox") {
			t.Errorf("echo: %s", r.Text())
		}
		file := filepath.Join(served, "note.txt")
		if r := execute(t, ed, call("w", "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"written"}`, file))); r.IsError {
			t.Errorf("write_file: %s", r.Text())
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != "written" {
			t.Errorf("the served file: %q, %v", b, err)
		}
		// A sidecar binary has the test's home; one in this process, ours.
		if env.Mode == servertest.Binary {
			if _, err := os.Stat(filepath.Join(env.Sandbox.Home, ".npm")); err != nil {
				t.Errorf("npx's cache in the sidecar's home: %v", err)
			}
		}
	})
}
