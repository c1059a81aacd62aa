package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/permissions"
)

// gateEnv is a registry with one read-only and one destructive tool and
// rule files in temporary directories.
type gateEnv struct {
	fc                  *fakeRunner
	reg                 *Registry
	userDir, projectDir string
}

func newGateEnv(t *testing.T, userRules string) *gateEnv {
	t.Helper()
	e := &gateEnv{fc: newFakeRunner(), reg: NewRegistry(nil), userDir: t.TempDir(), projectDir: t.TempDir()}
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

// TestAliasRules: a rule may name a tool by its alias, the name the model
// and `freecode tools defs` show for an id over 64 characters, and means
// that tool whichever name the call uses: a denied call never reaches the
// (real, go-sdk) server.
func TestAliasRules(t *testing.T) {
	m := newMemServer(t)
	read, del := strings.Repeat("r", 70), strings.Repeat("d", 70)
	for _, name := range []string{read, del} {
		var ann *mcpsdk.ToolAnnotations
		if name == read {
			ann = &mcpsdk.ToolAnnotations{ReadOnlyHint: true}
		}
		m.addTool(t, &mcpsdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}, Annotations: ann},
			func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				m.count(name).Add(1)
				return textResult("ok"), nil
			})
	}
	readID, delID := "mcp__demo__"+read, "mcp__demo__"+del
	readAlias, delAlias := toolid.Alias(readID), toolid.Alias(delID)
	rules := func(effect, pattern string) string { return `{"permissions":{"` + effect + `":["` + pattern + `"]}}` }
	tests := []struct {
		name     string
		rules    string
		tool     string // the name the call uses
		wantDec  Decision
		wantText string
		wantRuns int32
	}{
		{"deny by id, call by alias", rules("deny", readID), readAlias, DecisionDenied, `denied by rule "` + readID + `"`, 0},
		{"deny by alias, call by alias", rules("deny", readAlias), readAlias, DecisionDenied, `denied by rule "` + readAlias + `"`, 0},
		{"deny by alias, call by id", rules("deny", readAlias), readID, DecisionDenied, `denied by rule "` + readAlias + `"`, 0},
		{"ask by alias, nobody to ask", rules("ask", readAlias), readAlias, DecisionDenied, `remove "` + readAlias + `" from permissions.ask`, 0},
		{"allow by alias runs unasked", rules("allow", delAlias), delAlias, DecisionAllowed, "ok", 1},
		{"another tool's alias covers nothing of this one", rules("deny", delAlias), readAlias, DecisionAllowed, "ok", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGateEnv(t, tc.rules)
			reg := NewRegistry(nil)
			reg.SetServerTools("demo", m.tools(t), m)
			target, _ := reg.Lookup(tc.tool)
			if target == nil || target.Alias() == "" {
				t.Fatalf("%s is not a long tool's name", tc.tool)
			}
			before := m.count(target.Name).Load()
			rs := New(reg, &Options{Permissions: e.load(t), UserDir: e.userDir, ProjectDir: e.projectDir}).
				Execute(t.Context(), []ToolCall{{CallID: "1", Tool: tc.tool}}, nil)
			if rs[0].Decision != tc.wantDec || !strings.Contains(rs[0].Text(), tc.wantText) {
				t.Errorf("call = %s %q, want %s with %q", rs[0].Decision, rs[0].Text(), tc.wantDec, tc.wantText)
			}
			if got := m.count(target.Name).Load() - before; got != tc.wantRuns {
				t.Errorf("the server saw %d calls, want %d", got, tc.wantRuns)
			}
		})
	}

	// A destructive tool called by alias: the user is asked about the id,
	// the name "always allow" writes.
	e := newGateEnv(t, "")
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", m.tools(t), m)
	ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	rs := New(reg, &Options{Permissions: e.load(t)}).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: delAlias}}, &ExecOptions{Approver: ap})
	mustNotError(t, rs[0])
	if diff := cmp.Diff([]string{delID}, ap.asked()); diff != "" {
		t.Errorf("approver asked about (-want +got):\n%s", diff)
	}
}

// TestMovedAliasStillDenied: a server that adds a tool named like a denied
// tool's alias moves that tool to another alias; the deny rule written
// with the old alias still covers it (and the newcomer, whose id it is).
func TestMovedAliasStillDenied(t *testing.T) {
	long := strings.Repeat("y", 70)
	alias := toolid.Alias("mcp__demo__" + long)
	squatter := strings.TrimPrefix(alias, "mcp__demo__")
	e := newGateEnv(t, `{"permissions":{"deny":["`+alias+`"]}}`)
	e.reg.SetServerTools("demo", []*mcpsdk.Tool{tool(long, true, ""), tool(squatter, true, "")}, e.fc)
	lt, _ := e.reg.Lookup("mcp__demo__" + long)
	if lt == nil || lt.Alias() == alias {
		t.Fatalf("test setup: the long tool kept alias %q", alias)
	}
	rs := e.orchestrator(t).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: lt.Alias()}, {CallID: "2", Tool: alias}}, nil)
	if diff := cmp.Diff([]Decision{DecisionDenied, DecisionDenied}, decisions(rs)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if n := e.fc.count(long) + e.fc.count(squatter); n != 0 {
		t.Errorf("the server saw %d calls", n)
	}
}

// TestAllowAlwaysWarnings: an "always allow" that cannot last as the user
// meant holds for the session and says why: the project is not trusted
// (its local allow rules are ignored until `freecode trust`), or the rule
// could not be saved. Otherwise nothing is said.
func TestAllowAlwaysWarnings(t *testing.T) {
	tests := []struct {
		name       string
		trusted    bool
		scope      Scope
		userRules  string // "" writes none
		want       string // a substring of the one warning; "" for none
		wantReload Decision
	}{
		{name: "local, untrusted", scope: ScopeLocal, want: "takes effect once the project is trusted (`freecode trust`)", wantReload: DecisionDenied},
		{name: "local, trusted", trusted: true, scope: ScopeLocal, wantReload: DecisionAllowed},
		{name: "user, untrusted", scope: ScopeUser, wantReload: DecisionAllowed},
		{name: "local file links to the user's", trusted: true, scope: ScopeLocal, want: "allowed for this session only: the local allow rule could not be saved", wantReload: DecisionDenied},
		{name: "user file broken", trusted: true, scope: ScopeUser, userRules: `{"permissions":`, want: "allowed for this session only: the user allow rule could not be saved", wantReload: DecisionDenied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newGateEnv(t, tc.userRules)
			if strings.Contains(tc.name, "links") {
				// A cloned repository's trap: its local rule file is the
				// user's, so a project rule would apply everywhere.
				if err := os.WriteFile(filepath.Join(e.userDir, "settings.json"), []byte("{}"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(e.projectDir, ".freecode"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(e.userDir, "settings.json"), filepath.Join(e.projectDir, ".freecode", "settings.local.json")); err != nil {
					t.Skip(err)
				}
			}
			load := func() *permissions.Set {
				set, _, _ := permissions.Load(permissions.LoadOptions{UserFile: filepath.Join(e.userDir, "settings.json"), ProjectDir: e.projectDir, Trusted: tc.trusted})
				return set
			}
			o := New(e.reg, &Options{Permissions: load(), UserDir: e.userDir, ProjectDir: e.projectDir})
			var warnings []string
			eo := &ExecOptions{
				Approver:  &recordingApprover{answer: Answer{Decision: AllowAlways, Scope: tc.scope}},
				OnWarning: func(callID, msg string) { warnings = append(warnings, callID+": "+msg) },
			}
			call := []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}
			rs := o.Execute(t.Context(), call, eo)
			mustNotError(t, rs[0])
			switch {
			case tc.want == "" && len(warnings) != 0:
				t.Errorf("warnings = %q, want none", warnings)
			case tc.want != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], "1: mcp__demo__delete_file ") || !strings.Contains(warnings[0], tc.want)):
				t.Errorf("warnings = %q, want one for call 1 containing %q", warnings, tc.want)
			}
			// The session allow holds either way: no second prompt.
			rs = o.Execute(t.Context(), call, nil)
			if rs[0].Decision != DecisionAllowed {
				t.Errorf("second call in the session: %s %q", rs[0].Decision, rs[0].Text())
			}
			// A new session has only what was saved and applies.
			rs = New(e.reg, &Options{Permissions: load()}).Execute(t.Context(), call, nil)
			if rs[0].Decision != tc.wantReload {
				t.Errorf("new session: %s %q, want %s", rs[0].Decision, rs[0].Text(), tc.wantReload)
			}
		})
	}
}

// TestAllowAlwaysWithoutRules: with no rule set loaded, "always allow"
// still holds for the session.
func TestAllowAlwaysWithoutRules(t *testing.T) {
	e := newGateEnv(t, "")
	o := New(e.reg, &Options{UserDir: e.userDir})
	ap := &recordingApprover{answer: Answer{Decision: AllowAlways, Scope: ScopeUser}}
	call := []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file"}}
	for range 2 {
		mustNotError(t, o.Execute(t.Context(), call, &ExecOptions{Approver: ap})[0])
	}
	if diff := cmp.Diff([]string{"mcp__demo__delete_file"}, ap.asked()); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
}

// TestApprovalShowsWhatRuns: the user approves the arguments the server
// will get. A repeated key in the model's raw JSON must not show one value
// while the call carries another.
func TestApprovalShowsWhatRuns(t *testing.T) {
	e := newGateEnv(t, "")
	var got any
	e.fc.handle("delete_file", func(_ context.Context, args map[string]any, _ func(Progress)) (*mcpsdk.CallToolResult, error) {
		got = args["path"]
		return textResult("deleted"), nil
	})
	ap := &recordingApprover{answer: Answer{Decision: AllowOnce}}
	raw := json.RawMessage(`{"path":"notes.txt","n":12345678901234567890,"note":"<b> & \u2028","path":"/home/me/.ssh/id_ed25519"}`)
	rs := e.orchestrator(t).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__demo__delete_file", Arguments: raw}}, &ExecOptions{Approver: ap})
	mustNotError(t, rs[0])
	if want := `{"n":12345678901234567890,"note":"<b> & \u2028","path":"/home/me/.ssh/id_ed25519"}`; string(ap.reqs[0].Arguments) != want {
		t.Errorf("approver was shown %s, want %s", ap.reqs[0].Arguments, want)
	}
	if got != "/home/me/.ssh/id_ed25519" {
		t.Errorf("server got path %v", got)
	}
}
