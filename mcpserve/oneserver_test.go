package mcpserve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
)

// oneServer starts, beside e's server, one of e's workspace over the
// FreeCode server name alone, and makes it the one e.connect reaches.
func (e *env) oneServer(t *testing.T, name string) *Server {
	t.Helper()
	s := New(e.w, &Options{Server: name, Frontend: "vscode-chat:" + name})
	t.Cleanup(func() { s.Close() })
	e.s = s
	return s
}

// A server of one FreeCode server lists that server's tools under their
// own names, and none of another server's nor a built-in; a call runs as
// the tool's id does, through the rules, and is the Frontend's in the
// audit trail.
func TestOneServer(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv"), backend(t, "other")}, nil)
	e.rules(t, map[string][]string{"deny": {"mcp__srv__progress"}, "ask": {"mcp__srv__echo"}})
	e.open(t, &orchestrator.Tool{ID: "clock", Description: "Tell the time", ReadOnly: true, Runner: clock{}})
	e.oneServer(t, "srv")

	asked := make(chan *mcpsdk.ElicitParams, 1)
	cs := e.connect(t, &mcpsdk.ClientOptions{ElicitationHandler: answer("accept", choiceAllowOnce, asked)})
	names := listNames(t, cs)
	slices.Sort(names)
	want := []string{"addtool", "block", "echo", "progress", "structured", "write", longToolName}
	slices.Sort(want)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("listed names (-want +got):\n%s", diff)
	}
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Title != "FreeCode: srv" {
		t.Errorf("serverInfo: %+v", init)
	}

	tests := []struct {
		tool, decision, contains string
		wantErr                  bool
	}{
		{"structured", "allowed", "hi", false},
		{"progress", "denied", `denied by rule "mcp__srv__progress"`, true},
		{"echo", "asked", "hi", false},
		{longToolName, "allowed", "long", false},
	}
	for _, tc := range tests {
		r := callTool(t, cs, tc.tool, `{"text":"hi"}`)
		if r.IsError != tc.wantErr || r.Meta["freecode/decision"] != tc.decision || !strings.Contains(resultText(r), tc.contains) {
			t.Errorf("%s: isError %v, decision %v, text %q; want isError %v, decision %s, text containing %q",
				tc.tool, r.IsError, r.Meta["freecode/decision"], resultText(r), tc.wantErr, tc.decision, tc.contains)
		}
	}
	if p := waitFor(t, asked, "the permission form"); !strings.Contains(p.Message, "mcp__srv__echo") {
		t.Errorf("the form does not name the tool's id: %q", p.Message)
	}
	// Only its own names: not the provider name, nor another server's tool.
	for _, name := range []string{"mcp__srv__structured", "clock", "mcp__other__echo"} {
		if r, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: name, Arguments: map[string]any{}}); err == nil && !r.IsError {
			t.Errorf("%s ran: %+v", name, r)
		}
	}

	// The trail is written behind the calls: wait for the lines.
	dir := config.AuditDir(e.cfgPath, nil)
	deadline := time.Now().Add(hangGuard)
	for {
		if n := auditLinesOf(t, dir, `"frontend":"vscode-chat:srv"`); n >= len(tests) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit trail in %s has no %d calls of vscode-chat:srv", dir, len(tests))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// auditLinesOf counts the lines of the audit files in dir that hold s.
func auditLinesOf(t *testing.T, dir, s string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n += strings.Count(string(b), s)
	}
	return n
}

// The list follows the one server: its tools go when it stops and come
// back when it connects again, each time with tools/list_changed, and a
// tool it adds is listed once accepted.
func TestOneServerListChanged(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.rules(t, map[string][]string{"allow": {"mcp__srv__addtool", "mcp__srv__fresh"}})
	e.open(t)
	e.oneServer(t, "srv")
	changed := make(chan struct{}, 64)
	cs := e.connect(t, &mcpsdk.ClientOptions{ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	until := func(what string, ok func([]string) bool) {
		t.Helper()
		for !ok(listNames(t, cs)) {
			waitFor(t, changed, "tools/list_changed: "+what)
		}
	}

	if _, err := e.w.StopServer(t.Context(), "srv"); err != nil {
		t.Fatal(err)
	}
	until("srv stopped", func(names []string) bool { return len(names) == 0 })
	if _, err := e.w.StartServer(t.Context(), "srv"); err != nil {
		t.Fatal(err)
	}
	until("srv connected again", func(names []string) bool { return slices.Contains(names, "echo") })

	sub := e.w.Subscribe(&workspace.SubscribeOptions{Reviews: true})
	defer sub.Close()
	if r := callTool(t, cs, "addtool", `{"text":"fresh"}`); r.IsError {
		t.Fatalf("addtool: %s", resultText(r))
	}
	awaitReviews(t, sub, "srv", 1)
	if _, err := e.w.AcceptDefinition(t.Context(), "srv", "fresh", ""); err != nil {
		t.Fatal(err)
	}
	until("fresh accepted", func(names []string) bool { return slices.Contains(names, "fresh") })
	if r := callTool(t, cs, "fresh", `{}`); r.IsError || resultText(r) != "fresh" {
		t.Errorf("the new tool: %+v", r)
	}
}
