package workspace

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp"
)

// VS Code's mcp.json saved over the config file is a problem at its
// "servers", with the import that converts it: the servers of the last
// good config keep running, and the projects it trusts and the project
// servers it approved, kept in that same file, stay trusted and approved
// while the file is a problem. Before, the file loaded as one with no
// servers: every server stopped, and trust and approvals went with it.
func TestOtherClientConfigKeepsState(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // trust records the rules accepted there
	e := newEnv(t)
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	project, err := config.LoadProject(e.root)
	if err != nil {
		t.Fatal(err)
	}
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, map[string]any{
		"trustedProjects":        []string{e.root},
		"approvedProjectServers": []string{config.ApprovalKey(e.root, project[0])},
	}))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)
	connected := func() {
		t.Helper()
		sts := w.Statuses()
		if len(sts) != 2 || sts[0].Name != "p" || sts[0].State != mcp.StateConnected || sts[1].Name != "srv" || sts[1].State != mcp.StateConnected {
			t.Errorf("statuses: %+v, want p and srv connected", sts)
		}
		if !w.Project().Trusted {
			t.Error("the project is not trusted")
		}
	}
	connected()

	srv := server(t, "srv")
	delete(srv, "name")
	b, err := json.MarshalIndent(map[string]any{"servers": map[string]any{"srv": srv}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, e.cfgPath, string(b))
	pe := await(t, sub, "config problems", func(ev *ProblemsEvent) bool { return ev.Path == e.cfgPath })
	if len(pe.Problems) != 1 || pe.Problems[0].Key != "servers" || pe.Problems[0].Line != 2 || pe.Problems[0].Column != 3 || pe.Problems[0].Severity != SeverityError ||
		!strings.Contains(pe.Problems[0].Message, "`freecode mcp import vscode "+e.cfgPath+"`") {
		t.Errorf("problems: %+v", pe.Problems)
	}
	if want := "the config has 1 problem; showing the last good one"; pe.Summary != want {
		t.Errorf("summary = %q, want %q", pe.Summary, want)
	}
	connected()
	for _, tool := range []string{"mcp__srv__echo", "mcp__p__echo"} {
		if r := call(t, w, tool, `{"text":"still"}`, nil); r.IsError {
			t.Errorf("%s with the config in VS Code's shape: %+v", tool, r)
		}
	}
}
