package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// A config edit is applied and notified: a server added connects, and its
// tools change the definitions. A config that stops parsing is reported
// with line and column, in freecode/config/problems and window/logMessage,
// while the last good one keeps running; the fix is an empty list.
func TestConfigEdit(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		cfg := env.Sandbox.ConfigPath

		env.Sandbox.WriteFile(t, "config.json", servertest.Expand(t, `{"mcp": {"servers": [{{server "srv"}}, {{server "added"}}]}}`))
		ed.AwaitStatus("added", protocol.StateConnecting)
		ed.AwaitStatus("added", protocol.StateConnected)
		ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Server == "added" })

		env.Sandbox.WriteFile(t, "config.json", "{\"mcp\": {\"servers\": [\n  oops]}}")
		cp := ed.AwaitProblems(cfg)
		if len(cp.Problems) != 1 || cp.Problems[0].Line != 2 || cp.Problems[0].Column != 3 {
			t.Errorf("problems of a broken config: %+v", cp)
		}
		lm := ed.AwaitLogMessage(fmt.Sprintf("%s:2:3: ", cfg))
		if lm.Type != lsp.MessageTypeError {
			t.Errorf("window/logMessage of a broken config: %+v", lm)
		}
		sts, err := ed.Servers(t.Context())
		if err != nil || len(sts) != 2 {
			t.Errorf("servers while the config is broken: %+v, %v", sts, err)
		}

		mark := ed.Mark()
		env.Sandbox.WriteFile(t, "config.json", servertest.Expand(t, `{"mcp": {"servers": [{{server "srv"}}]}}`))
		if cp := ed.AwaitProblems(cfg); len(cp.Problems) != 0 || cp.Problems == nil {
			t.Errorf("problems after the fix: %+v", cp)
		}
		// The removed server's last status says so, whatever state it was
		// in, and freecode/servers lists it no more.
		ed.AwaitStatus("added", protocol.StateRemoved)
		ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Server == "added" && tc.Reason == "removed" })
		var states []protocol.ServerState
		for _, n := range ed.Since(mark, protocol.NotifyServersStatus) {
			var st protocol.ServerStatus
			if err := json.Unmarshal(n.Params, &st); err != nil {
				t.Fatal(err)
			}
			if st.Name == "added" {
				states = append(states, st.State)
			}
		}
		if diff := cmp.Diff([]protocol.ServerState{protocol.StateRemoved}, states); diff != "" {
			t.Errorf("statuses of the removed server (-want +got):\n%s", diff)
		}
		sts, err = ed.Servers(t.Context())
		if err != nil || len(sts) != 1 || sts[0].Name != "srv" {
			t.Errorf("servers after the removal: %+v, %v", sts, err)
		}
	})
}

// A rule file edit applies to the next call and to freecode/permissions;
// an ignored rule is a problem with its line.
func TestRulesEdit(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		// A broken file first, so that the good one's reload is seen: its
		// fix is told once its rules are in force.
		settings := env.Sandbox.Path("settings.json")
		env.Sandbox.WriteFile(t, "settings.json", `{"permissions": oops}`)
		if cp := ed.AwaitProblems(settings); len(cp.Problems) == 0 {
			t.Fatalf("problems of a broken rule file: %+v", cp)
		}
		env.Sandbox.WriteFile(t, "settings.json", `{"permissions": {"allow": ["mcp__srv__write"], "deny": ["mcp__srv__echo"]}}`)
		if cp := ed.AwaitProblems(settings); len(cp.Problems) != 0 {
			t.Fatalf("problems of the fixed rule file: %+v", cp)
		}
		rules, err := ed.Permissions(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := []protocol.Rule{{Rule: "mcp__srv__echo", Effect: "deny", Source: "user"}, {Rule: "mcp__srv__write", Effect: "allow", Source: "user"}}
		if diff := cmp.Diff(want, rules); diff != "" {
			t.Errorf("rules (-want +got):\n%s", diff)
		}
		if r := execute(t, ed, call("c1", "mcp__srv__write", `{}`)); r.IsError || r.Decision != protocol.DecisionAllowed {
			t.Errorf("write with an allow rule: %+v", r)
		}
		if r := execute(t, ed, call("c2", "mcp__srv__echo", `{"text":"x"}`)); !r.IsError || r.Decision != protocol.DecisionDenied {
			t.Errorf("echo with a deny rule: %+v", r)
		}
		if n := len(ed.Prompts()); n != 0 {
			t.Errorf("%d prompts with rules that decide", n)
		}
	})
}

// A server's stderr lines and its MCP log messages reach every frontend
// as freecode/servers/log, with their level and source and the server's
// secrets masked; a flood is cut, and the cut said.
func TestServerLogs(t *testing.T) {
	const secret = "s3cret-token-value"
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "srv" "API_TOKEN" "s3cret-token-value"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		if r := execute(t, ed, call("c1", "mcp__srv__say", `{"text":"token is `+secret+`"}`)); r.IsError {
			t.Fatalf("say: %+v", r)
		}
		l := ed.AwaitLog("srv", "token is ")
		if l.Message != "token is ***" || l.Level != protocol.LevelInfo || l.Source != protocol.SourceStderr || l.Time.IsZero() {
			t.Errorf("stderr line: %+v", l)
		}
		if r := execute(t, ed, call("c2", "mcp__srv__mcplog", `{"level":"critical","text":"disk on fire"}`)); r.IsError {
			t.Fatalf("mcplog: %+v", r)
		}
		l = ed.AwaitLog("srv", "disk on fire")
		if l.Message != "servertest: disk on fire" || l.Level != protocol.LevelError || l.Source != protocol.SourceMCP {
			t.Errorf("MCP log message: %+v", l)
		}

		floodLogs(t, ed, "srv", 5000)
	})
}

// floodLogs has server write lines lines to its stderr, through ed, and
// waits until ed was told of each, shown or dropped.
func floodLogs(t *testing.T, ed *servertest.Editor, server string, lines int) {
	t.Helper()
	if r := execute(t, ed, call("flood-"+server, "mcp__"+server+"__say", fmt.Sprintf(`{"text":"flood","count":%d}`, lines))); r.IsError {
		t.Fatalf("say: %+v", r)
	}
	shown, dropped := 0, 0
	for shown+dropped < lines {
		n := ed.Await("flood "+server, "the flood's lines", func(n frontend.Notification) bool { return n.Method == protocol.NotifyServersLog })
		var l protocol.ServerLog
		if err := n.Decode(&l); err != nil {
			t.Fatal(err)
		}
		if l.Name != server {
			continue
		}
		switch {
		case l.Message == "flood":
			shown++
		case strings.HasPrefix(l.Message, "freecode: "):
			var n int
			fmt.Sscanf(l.Message, "freecode: %d lines", &n)
			dropped += n
			if l.Level != protocol.LevelWarning {
				t.Errorf("the drop line: %+v", l)
			}
		}
	}
	if shown+dropped != lines || dropped == 0 {
		t.Errorf("%s: %d lines shown, %d said dropped; want %d in all, some dropped", server, shown, dropped, lines)
	}
}

// A frontend that falls so far behind that events it was to get are
// dropped is resynced: every server's status again, and a tools/changed
// for the change it missed.
func TestResync(t *testing.T) {
	hold := make(chan struct{})
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}, {{server "b"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		fast := env.Editor
		fast.AwaitStatus("a", protocol.StateConnected)
		fast.AwaitStatus("b", protocol.StateConnected)
		// A test that fails before it lets go of the held frontend must not
		// leave its read loop held: the cleanup's Close waits for it.
		var released sync.Once
		release := func() { released.Do(func() { close(hold) }) }
		t.Cleanup(release)
		slow := env.Connect("slow", &servertest.EditorOptions{Hold: hold})
		// slow reads no more: a tools change, then more log lines than its
		// queue holds (each server's burst alone is 200 lines).
		fast.SetAnswer(servertest.Reply(protocol.AllowOnce))
		tc := addTool(t, fast, "c1", "a", "missed")
		floodLogs(t, fast, "a", 5000)
		floodLogs(t, fast, "b", 5000)
		release()
		got := slow.AwaitToolsChanged(func(got protocol.ToolsChanged) bool { return got.Hashes == tc.Hashes })
		if got.Reason != "resync" {
			t.Errorf("the tools change the slow frontend got: %+v, want the resync's", got)
		}
		slow.AwaitStatus("a", protocol.StateConnected)
		slow.AwaitStatus("b", protocol.StateConnected)
		env.AwaitSidecarLog("resyncing")
	}, servertest.Modes(servertest.Shared))
}
