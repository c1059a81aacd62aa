package server_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
