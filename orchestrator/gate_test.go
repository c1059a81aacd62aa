package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/permissions"
)

// gateEnv is a registry with one read-only and one destructive tool and
// rule files in temporary directories.
type gateEnv struct {
	fc                  *fakeCaller
	reg                 *Registry
	userDir, projectDir string
}

func newGateEnv(t *testing.T, userRules string) *gateEnv {
	t.Helper()
	e := &gateEnv{fc: newFakeCaller(), reg: NewRegistry(nil), userDir: t.TempDir(), projectDir: t.TempDir()}
	e.reg.SetServerTools("demo", []*mcpsdk.Tool{tool("read_file", true, ""), tool("delete_file", false, "")}, e.fc)
	if userRules != "" {
		if err := os.WriteFile(filepath.Join(e.userDir, "settings.json"), []byte(userRules), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *gateEnv) load(t *testing.T) *permissions.Set {
	t.Helper()
	set, _, err := permissions.Load(permissions.LoadOptions{UserFile: filepath.Join(e.userDir, "settings.json"), ProjectDir: e.projectDir, Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func (e *gateEnv) orchestrator(t *testing.T) *Orchestrator {
	return New(e.reg, &Options{Permissions: e.load(t), UserDir: e.userDir, ProjectDir: e.projectDir})
}

func TestGateRules(t *testing.T) {
	tests := []struct {
		name      string
		rules     string
		tool      string
		approver  Approver
		wantDec   Decision
		wantText  []string
		wantCalls int
	}{
		{name: "deny names the rule", rules: `{"permissions":{"deny":["mcp__demo"]}}`, tool: "read_file",
			approver: &recordingApprover{answer: Answer{Decision: AllowOnce}},
			wantDec:  DecisionDenied, wantText: []string{`denied by rule "mcp__demo" in `, "settings.json"}},
		{name: "allow rule runs unasked", rules: `{"permissions":{"allow":["mcp__demo__delete_*"]}}`, tool: "delete_file",
			wantDec: DecisionAllowed, wantText: []string{"ok delete_file"}, wantCalls: 1},
		{name: "ask rule beats allow, nobody to ask", rules: `{"permissions":{"allow":["mcp__demo"],"ask":["mcp__demo__read_file"]}}`, tool: "read_file",
			wantDec: DecisionDenied, wantText: []string{`remove "mcp__demo__read_file" from permissions.ask`}},
		{name: "ask rule, user allows", rules: `{"permissions":{"ask":["mcp__demo__read_file"]}}`, tool: "read_file",
			approver: &recordingApprover{answer: Answer{Decision: AllowOnce}},
			wantDec:  DecisionAsked, wantText: []string{"ok read_file"}, wantCalls: 1},
		{name: "no rule, not read-only, nobody to ask", tool: "delete_file",
			wantDec: DecisionDenied, wantText: []string{`add "mcp__demo__delete_file" to permissions.allow in `, "no rule; tool is not read-only"}},
		{name: "no rule, read-only", tool: "read_file", wantDec: DecisionAllowed, wantText: []string{"ok read_file"}, wantCalls: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGateEnv(t, tc.rules)
			rs := e.orchestrator(t).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__" + tc.tool}}, &ExecOptions{Approver: tc.approver})
			if rs[0].Decision != tc.wantDec {
				t.Errorf("decision = %s, want %s (%s)", rs[0].Decision, tc.wantDec, rs[0].Text())
			}
			for _, w := range tc.wantText {
				if !strings.Contains(rs[0].Text(), w) {
					t.Errorf("text %q does not contain %q", rs[0].Text(), w)
				}
			}
			if got := e.fc.count(tc.tool); got != tc.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tc.wantCalls)
			}
		})
	}
}

// TestAllowAlways: an "always allow" answer allows the tool for the rest of
// the session at once and writes an allow rule to the chosen scope's file.
func TestAllowAlways(t *testing.T) {
	for _, scope := range []Scope{ScopeUser, ScopeLocal} {
		t.Run(string(scope), func(t *testing.T) {
			e := newGateEnv(t, "// my settings\n{\"theme\": \"dark\"}\n")
			o := e.orchestrator(t)
			ap := &recordingApprover{answer: Answer{Decision: AllowAlways, Scope: scope}}
			call := []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file", Arguments: json.RawMessage(`{}`)}}
			for range 2 {
				rs := o.Execute(t.Context(), call, &ExecOptions{Approver: ap})
				mustNotError(t, rs[0])
			}
			if diff := cmp.Diff([]string{"mcp__demo__delete_file"}, ap.asked()); diff != "" {
				t.Errorf("asked (-want +got):\n%s", diff)
			}
			file := filepath.Join(e.userDir, "settings.json")
			if scope == ScopeLocal {
				file = filepath.Join(e.projectDir, ".freecode", "settings.local.json")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"mcp__demo__delete_file"`) {
				t.Errorf("%s has no allow rule:\n%s", file, data)
			}
			if scope == ScopeUser && !strings.Contains(string(data), "// my settings") {
				t.Errorf("comment lost:\n%s", data)
			}
			// A new session loads the rule from the file: no prompt.
			rs := e.orchestrator(t).Execute(t.Context(), call, nil)
			if rs[0].Decision != DecisionAllowed {
				t.Errorf("after reload: %s %q", rs[0].Decision, rs[0].Text())
			}
		})
	}
}

// TestAliasNeverMatchesRules: a call by alias is judged by the id's rules;
// a rule naming the alias covers nothing.
func TestAliasNeverMatchesRules(t *testing.T) {
	long := strings.Repeat("x", 70)
	id := "mcp__demo__" + long
	alias := aliasFor(id)
	for _, tc := range []struct {
		rules string
		want  Decision
	}{
		{`{"permissions":{"deny":["` + id + `"]}}`, DecisionDenied},
		{`{"permissions":{"deny":["` + alias + `"]}}`, DecisionAllowed},
	} {
		e := newGateEnv(t, tc.rules)
		e.reg.SetServerTools("demo", []*mcpsdk.Tool{tool(long, true, "")}, e.fc)
		rs := e.orchestrator(t).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: alias}}, nil)
		if rs[0].Decision != tc.want {
			t.Errorf("rules %s: call by alias = %s %q, want %s", tc.rules, rs[0].Decision, rs[0].Text(), tc.want)
		}
	}
}
