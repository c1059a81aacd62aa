package server_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// freecode/tools lists the tools under their ids, with annotations;
// freecode/tools/definitions gives each provider's array and the hash that
// tools/changed announced.
func TestTools(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}, {{demo "demo"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("a", protocol.StateConnected)
		ed.AwaitStatus("demo", protocol.StateConnected)
		all, err := ed.Tools(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		a, err := ed.Tools(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ti := range a {
			ids = append(ids, ti.ID)
		}
		want := []string{"mcp__a__addprompt", "mcp__a__addresource", "mcp__a__addtool", "mcp__a__block", "mcp__a__caps",
			"mcp__a__crash", "mcp__a__echo", "mcp__a__elicit", "mcp__a__elicit_url", "mcp__a__mcplog",
			"mcp__a__progress", "mcp__a__roots", "mcp__a__sample", "mcp__a__say", "mcp__a__write"}
		if diff := cmp.Diff(want, ids); diff != "" {
			t.Errorf("tools of a (-want +got):\n%s", diff)
		}
		if len(all) <= len(a) {
			t.Errorf("%d tools in all, %d of a: the demo server's are missing", len(all), len(a))
		}
		i := slices.IndexFunc(all, func(ti protocol.ToolInfo) bool { return ti.ID == "mcp__demo__delete_file" })
		if i < 0 || all[i].ReadOnly || all[i].Destructive == nil || !*all[i].Destructive || all[i].Server != "demo" ||
			all[i].Name != "delete_file" || !json.Valid(all[i].InputSchema) {
			t.Errorf("delete_file: %+v", all)
		}

		for _, format := range []protocol.Format{protocol.FormatAnthropic, protocol.FormatOpenAI} {
			defs, err := ed.Definitions(t.Context(), format)
			if err != nil {
				t.Fatal(err)
			}
			var arr []map[string]any
			if err := json.Unmarshal(defs.Tools, &arr); err != nil || len(arr) != len(all) || len(defs.Hash) != 64 {
				t.Errorf("%s definitions: %d tools of %d, hash %q, %v", format, len(arr), len(all), defs.Hash, err)
			}
		}
		// The hashes tools/changed announces are those of the definitions.
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		tc := addTool(t, ed, "c1", "a", "fresh")
		for format, hash := range map[protocol.Format]string{protocol.FormatAnthropic: tc.Hashes.Anthropic, protocol.FormatOpenAI: tc.Hashes.OpenAI} {
			defs, err := ed.Definitions(t.Context(), format)
			if err != nil || defs.Hash != hash {
				t.Errorf("%s: tools/changed announced %s, the definitions' hash is %s (%v)", format, hash, defs.Hash, err)
			}
		}
	})
}

// A read-only call runs unasked; any other asks the frontend that sent
// it, with what it needs to decide; the answer decides; arguments that do
// not fit the schema never reach the server.
func TestExecute(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		r := execute(t, ed, call("c1", "mcp__srv__echo", `{"text":"hi"}`))
		if r.IsError || r.Text() != "hi" || r.Decision != protocol.DecisionAllowed || len(ed.Prompts()) != 0 {
			t.Errorf("read-only echo: %+v, %d prompts", r, len(ed.Prompts()))
		}

		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		r = execute(t, ed, call("c2", "mcp__srv__write", `{"text":"x"}`))
		if r.IsError || r.Text() != "wrote" || r.Decision != protocol.DecisionAsked {
			t.Errorf("allowed write: %+v", r)
		}
		p := ed.AwaitPrompts(1)[0]
		want := protocol.PermissionRequest{
			CallID: "c2", Tool: "mcp__srv__write", Server: "srv", Arguments: json.RawMessage(`{"text":"x"}`),
			Reason: "no rule; tool is not read-only",
		}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("permission request (-want +got):\n%s", diff)
		}

		ed.SetAnswer(servertest.Reply(protocol.Deny))
		r = execute(t, ed, call("c3", "mcp__srv__write", `{"text":"y"}`))
		if !r.IsError || r.Decision != protocol.DecisionDenied || !strings.Contains(r.Text(), "denied by the user") {
			t.Errorf("denied write: %+v", r)
		}

		r = execute(t, ed, call("c4", "mcp__srv__echo", `{"text":5}`))
		if !r.IsError || r.Decision != protocol.DecisionInvalid || !strings.Contains(r.Text(), "/text") {
			t.Errorf("invalid arguments: %+v (%s)", r, r.Text())
		}

		// A batch: results in the order of the calls.
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		rs, err := ed.Execute(t.Context(), call("d1", "mcp__srv__echo", `{"text":"1"}`), call("d2", "mcp__srv__write", `{}`),
			call("d3", "mcp__srv__echo", `{"text":"3"}`))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.CallID+" "+r.Text())
		}
		if diff := cmp.Diff([]string{"d1 1", "d2 wrote", "d3 3"}, got); diff != "" {
			t.Errorf("batch results (-want +got):\n%s", diff)
		}
	})
}

// A frontend that does not implement freecode/permission/request has
// denied every call that asks.
func TestNoPermissionHandler(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		r := execute(t, ed, call("c1", "mcp__srv__write", `{}`))
		if !r.IsError || r.Decision != protocol.DecisionDenied || !strings.Contains(r.Text(), "does not answer permission requests") {
			t.Errorf("write with a frontend that cannot be asked: %+v (%s)", r, r.Text())
		}
	}, servertest.WithEditor(servertest.EditorOptions{NoPermission: true}))
}

// A server's progress on a call reaches the frontend that made it while
// the call runs, the latest of it at least.
func TestProgress(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			ed.Execute(ctx, call("p1", "mcp__srv__progress", `{}`))
			close(done)
		}()
		n := ed.Await("progress", "progress 2/2", func(n frontend.Notification) bool {
			var p protocol.ToolProgress
			return n.Method == protocol.NotifyToolsProgress && n.Decode(&p) == nil && p.Progress == 2
		})
		cancel()
		<-done
		var p protocol.ToolProgress
		if err := n.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(protocol.ToolProgress{CallID: "p1", Progress: 2, Total: 2, Message: "step 2/2"}, p); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
	})
}

// A slow call holds up no other request; $/cancelRequest ends it with
// -32800 and the MCP server is told (notifications/cancelled), which it
// shows by writing "cancelled" to its stderr.
func TestCancel(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := ed.Execute(ctx, call("b1", "mcp__srv__block", `{"text":"b1"}`))
			done <- err
		}()
		ed.AwaitLog("srv", "blocking b1")
		if _, err := ed.Servers(t.Context()); err != nil {
			t.Fatalf("freecode/servers while a call runs: %v", err)
		}
		cancel()
		ed.AwaitLog("srv", "cancelled b1")
		if err := <-done; err == nil {
			t.Error("execute returned no error after its cancellation")
		}
		// The answer to the cancelled request, which the client no longer
		// waits for, is in its log.
		env.AwaitSidecarLog(`"error":{"code":-32800,"message":"freecode/tools/execute was cancelled"}`)
		// The server took the cancellation as it should and goes on.
		if r := execute(t, ed, call("e1", "mcp__srv__echo", `{"text":"after"}`)); r.IsError || r.Text() != "after" {
			t.Errorf("a call after the cancelled one: %+v", r)
		}
	})
}
