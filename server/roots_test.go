package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/uri"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// rootsOf returns the roots the server srv sees, as paths.
func rootsOf(t *testing.T, ed *servertest.Editor, id string) []string {
	t.Helper()
	r := execute(t, ed, call(id, "mcp__srv__roots", `{}`))
	if r.IsError {
		t.Fatalf("roots: %s", r.Text())
	}
	var out []string
	for _, line := range strings.Split(r.Text(), "\n") {
		if line != "" {
			out = append(out, uri.URI(line).FsPath())
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// The workspace folders are the MCP roots: a server sees them at connect,
// and workspace/didChangeWorkspaceFolders changes them, the server told by
// notifications/roots/list_changed.
func TestRoots(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		project := env.Sandbox.Project
		if got := rootsOf(t, ed, "r1"); !sameSet(got, []string{project}) {
			t.Errorf("roots at connect: %v, want the project %s", got, project)
		}
		extra := filepath.Join(t.TempDir(), "other folder")
		if err := os.Mkdir(extra, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := ed.ChangeFolders(t.Context(), []string{extra}, nil); err != nil {
			t.Fatal(err)
		}
		ed.AwaitLog("srv", "roots changed")
		if got := rootsOf(t, ed, "r2"); !sameSet(got, []string{project, extra}) {
			t.Errorf("roots after a folder was added: %v", got)
		}
		if err := ed.ChangeFolders(t.Context(), nil, []string{extra}); err != nil {
			t.Fatal(err)
		}
		ed.AwaitLog("srv", "roots changed")
		if got := rootsOf(t, ed, "r3"); !sameSet(got, []string{project}) {
			t.Errorf("roots after the folder was removed: %v", got)
		}
	})
}

// With several frontends the roots are the project's and every frontend's
// folders; a frontend that leaves takes its folders with it.
func TestRootsOfFrontends(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		one := env.Editor
		one.AwaitStatus("srv", protocol.StateConnected)
		project, other := env.Sandbox.Project, t.TempDir()
		two := env.Connect("two", &servertest.EditorOptions{Folders: []string{other}})
		one.AwaitLog("srv", "roots changed")
		if got := rootsOf(t, one, "r1"); !sameSet(got, []string{project, other}) {
			t.Errorf("roots with two frontends: %v, want %v", got, []string{project, other})
		}
		if err := two.Close(); err != nil {
			t.Fatal(err)
		}
		one.AwaitLog("srv", "roots changed")
		if got := rootsOf(t, one, "r2"); !sameSet(got, []string{project}) {
			t.Errorf("roots after the second frontend left: %v", got)
		}
	}, servertest.Modes(servertest.MultiModes))
}

// server-everything, from npm, offers its roots tool only to a client that
// declares roots: through the sidecar it has it, lists the project, and
// logs (notifications/message) that it got the roots.
func TestInteropEverythingRoots(t *testing.T) {
	servertest.Run(t, everythingConfig(t), func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("everything", protocol.StateConnected)
		l := ed.AwaitLog("everything", "root(s) received from client")
		if l.Source != protocol.SourceMCP || l.Level != protocol.LevelInfo {
			t.Errorf("server-everything's log line: %+v", l)
		}
		tools, err := ed.Tools(t.Context(), "everything")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ti := range tools {
			found = found || ti.Name == "get-roots-list"
		}
		if !found {
			t.Fatalf("no get-roots-list among %d tools: the client did not declare roots", len(tools))
		}
		r := execute(t, ed, call("r1", "mcp__everything__get-roots-list", `{}`))
		if r.IsError || !strings.Contains(r.Text(), env.Sandbox.Project) {
			t.Errorf("get-roots-list: %s", r.Text())
		}
	}, servertest.Modes(servertest.Stdio))
}
