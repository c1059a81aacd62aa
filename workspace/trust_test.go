package workspace

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
)

// A trusted project's rule file that gains an allow rule by another hand
// (a pull, an editor, a project server that may write the project) does
// not loosen the rules: the destructive tool the rule would allow is still
// refused, the change is the project's PendingRules, and it applies once
// accepted by the hash it was shown with. "Always allow for this project"
// never waits. Revoking trust forgets what was accepted.
func TestRulesAwaitReview(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // the record is the user's
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	writeRaw(t, e.localRules(), `{"permissions": {"deny": ["mcp__srv__crash"]}}`)
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)
	if err := w.SetTrusted(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.Decision != orchestrator.DecisionDenied || !strings.Contains(resultText(r), "no one to ask") {
		t.Fatalf("write in a trusted project without an allow rule: %+v", r)
	}

	writeRaw(t, e.localRules(), `{"permissions": {"allow": ["mcp__*"]}}`)
	ev := await(t, sub, "rules awaiting review", func(ev *ProjectEvent) bool { return ev.Project.PendingRules != nil })
	want := []permissions.FileChange{{Path: e.localRules(), Source: permissions.SourceLocal,
		Allow: []string{"mcp__*"}, Deny: []string{"mcp__srv__crash"}}}
	if diff := cmp.Diff(want, ev.Project.PendingRules.Files); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if p := w.Project(); !p.Trusted || p.PendingRules == nil || p.PendingRules.Hash != ev.Project.PendingRules.Hash {
		t.Errorf("Project() = %+v", p)
	}
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.Decision != orchestrator.DecisionDenied {
		t.Errorf("write after another hand allowed mcp__*: %+v", r)
	}
	if r := call(t, w, "mcp__srv__crash", `{}`, allowOnce); r.Decision != orchestrator.DecisionDenied || !strings.Contains(resultText(r), "mcp__srv__crash") {
		t.Errorf("crash after another hand took its deny rule out: %+v", r)
	}
	probs := w.Problems()
	if len(probs) != 1 || probs[0].Path != e.localRules() || len(probs[0].Problems) != 2 {
		t.Errorf("problems: %+v", probs)
	}

	if err := w.AcceptRules(t.Context(), strings.Repeat("0", 64)); !errors.Is(err, ErrRulesChanged) {
		t.Errorf("AcceptRules(another hash) = %v, want ErrRulesChanged", err)
	}
	if err := w.AcceptRules(t.Context(), ev.Project.PendingRules.Hash); err != nil {
		t.Fatal(err)
	}
	if p := w.Project(); p.PendingRules != nil {
		t.Errorf("pending after accepting: %+v", p.PendingRules)
	}
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.IsError || r.Decision != orchestrator.DecisionAllowed {
		t.Errorf("write once mcp__* is accepted: %+v", r)
	}

	// An ask rule added applies at once; accepted, it is held.
	writeRaw(t, e.localRules(), `{"permissions": {"ask": ["mcp__srv__write"]}}`)
	await(t, sub, "the ask rule", func(ev *RulesChangedEvent) bool {
		return slices.ContainsFunc(ev.Rules, func(r permissions.Rule) bool { return r.Effect == permissions.Ask })
	})
	if err := w.SetTrusted(t.Context(), true); err != nil { // trusting again accepts
		t.Fatal(err)
	}
	writeRaw(t, e.localRules(), `{}`)
	await(t, sub, "the ask rule held", func(ev *ProjectEvent) bool { return ev.Project.PendingRules != nil })
	if err := w.SetTrusted(t.Context(), true); err != nil {
		t.Fatal(err)
	}

	// The user's own "always allow" is written and applies: nothing waits.
	always := orchestrator.ApproverFunc(func(context.Context, orchestrator.Request) (orchestrator.Answer, error) {
		return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeLocal}, nil
	})
	if r := call(t, w, "mcp__srv__write", `{}`, always); r.IsError {
		t.Fatalf("always allow: %+v", r)
	}
	await(t, sub, "the always-allow rule", func(ev *RulesChangedEvent) bool {
		return slices.ContainsFunc(ev.Rules, func(r permissions.Rule) bool {
			return r.Pattern == "mcp__srv__write" && r.Source == permissions.SourceLocal
		})
	})
	if p := w.Project(); p.PendingRules != nil {
		t.Errorf("FreeCode's own rule awaits review: %+v", p.PendingRules)
	}

	if err := w.SetTrusted(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	if acc, err := permissions.ReadAccepted(e.root); acc != nil || err != nil {
		t.Errorf("the record after revoking: %+v, %v", acc, err)
	}
}

// A project trusted before FreeCode kept the rules the user accepted has
// its rules as they are at the first load as accepted, recorded once.
func TestRulesAdoptedOnce(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, map[string]any{"trustedProjects": []string{e.root}}))
	writeRaw(t, e.localRules(), `{"permissions": {"allow": ["mcp__srv__write"]}}`)
	w := e.open(t)
	settle(t, w)
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.IsError || r.Decision != orchestrator.DecisionAllowed {
		t.Errorf("write in a project trusted before records: %+v", r)
	}
	acc, err := permissions.ReadAccepted(e.root)
	if err != nil || acc == nil || !cmp.Equal(acc.Local.Allow, []string{"mcp__srv__write"}) {
		t.Errorf("the adopted record: %+v, %v", acc, err)
	}
	if p := w.Project(); p.PendingRules != nil {
		t.Errorf("pending after adopting: %+v", p.PendingRules)
	}
	if _, err := os.Stat(w.files.accepted); err != nil {
		t.Error(err)
	}
}
