package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/permissions"
)

const managedFile = "/etc/freecode/managed-settings.json"

// loadManaged loads e's rule files with the organization's rules.
func (e *gateEnv) loadManaged(t *testing.T, managed []config.ManagedRule, only bool, message string) *permissions.Set {
	t.Helper()
	set, _, err := permissions.Load(permissions.LoadOptions{
		UserFile: filepath.Join(e.userDir, "settings.json"), ProjectDir: e.projectDir, Trusted: true,
		Managed: managed, ManagedOnly: only, ManagedPath: managedFile, ManagedMessage: message,
	})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func managedRule(effect, pattern string) config.ManagedRule {
	return config.ManagedRule{Pattern: pattern, Effect: effect, Path: managedFile, Line: 3, Col: 5}
}

// A managed deny refuses in the organization's words, whatever the user
// allowed or would answer, and a definition under review is not asked
// about: accepting it could not let the call run.
func TestManagedDeny(t *testing.T) {
	const deny = `mcp__demo__delete_file was denied: denied by your organization's rule "mcp__demo" in ` + managedFile
	tests := []struct {
		name    string
		message string
		review  bool
		want    string
	}{
		{name: "user allow", want: deny},
		{name: "the organization's message", message: "ask #it-help for access", want: deny + " — ask #it-help for access"},
		{name: "definition under review", review: true, want: deny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGateEnv(t, `{"permissions":{"allow":["mcp__demo"]}}`)
			fr := &fakeReviewer{}
			if tc.review {
				e.reg.SetReviewedTools("demo", []ReviewedTool{
					{Tool: tool("read_file", true, "")},
					{Tool: tool("delete_file", false, ""), Review: changedReview(t, false)},
				}, e.fc, "")
			}
			o := New(e.reg, &Options{Permissions: e.loadManaged(t, []config.ManagedRule{managedRule("deny", "mcp__demo")}, false, tc.message),
				UserDir: e.userDir, ProjectDir: e.projectDir, Reviewer: fr})
			ap := &recordingApprover{answer: Answer{Decision: AllowAlways, Scope: ScopeUser, AcceptDefinition: true}}
			for range 2 {
				rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, &ExecOptions{Approver: ap})
				if rs[0].Decision != DecisionDenied || rs[0].Text() != tc.want {
					t.Errorf("result %s %q, want denied %q", rs[0].Decision, rs[0].Text(), tc.want)
				}
			}
			if len(ap.asked()) != 0 || len(fr.accepted) != 0 || e.fc.count("delete_file") != 0 {
				t.Errorf("asked %v, accepted %v, the server saw %d calls: want none", ap.asked(), fr.accepted, e.fc.count("delete_file"))
			}
		})
	}
}

// A managed ask asks at every call: an "always allow" answer lets that
// call run and is neither kept for the session nor saved, and the question
// says so (NoAlwaysAllow). Nothing else lifts it: the user's allow rule,
// an accepted definition, nobody to ask.
func TestManagedAskAsksEveryTime(t *testing.T) {
	const userRules = `{"permissions":{"allow":["mcp__demo"]}}`
	e := newGateEnv(t, userRules)
	fr := &fakeReviewer{}
	rv := changedReview(t, false)
	e.reg.SetReviewedTools("demo", []ReviewedTool{
		{Tool: tool("read_file", true, "")},
		{Tool: tool("delete_file", false, ""), Review: rv},
	}, e.fc, "")
	set := e.loadManaged(t, []config.ManagedRule{managedRule("ask", "mcp__demo__delete_file")}, false, "")
	o := New(e.reg, &Options{Permissions: set, UserDir: e.userDir, ProjectDir: e.projectDir, Reviewer: fr})
	var warnings []string
	call := []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}
	answers := []Answer{
		{Decision: AllowOnce, AcceptDefinition: true},
		{Decision: AllowAlways, Scope: ScopeUser},
		{Decision: AllowAlways, Scope: ScopeLocal},
	}
	for i, ans := range answers {
		if i == 1 {
			fr.current = func(*Tool) *Review { return nil } // the change accepted
		}
		ap := &recordingApprover{answer: ans}
		rs := o.Execute(t.Context(), call, &ExecOptions{Approver: ap,
			OnWarning: func(_, msg string) { warnings = append(warnings, msg) }})
		if rs[0].Decision != DecisionAsked {
			t.Fatalf("call %d: %s %q, want asked", i, rs[0].Decision, rs[0].Text())
		}
		if len(ap.reqs) != 1 {
			t.Fatalf("call %d: asked %d times, want once", i, len(ap.reqs))
		}
		if i == 0 {
			continue // asked for the review; the rule's question follows
		}
		req := ap.reqs[0]
		wantReason := `your organization's ask rule "mcp__demo__delete_file" in ` + managedFile
		if req.Reason != wantReason || req.NoAlwaysAllow != wantReason+" asks before every call" {
			t.Errorf("call %d: reason %q, noAlwaysAllow %q", i, req.Reason, req.NoAlwaysAllow)
		}
	}
	if diff := cmp.Diff([]string{"mcp__demo__delete_file@" + rv.Hash}, fr.accepted); diff != "" {
		t.Errorf("acceptances (-want +got):\n%s", diff)
	}
	want := `mcp__demo__delete_file was allowed this once only: your organization's ask rule "mcp__demo__delete_file" in ` + managedFile +
		` asks before every call, so the "always allow" answer was neither kept nor saved`
	if diff := cmp.Diff([]string{want, want}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, r := range set.Rules() {
		if r.Source == permissions.SourceSession {
			t.Errorf("a session rule was kept: %+v", r)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(e.userDir, "settings.json")); string(data) != userRules {
		t.Errorf("the user's file was written:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(e.projectDir, ".freecode", "settings.local.json")); err == nil {
		t.Error("the project's local file was written")
	}

	rs := o.Execute(t.Context(), call, nil)
	if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "no rule of yours can lift") {
		t.Errorf("nobody to ask: %s %q", rs[0].Decision, rs[0].Text())
	}
	if got := e.fc.count("delete_file"); got != len(answers) {
		t.Errorf("the server saw %d calls, want %d", got, len(answers))
	}
}

// With ManagedOnly the user's allow rules do not apply and an "always
// allow" answer is not offered, kept or saved; the organization's allow
// rules apply.
func TestManagedOnlyAsks(t *testing.T) {
	const userRules = `{"permissions":{"allow":["mcp__demo"]}}`
	e := newGateEnv(t, userRules)
	set := e.loadManaged(t, []config.ManagedRule{managedRule("allow", "mcp__demo__read_file")}, true, "")
	o := New(e.reg, &Options{Permissions: set, UserDir: e.userDir, ProjectDir: e.projectDir})
	ap := &recordingApprover{answer: Answer{Decision: AllowAlways, Scope: ScopeUser}}
	var warnings []string
	eo := &ExecOptions{Approver: ap, OnWarning: func(_, msg string) { warnings = append(warnings, msg) }}
	for range 2 {
		rs := o.Execute(t.Context(), []ToolCall{
			{CallID: "1", Tool: "mcp__demo__delete_file"},
			{CallID: "2", Tool: "mcp__demo__read_file"},
		}, eo)
		if diff := cmp.Diff([]Decision{DecisionAsked, DecisionAllowed}, decisions(rs)); diff != "" {
			t.Fatalf("decisions (-want +got):\n%s", diff)
		}
	}
	if diff := cmp.Diff([]string{"mcp__demo__delete_file", "mcp__demo__delete_file"}, ap.asked()); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	if got := ap.reqs[0].NoAlwaysAllow; got != "your organization allows only its own allow rules" {
		t.Errorf("NoAlwaysAllow = %q", got)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "allowed this once only: your organization allows only its own allow rules") {
		t.Errorf("warnings = %q", warnings)
	}
	if data, _ := os.ReadFile(filepath.Join(e.userDir, "settings.json")); string(data) != userRules {
		t.Errorf("the user's file was written:\n%s", data)
	}
	// With nobody to ask, the denial does not suggest an allow rule that
	// could not apply.
	rs := o.Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, nil)
	if rs[0].Decision != DecisionDenied || !strings.Contains(rs[0].Text(), "so no allow rule of yours would let it run") {
		t.Errorf("nobody to ask: %s %q", rs[0].Decision, rs[0].Text())
	}
}

// Without managed rules an "always allow" is offered, as before.
func TestAlwaysAllowOffered(t *testing.T) {
	e := newGateEnv(t, `{"permissions":{"ask":["mcp__demo__delete_file"]}}`)
	ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	rs := e.orchestrator(t).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}, &ExecOptions{Approver: ap})
	mustNotError(t, rs[0])
	if len(ap.reqs) != 1 || ap.reqs[0].NoAlwaysAllow != "" {
		t.Errorf("requests %+v: want one, offering always allow (the user's own ask rule, which they may take out)", ap.reqs)
	}
}
