package server_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// call is a ToolCall of tool with args.
func call(id, tool, args string) protocol.ToolCall {
	return protocol.ToolCall{CallID: id, Tool: tool, Arguments: json.RawMessage(args)}
}

// execute runs one call and returns its result.
func execute(t *testing.T, ed *servertest.Editor, c protocol.ToolCall) protocol.ToolResult {
	t.Helper()
	rs, err := ed.Execute(t.Context(), c)
	if err != nil {
		t.Fatalf("execute %s: %v", c.Tool, err)
	}
	if len(rs) != 1 || rs[0].CallID != c.CallID {
		t.Fatalf("execute %s: results %+v", c.Tool, rs)
	}
	return rs[0]
}

// addTool makes the test server's addtool add the tool name, and accepts
// it: a tool new to a server already pinned reaches no model, and so
// changes no definitions, before the user accepted it. It returns the
// freecode/tools/changed that followed.
func addTool(t *testing.T, ed *servertest.Editor, id, server, name string) protocol.ToolsChanged {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"name": name})
	if r := execute(t, ed, call(id, "mcp__"+server+"__addtool", string(args))); r.IsError {
		t.Fatalf("addtool: %+v", r)
	}
	ed.AwaitReviews(server, func(rn protocol.ReviewNeeded) bool {
		return slices.ContainsFunc(rn.Reviews, func(r protocol.ToolReview) bool { return r.Tool == name })
	})
	if _, err := ed.ReviewTools(t.Context(), protocol.ReviewParams{Server: server, Tool: name, Action: protocol.ReviewAccept}); err != nil {
		t.Fatal(err)
	}
	return ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Server == server && tc.Reason == "reviewed" })
}

// freecode/servers lists every server; stop, start and restart answer with
// the status they reach and notify it; a disabled server is listed, and
// started by hand.
func TestServers(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}, {"name": "off", "type": "local", "command": ["true"], "enabled": false}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		first := ed.AwaitStatus("a", protocol.StateConnected)
		if first.PID == 0 || first.ToolCount != 15 || first.ServerInfo == nil || first.ServerInfo.Name != "servertest" ||
			first.ProtocolVersion == "" || first.ConnectedAt.IsZero() || first.Transport != "stdio" || len(first.Command) != 1 {
			t.Errorf("connected status %+v", first)
		}
		sts, err := ed.Servers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, st := range sts {
			got = append(got, st.Name+" "+string(st.State))
		}
		if diff := cmp.Diff([]string{"a connected", "off disabled"}, got); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}

		st, err := ed.StopServer(t.Context(), "a")
		if err != nil || st.State != protocol.StateStopped {
			t.Fatalf("stop: %+v, %v", st, err)
		}
		ed.AwaitStatus("a", protocol.StateStopped)
		st, err = ed.StartServer(t.Context(), "a")
		if err != nil || st.State != protocol.StateConnected || st.PID == first.PID {
			t.Fatalf("start: %+v, %v", st, err)
		}
		ed.AwaitStatus("a", protocol.StateConnected)
		before := st.PID
		st, err = ed.RestartServer(t.Context(), "a")
		if err != nil || st.State != protocol.StateConnected || st.PID == before {
			t.Fatalf("restart: %+v, %v", st, err)
		}
		ed.AwaitStatus("a", protocol.StateConnected)

		// A server that fails to start is a status that says why: failed,
		// or connecting again while its first connect is retried.
		st, err = ed.StartServer(t.Context(), "off")
		if err != nil || st.State != protocol.StateFailed && st.State != protocol.StateConnecting || st.LastError == "" {
			t.Errorf("start of a server that exits at once: %+v, %v", st, err)
		}
	})
}

// Errors name what is wrong: a server or tool that does not exist is
// -32001, params that do not fit are -32602 naming the field.
func TestErrors(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		ctx := t.Context()
		for _, tc := range []struct {
			method string
			params any
			code   jsonrpc2.Code
			text   string
		}{
			{protocol.MethodServersStart, map[string]any{"name": "nope"}, protocol.CodeNoSuchServer, `"nope"`},
			{protocol.MethodServersStop, map[string]any{"name": "nope"}, protocol.CodeNoSuchServer, `"nope"`},
			{protocol.MethodServersRestart, map[string]any{}, protocol.CodeInvalidParams, "name: required"},
			{protocol.MethodServersStart, map[string]any{"name": 3}, protocol.CodeInvalidParams, "name: want string"},
			{protocol.MethodServersApprove, map[string]any{"name": "srv"}, protocol.CodeInvalidParams, "approve: required"},
			{protocol.MethodServersApprove, map[string]any{"name": "srv", "approve": true}, protocol.CodeInvalidParams, "entryHash: required"},
			{protocol.MethodServersApprove, map[string]any{"name": "nope", "approve": true, "entryHash": "00"}, protocol.CodeNoSuchServer, `"nope"`},
			{protocol.MethodTools, map[string]any{"server": "nope"}, protocol.CodeNoSuchServer, `"nope"`},
			{protocol.MethodToolsDefinitions, map[string]any{}, protocol.CodeInvalidParams, "format: required"},
			{protocol.MethodToolsDefinitions, map[string]any{"format": "gemini"}, protocol.CodeInvalidParams, "format: want"},
			{protocol.MethodToolsExecute, map[string]any{}, protocol.CodeInvalidParams, "calls: required"},
			{protocol.MethodToolsExecute, map[string]any{"calls": []any{map[string]any{"tool": "x"}}}, protocol.CodeInvalidParams, "calls[0].callId: required"},
			{protocol.MethodToolsExecute, map[string]any{"calls": []any{map[string]any{"callId": "c"}}}, protocol.CodeInvalidParams, "calls[0].tool: required"},
			{protocol.MethodToolsExecute, map[string]any{"calls": []any{
				map[string]any{"callId": "c", "tool": "x"}, map[string]any{"callId": "c", "tool": "y"},
			}}, protocol.CodeInvalidParams, "calls[1].callId"},
			{protocol.MethodToolsExecute, map[string]any{"calls": "all"}, protocol.CodeInvalidParams, "calls: want"},
			{protocol.MethodProjectTrust, map[string]any{}, protocol.CodeInvalidParams, "trusted: required"},
			{"freecode/nothing", map[string]any{}, jsonrpc2.MethodNotFound, "freecode/nothing"},
		} {
			err := ed.Call(ctx, tc.method, tc.params, nil)
			wantCode(t, tc.method, err, tc.code, tc.text)
		}
		// A tool that does not exist is a result, as a model's mistake.
		r := execute(t, ed, call("c1", "mcp__srv__nope", `{}`))
		if !r.IsError || r.Decision != protocol.DecisionInvalid {
			t.Errorf("a call of no tool: %+v", r)
		}
	})
}

// A server that is killed reconnects: reconnecting, then connected, and
// its tools stay what they were: no tools/changed, so a provider's prompt
// cache survives. The first tools/changed after is a real change's.
func TestServerReconnects(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		first := ed.AwaitStatus("srv", protocol.StateConnected)
		before, err := ed.Definitions(t.Context(), protocol.FormatAnthropic)
		if err != nil {
			t.Fatal(err)
		}
		mark := ed.Mark()
		crashed, err := os.FindProcess(first.PID)
		if err != nil {
			t.Fatal(err)
		}
		if err := crashed.Kill(); err != nil {
			t.Fatal(err)
		}
		crashed.Release()
		ed.AwaitStatus("srv", protocol.StateReconnecting)
		again := ed.AwaitStatus("srv", protocol.StateConnected)
		if again.PID == first.PID || again.ToolCount != first.ToolCount {
			t.Errorf("after the reconnect: %+v", again)
		}
		after, err := ed.Definitions(t.Context(), protocol.FormatAnthropic)
		if err != nil || after.Hash != before.Hash {
			t.Fatalf("definitions' hash after the reconnect: %s, was %s (%v)", after.Hash, before.Hash, err)
		}
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		tc := addTool(t, ed, "c2", "srv", "fresh")
		if tc.Server != "srv" || tc.Hashes.Anthropic == before.Hash {
			t.Errorf("the tools/changed of addtool: %+v", tc)
		}
		// Since the crash: that one, and perhaps the one of the first
		// connect, which a frontend that connected late may get late.
		for _, n := range ed.Since(mark, protocol.NotifyToolsChanged) {
			var got protocol.ToolsChanged
			if err := n.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc && (got.Reason != "connected" || got.Hashes.Anthropic != before.Hash) {
				t.Errorf("a tools/changed from the reconnect: %+v", got)
			}
		}
	})
}

// A project's server awaits the user's approval, showing what it would
// run; approve starts it, revoke stops it again.
func TestApprove(t *testing.T) {
	servertest.Run(t, `
-- project/.freecode/settings.json --
{"mcp": {"servers": [{{server "proj"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		st := ed.AwaitStatus("proj", protocol.StateAwaitingApproval)
		if st.Scope != "project" || len(st.Command) == 0 || st.PID != 0 || st.Approval == nil || st.Approval.EntryHash == "" {
			t.Fatalf("awaiting approval: %+v", st)
		}
		_, err := ed.StartServer(t.Context(), "proj")
		wantCode(t, "start before approval", err, jsonrpc2.InvalidRequest, "approv")

		// The repository swaps the entry after the user was shown it: the
		// hash shown approves nothing, and the entry is not approved.
		shown := st.Approval.EntryHash
		env.Sandbox.WriteFile(t, "project/.freecode/settings.json",
			servertest.Expand(t, `{"mcp": {"servers": [{{server "proj" "NODE_OPTIONS" "--require ./evil.js"}}]}}`))
		_, err = ed.ApproveServer(t.Context(), "proj", true, shown)
		wantCode(t, "approve of a swapped entry", err, protocol.CodeInvalidParams, "entryHash")
		st = ed.AwaitStatus("proj", protocol.StateAwaitingApproval)
		if st.Approval == nil || st.Approval.EntryHash == shown || st.Approval.Env["NODE_OPTIONS"] != "--require ./evil.js" {
			t.Fatalf("the swapped entry's status: %+v", st.Approval)
		}
		got, err := ed.ApproveServer(t.Context(), "proj", true, st.Approval.EntryHash)
		if err != nil || got.State != protocol.StateConnected {
			t.Fatalf("approve: %+v, %v", got, err)
		}
		ed.AwaitStatus("proj", protocol.StateConnected)
		got, err = ed.ApproveServer(t.Context(), "proj", false, "")
		if err != nil || got.State != protocol.StateAwaitingApproval {
			t.Fatalf("revoke: %+v, %v", got, err)
		}
		ed.AwaitStatus("proj", protocol.StateAwaitingApproval)
	})
}

// freecode/project describes the project; trusting it is recorded and
// reported, and the permission request says so.
func TestProjectTrust(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		p, err := ed.Project(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := &protocol.Project{
			Root: env.Sandbox.Project, ConfigPath: env.Sandbox.ConfigPath,
			SettingsPaths: protocol.SettingsPaths{
				User:    env.Sandbox.Path("settings.json"),
				Project: env.Sandbox.Path("project/.freecode/settings.json"),
				Local:   env.Sandbox.Path("project/.freecode/settings.local.json"),
			},
		}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("project (-want +got):\n%s", diff)
		}
		ed.SetAnswer(servertest.Reply(protocol.Deny))
		execute(t, ed, call("c1", "mcp__srv__write", `{"text":"x"}`))
		trusted, err := ed.SetTrusted(t.Context(), true)
		if err != nil || !trusted {
			t.Fatalf("trust: %v, %v", trusted, err)
		}
		execute(t, ed, call("c2", "mcp__srv__write", `{"text":"y"}`))
		prompts := ed.AwaitPrompts(2)
		if prompts[0].ProjectTrusted || !prompts[1].ProjectTrusted {
			t.Errorf("projectTrusted of the prompts before and after trust: %v, %v", prompts[0].ProjectTrusted, prompts[1].ProjectTrusted)
		}
		if p, err := ed.Project(t.Context()); err != nil || !p.ProjectTrusted {
			t.Errorf("project after trust: %+v, %v", p, err)
		}
		if trusted, err := ed.SetTrusted(t.Context(), false); err != nil || trusted {
			t.Errorf("untrust: %v, %v", trusted, err)
		}
	})
}

// A frontend connected late is told where things stand at once.
func TestLateFrontend(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}]}}
-- settings.json --
{"permissions": {"allow": [oops]}}
`, func(t *testing.T, env *servertest.Env) {
		env.Editor.AwaitStatus("a", protocol.StateConnected)
		late := env.Connect("late", nil)
		late.AwaitStatus("a", protocol.StateConnected)
		cp := late.AwaitProblems(env.Sandbox.Path("settings.json"))
		if len(cp.Problems) != 1 || cp.Problems[0].Line != 1 {
			t.Errorf("problems told to a late frontend: %+v", cp)
		}
	}, servertest.Modes(servertest.MultiModes))
}

// toolsChangedSince returns the tools/changed the editor got since mark,
// up to a real change made now: addtool of server adds the tool name, and
// whatever tools/changed came before that one's is delivered before it, on
// the one queue of the editor's events.
//
// The server's pinning must be off: a tool new to a pinned server changes
// no definitions until it is accepted.
func toolsChangedSince(t *testing.T, ed *servertest.Editor, server, name string, mark int) []protocol.ToolsChanged {
	t.Helper()
	ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
	if r := execute(t, ed, call("add-"+name, "mcp__"+server+"__addtool", `{"name":"`+name+`"}`)); r.IsError {
		t.Fatalf("addtool: %+v", r)
	}
	ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Server == server && tc.Reason == "listChanged" })
	var out []protocol.ToolsChanged
	for _, n := range ed.Since(mark, protocol.NotifyToolsChanged) {
		var tc protocol.ToolsChanged
		if err := n.Decode(&tc); err != nil {
			t.Fatal(err)
		}
		out = append(out, tc)
	}
	return out[:len(out)-1] // the barrier's own
}

// A restart is a reconnect: the server's tools stay registered through it,
// so a restart that brings the same tools sends no freecode/tools/changed
// at all and every provider's prompt cache survives; one whose server then
// lists other tools sends exactly one.
func TestRestartIsAReconnect(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": []}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ctx := t.Context()
		toolsFile := env.Sandbox.Path("tools.txt")
		env.Sandbox.WriteFile(t, "config.json", `{"mcp": {"servers": [`+
			servertest.Server("a", map[string]any{"env": map[string]string{servertest.ToolsFileEnv: toolsFile}, "pinning": "off"})+`]}}`)
		first := ed.AwaitStatus("a", protocol.StateConnected)
		// The barrier's tool goes with the process, so the restarted
		// server is set up to list it again.
		env.Sandbox.WriteFile(t, "tools.txt", "barrier1\n")
		toolsChangedSince(t, ed, "a", "barrier1", ed.Mark())
		before, err := ed.Definitions(ctx, protocol.FormatAnthropic)
		if err != nil {
			t.Fatal(err)
		}

		mark := ed.Mark()
		st, err := ed.RestartServer(ctx, "a")
		if err != nil || st.State != protocol.StateConnected || st.PID == first.PID || st.ToolCount != first.ToolCount+1 {
			t.Fatalf("restart: %+v, %v; want connected, a new process, %d tools", st, err, first.ToolCount+1)
		}
		after, err := ed.Definitions(ctx, protocol.FormatAnthropic)
		if err != nil || after.Hash != before.Hash {
			t.Errorf("definitions' hash after a restart with the same tools: %s, was %s (%v)", after.Hash, before.Hash, err)
		}
		if got := toolsChangedSince(t, ed, "a", "barrier2", mark); len(got) != 0 {
			t.Errorf("a restart with the same tools sent tools/changed: %+v", got)
		}

		// Now the server comes back with a tool more.
		env.Sandbox.WriteFile(t, "tools.txt", "barrier1\nbarrier2\nother\n")
		mark = ed.Mark()
		if st, err := ed.RestartServer(ctx, "a"); err != nil || st.State != protocol.StateConnected {
			t.Fatalf("restart: %+v, %v", st, err)
		}
		got := toolsChangedSince(t, ed, "a", "barrier3", mark)
		if len(got) != 1 || got[0].Server != "a" || got[0].Reason != "reconnected" || got[0].Hashes.Anthropic == before.Hash {
			t.Errorf("tools/changed of a restart that brought other tools: %+v; want one, reconnected, with a new hash", got)
		}
	})
}

// A restarted server that does not come back is a server reconnecting:
// its tools stay registered meanwhile (they would go only if it ended in
// failed), and once it is back with the same tools, no tools/changed was
// sent at all.
func TestRestartThatFailsKeepsTools(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": []}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ctx := t.Context()
		failFile := env.Sandbox.Path("down")
		env.Sandbox.WriteFile(t, "config.json", `{"mcp": {"servers": [`+
			servertest.Server("a", map[string]any{"env": map[string]string{
				servertest.FailFileEnv: failFile, servertest.ToolsFileEnv: env.Sandbox.Path("tools.txt"),
			}, "pinning": "off"})+`]}}`)
		first := ed.AwaitStatus("a", protocol.StateConnected)
		toolsChangedSince(t, ed, "a", "barrier1", ed.Mark())
		env.Sandbox.WriteFile(t, "tools.txt", "barrier1\n") // listed again once back
		before, err := ed.Definitions(ctx, protocol.FormatAnthropic)
		if err != nil {
			t.Fatal(err)
		}
		want := first.ToolCount + 1 // barrier1

		mark := ed.Mark()
		env.Sandbox.WriteFile(t, "down", "")
		st, err := ed.RestartServer(ctx, "a")
		if err != nil || st.State != protocol.StateReconnecting || st.ToolCount != want || !strings.Contains(st.LastError, "refusing to start") {
			t.Fatalf("restart of a server that does not come back: %+v, %v; want reconnecting with %d tools and why", st, err, want)
		}
		tools, err := ed.Tools(ctx, "a")
		if err != nil || len(tools) != want {
			t.Errorf("tools of the server reconnecting: %d, %v; want %d", len(tools), err, want)
		}
		if defs, err := ed.Definitions(ctx, protocol.FormatAnthropic); err != nil || defs.Hash != before.Hash {
			t.Errorf("definitions' hash while it reconnects: %s, was %s (%v)", defs.Hash, before.Hash, err)
		}

		if err := os.Remove(failFile); err != nil {
			t.Fatal(err)
		}
		ed.AwaitStatus("a", protocol.StateConnected)
		if got := toolsChangedSince(t, ed, "a", "barrier2", mark); len(got) != 0 {
			t.Errorf("a restart that came back with the same tools sent tools/changed: %+v", got)
		}
	})
}
