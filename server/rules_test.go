package server_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// The report of issue 29: in a trusted project, something that can write
// the project (here the test, standing in for a project server or a pull)
// writes settings.local.json with allow mcp__*. The user's server's
// destructive tool, refused before for want of anyone to ask, is refused
// still; the frontend is told what awaits review, as a diff, and once it
// accepts by the hash it was shown (a stale one is refused) the tool runs.
func TestRulesAwaitReviewEndToEnd(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		if trusted, err := ed.SetTrusted(t.Context(), true); err != nil || !trusted {
			t.Fatalf("trust: %v, %v", trusted, err)
		}
		refused := func(id string) {
			t.Helper()
			r := execute(t, ed, call(id, "mcp__srv__write", `{}`))
			if !r.IsError || r.Decision != protocol.DecisionDenied || !strings.Contains(r.Text(), "does not answer permission requests") {
				t.Fatalf("write, no rule allowing it and no one to ask: %+v (%s)", r, r.Text())
			}
		}
		refused("c1")

		local := env.Sandbox.Path("project/.freecode/settings.local.json")
		env.Sandbox.WriteFile(t, "project/.freecode/settings.local.json", `{"permissions":{"allow":["mcp__*"]}}`)
		rr := ed.AwaitRulesReview(func(r protocol.RulesReview) bool { return len(r.Files) > 0 })
		want := []protocol.RuleFileChange{{Path: local, Source: "local", Allow: []string{"mcp__*"}}}
		if diff := cmp.Diff(want, rr.Files); diff != "" || rr.Hash == "" {
			t.Errorf("rules awaiting review %q (-want +got):\n%s", rr.Hash, diff)
		}
		refused("c2")
		p, err := ed.Project(t.Context())
		if err != nil || p.PendingRules == nil || p.PendingRules.Hash != rr.Hash {
			t.Errorf("freecode/project: %+v, %v", p, err)
		}

		err = ed.AcceptRules(t.Context(), strings.Repeat("0", 64))
		if err == nil || !strings.Contains(err.Error(), "rulesHash") {
			t.Errorf("accepting by a stale hash: %v", err)
		}
		refused("c3")
		if err := ed.AcceptRules(t.Context(), rr.Hash); err != nil {
			t.Fatal(err)
		}
		ed.AwaitRulesReview(func(r protocol.RulesReview) bool { return len(r.Files) == 0 })
		if r := execute(t, ed, call("c4", "mcp__srv__write", `{}`)); r.IsError || r.Decision != protocol.DecisionAllowed {
			t.Errorf("write once the rules are accepted: %+v (%s)", r, r.Text())
		}
		if p, err := ed.Project(t.Context()); err != nil || p.PendingRules != nil {
			t.Errorf("freecode/project after accepting: %+v, %v", p, err)
		}
	}, servertest.WithEditor(servertest.EditorOptions{NoPermission: true}))
}

// A frontend that connects while rules await review is told at once.
func TestRulesReviewToldOnConnect(t *testing.T) {
	servertest.Run(t, oneServer+`
-- project/.freecode/settings.local.json --
{"permissions": {"deny": ["mcp__srv__write"]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		if _, err := ed.SetTrusted(t.Context(), true); err != nil {
			t.Fatal(err)
		}
		env.Sandbox.WriteFile(t, "project/.freecode/settings.local.json", `{}`)
		ed.AwaitRulesReview(func(r protocol.RulesReview) bool { return len(r.Files) > 0 })
		late := env.Connect("late", nil)
		rr := late.AwaitRulesReview(nil)
		if len(rr.Files) != 1 || !cmp.Equal(rr.Files[0].Deny, []string{"mcp__srv__write"}) {
			t.Errorf("told a late frontend: %+v", rr)
		}
	}, servertest.Modes(servertest.MultiModes))
}

// An "always allow" answer, and its Undo (issue 35, item 9): the tool is
// listed as allowed by the rule written, in the file it went to, and the
// frontend is told the rules changed (freecode/tools/changed, reason
// rules); freecode/permissions/removeAllow takes the rule out of the file
// and the session, and the tool asks again.
func TestAlwaysAllowTakenBack(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		if trusted, err := ed.SetTrusted(t.Context(), true); err != nil || !trusted {
			t.Fatalf("trust: %v, %v", trusted, err)
		}
		allowedBy := func() *protocol.AllowedBy {
			t.Helper()
			tools, err := ed.Tools(t.Context(), "srv")
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools {
				if tool.ID == "mcp__srv__write" {
					return tool.AllowedBy
				}
			}
			t.Fatalf("no mcp__srv__write in %+v", tools)
			return nil
		}
		if a := allowedBy(); a != nil {
			t.Errorf("before any answer, allowed by %+v", a)
		}

		ed.SetAnswer(func(context.Context, *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
			return &protocol.PermissionResponse{Decision: protocol.AllowAlways, Scope: protocol.ScopeLocal}, nil
		})
		mark := ed.Mark()
		if r := execute(t, ed, call("c1", "mcp__srv__write", `{}`)); r.IsError || r.Decision != protocol.DecisionAsked {
			t.Fatalf("write, allowed always: %+v (%s)", r, r.Text())
		}
		local := env.Sandbox.Path("project/.freecode/settings.local.json")
		want := &protocol.AllowedBy{Rule: "mcp__srv__write", Source: "local", Path: local}
		awaitAllowedBy := func(want *protocol.AllowedBy) {
			t.Helper()
			for {
				ed.AwaitToolsChanged(func(tc protocol.ToolsChanged) bool { return tc.Reason == "rules" })
				if cmp.Equal(want, allowedBy()) {
					return
				}
			}
		}
		awaitAllowedBy(want)

		ed.SetAnswer(servertest.Reply(protocol.Deny))
		if r := execute(t, ed, call("c2", "mcp__srv__write", `{}`)); r.IsError || r.Decision != protocol.DecisionAllowed {
			t.Errorf("write once allowed always: %+v (%s)", r, r.Text())
		}

		res, err := ed.RemoveAllow(t.Context(), "mcp__srv__write", protocol.ScopeLocal)
		if err != nil || res.Path != local || !res.Removed {
			t.Fatalf("removeAllow = %+v, %v; want %s, removed", res, err, local)
		}
		if data, _ := os.ReadFile(local); strings.Contains(string(data), "mcp__srv__write") {
			t.Errorf("the rule is still in the file:\n%s", data)
		}
		awaitAllowedBy(nil)
		if r := execute(t, ed, call("c3", "mcp__srv__write", `{}`)); r.Decision != protocol.DecisionDenied {
			t.Errorf("write after the undo, the user denying: %+v (%s)", r, r.Text())
		}
		if n := len(ed.AwaitPrompts(2)); n != 2 {
			t.Errorf("%d prompts, want 2: the first call's and the one after the undo", n)
		}
		if len(ed.Since(mark, protocol.NotifyToolsChanged)) < 2 {
			t.Error("fewer than two freecode/tools/changed: one for the rule written, one for it taken back")
		}

		_, err = ed.RemoveAllow(t.Context(), "mcp__srv__write", "project")
		wantCode(t, "removeAllow with scope project", err, jsonrpc2.InvalidParams, "scope")
	})
}
