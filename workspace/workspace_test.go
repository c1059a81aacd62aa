package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
)

// A rule file edited while the workspace runs decides the next call, with
// no restart; a rule file that stops parsing keeps its last rules.
func TestRuleFileEdit(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)

	const echo, args = "mcp__srv__echo", `{"text":"hi"}`
	if r := call(t, w, echo, args, nil); r.IsError || r.Text() != "hi" {
		t.Fatalf("before any rule: %+v", r)
	}

	steps := []struct {
		name     string
		file     string
		contents string
		rules    []string // patterns in force after the edit
		denied   bool
	}{
		{"user deny added", e.userRules(), `{"permissions": {"deny": ["mcp__srv__echo"]}}`, []string{"mcp__srv__echo"}, true},
		{"user deny removed", e.userRules(), `{"permissions": {}}`, nil, false},
		// An untrusted project's deny rules apply (its allow rules would not).
		{"local deny added", e.localRules(), `{"permissions": {"deny": ["mcp__srv"]}}`, []string{"mcp__srv"}, true},
		{"local deny removed", e.localRules(), `{}`, nil, false},
	}
	for _, s := range steps {
		writeRaw(t, s.file, s.contents)
		ev := await[*RulesChangedEvent](t, sub, s.name+": rules changed", nil)
		var got []string
		for _, r := range ev.Rules {
			got = append(got, r.Pattern)
		}
		if diff := cmp.Diff(s.rules, got); diff != "" {
			t.Errorf("%s: rules (-want +got):\n%s", s.name, diff)
		}
		r := call(t, w, echo, args, nil)
		if r.IsError != s.denied || s.denied != (r.Decision == orchestrator.DecisionDenied) {
			t.Errorf("%s: call %+v, want denied %v", s.name, r, s.denied)
		}
		if s.denied && !strings.Contains(r.Text(), "denied by rule") {
			t.Errorf("%s: denial does not name the rule: %s", s.name, r.Text())
		}
	}

	// A deny rule, then the file breaks: the rule holds, the problem has
	// its line and column; the fix is an empty list.
	writeRaw(t, e.userRules(), `{"permissions": {"deny": ["mcp__srv__echo"]}}`)
	await[*RulesChangedEvent](t, sub, "deny again", nil)
	writeRaw(t, e.userRules(), "{\"permissions\": {\"deny\": [\"mcp__srv__echo\"\n  oops]}}")
	pe := await(t, sub, "problems of settings.json", func(ev *ProblemsEvent) bool { return ev.Path == e.userRules() })
	if len(pe.Problems) != 1 || pe.Problems[0].Line != 2 || pe.Problems[0].Column != 3 || pe.Problems[0].Severity != SeverityError {
		t.Errorf("problems of a broken rule file: %+v, want one error at 2:3", pe.Problems)
	}
	var parseErr *config.ParseError
	if !errors.As(pe.Err, &parseErr) {
		t.Errorf("Err = %v, want a *config.ParseError", pe.Err)
	}
	if r := call(t, w, echo, args, nil); !r.IsError {
		t.Errorf("with the rule file broken, the deny rule no longer holds: %+v", r)
	}
	writeRaw(t, e.userRules(), `{}`)
	pe = await(t, sub, "problems fixed", func(ev *ProblemsEvent) bool { return ev.Path == e.userRules() })
	if pe.Problems == nil || len(pe.Problems) != 0 || pe.Err != nil {
		t.Errorf("problems after the fix: %+v, %v; want an empty list", pe.Problems, pe.Err)
	}
	await[*RulesChangedEvent](t, sub, "rules after the fix", nil)
	if r := call(t, w, echo, args, nil); r.IsError {
		t.Errorf("after the fix: %+v", r)
	}
}

// Config edits start, change and stop servers, each seen as status events;
// the result cap follows the config.
func TestConfigEdit(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection(nil, map[string]any{"maxResultChars": 5}))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()

	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a")}, map[string]any{"maxResultChars": 5}))
	await(t, sub, "a connecting", statusIs("a", "connecting"))
	// A Conn hands over its tools, then reports connected, and the
	// definitions are rebuilt meanwhile: the two events come in either
	// order.
	var st *StatusEvent
	var tc *ToolsChangedEvent
	for st == nil || tc == nil {
		switch ev := await[Event](t, sub, "a connected and its tools", nil).(type) {
		case *StatusEvent:
			if ev.Status.Name == "a" && ev.Status.State.String() == "connected" {
				st = ev
			}
		case *ToolsChangedEvent:
			if ev.Server == "a" {
				tc = ev
			}
		}
	}
	if st.Status.ToolCount != 4 || st.Status.PID == 0 {
		t.Errorf("a connected: %+v", st.Status)
	}
	entry, _, err := w.Definitions(t.Context(), defscache.FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if tc.Hashes[defscache.FormatAnthropic] != entry.Hash || entry.Count != 4 {
		t.Errorf("tools changed hash %s, definitions %s with %d tools", tc.Hashes[defscache.FormatAnthropic], entry.Hash, entry.Count)
	}
	r := call(t, w, "mcp__a__echo", `{"text":"hello world"}`, nil)
	if r.Truncated == nil || r.Truncated.ShownChars != 5 {
		t.Errorf("with maxResultChars 5: %+v", r)
	}

	// A second server and a larger cap.
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), server(t, "b")}, map[string]any{"maxResultChars": 1000}))
	await(t, sub, "b connected", statusIs("b", "connected"))
	if r := call(t, w, "mcp__a__echo", `{"text":"hello world"}`, nil); r.Truncated != nil || r.Text() != "hello world" {
		t.Errorf("with maxResultChars 1000: %+v", r)
	}

	// a removed: its last status says so, its tools gone, its process
	// reaped. What its Conn said as it stopped came before its tools
	// went, so it would be among the statuses read by then.
	pid := st.Status.PID
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "b")}, nil))
	var last []string
	await(t, sub, "a's tools removed", func(ev Event) bool {
		if st, ok := ev.(*StatusEvent); ok && st.Status.Name == "a" {
			last = append(last, fmt.Sprintf("%v removed=%v", st.Status.State, st.Removed))
		}
		tc, ok := ev.(*ToolsChangedEvent)
		return ok && tc.Server == "a" && tc.Reason == "removed"
	})
	if diff := cmp.Diff([]string{"stopped removed=true"}, last); diff != "" {
		t.Errorf("a's statuses after its removal (-want +got):\n%s", diff)
	}
	if got := names(w.Statuses()); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("statuses after removing a: %v", got)
	}
	if tools := w.Tools("a"); len(tools) != 0 {
		t.Errorf("a's tools after its removal: %v", tools)
	}
	proctest.WantGone(t, pid, "after a's removal")
}

// A server removed from the config or the project's file is told as
// removed whatever its state: a stopped server's Conn has nothing more to
// say, and a pending project server has no Conn.
func TestServerRemoved(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), server(t, "b")}, nil))
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)
	if _, err := w.StopServer(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}

	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "b")}, nil))
	got := await(t, sub, "a removed", func(ev *StatusEvent) bool { return ev.Status.Name == "a" && ev.Removed })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.Status{Name: "a", Scope: config.ScopeUser, Type: config.TypeLocal, Transport: "stdio", State: mcp.StateStopped, Command: []string{exe}}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Errorf("a's last status (-want +got):\n%s", diff)
	}

	writeJSON(t, e.projectFile(), mcpSection(nil, nil))
	await(t, sub, "p removed", func(ev *StatusEvent) bool { return ev.Status.Name == "p" && ev.Removed })
	if got := names(w.Statuses()); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("statuses after the removals: %v", got)
	}
}

func names(sts []mcp.Status) []string {
	var out []string
	for _, st := range sts {
		out = append(out, st.Name)
	}
	return out
}

// A project's server never starts before approval; approved, it connects;
// its entry changed by the repository, it awaits approval again; revoked,
// it stops.
func TestProjectServerApproval(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The status shows what approving would run, and with what.
	project, err := config.LoadProject(e.root)
	if err != nil {
		t.Fatal(err)
	}
	want := []mcp.Status{{
		Name: "p", Scope: config.ScopeProject, Type: config.TypeLocal, Transport: "stdio", State: mcp.StateAwaitingApproval, Command: []string{exe},
		Approval: &mcp.Approval{EntryHash: config.EntryHash(project[0]), Command: []string{exe}, Env: map[string]string{testServerEnv: "1"},
			Sandbox: sandbox.DescribeServer(project[0], sandbox.HostOf(nil))},
	}}
	// A project's server is sandboxed though its entry says nothing.
	if !strings.HasPrefix(want[0].Approval.Sandbox, "sandboxed: ") {
		t.Errorf("the approval's sandbox: %q", want[0].Approval.Sandbox)
	}
	sts := w.Statuses()
	if diff := cmp.Diff(want, sts); diff != "" {
		t.Errorf("statuses before approval (-want +got):\n%s", diff)
	}
	if _, err := w.Approve(t.Context(), "p", true, ""); err == nil {
		t.Errorf("approving without the entry's hash succeeded")
	}
	if _, err := w.StartServer(t.Context(), "p"); !errors.Is(err, ErrAwaitingApproval) {
		t.Errorf("StartServer before approval: %v, want ErrAwaitingApproval", err)
	}
	if tools := w.Tools("p"); len(tools) != 0 {
		t.Errorf("tools before approval: %v", tools)
	}

	st, err := w.Approve(t.Context(), "p", true, sts[0].Approval.EntryHash)
	if err != nil || st.State != mcp.StateConnected || st.ToolCount != 4 || st.Scope != config.ScopeProject {
		t.Fatalf("Approve: %+v, %v", st, err)
	}
	await(t, sub, "p connected", statusIs("p", "connected"))
	cfg, err := config.Load(e.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Approved(config.ApprovalKey(e.root, project[0])) {
		t.Errorf("the approval is not in the config file: %v", cfg.Approvals)
	}
	if r := call(t, w, "mcp__p__echo", `{"text":"x"}`, nil); r.IsError {
		t.Errorf("call after approval: %+v", r)
	}

	// The repository changes the entry's command: that is not what was
	// approved.
	changed := server(t, "p")
	changed["command"] = append(changed["command"].([]string), "--changed")
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{changed}, nil))
	await(t, sub, "p awaiting approval again", statusIs("p", "awaitingApproval"))
	await(t, sub, "p's tools removed", func(ev *ToolsChangedEvent) bool { return ev.Server == "p" })
	if sts := w.Statuses(); len(sts) != 1 || sts[0].State != mcp.StateAwaitingApproval {
		t.Errorf("statuses after the entry changed: %+v", sts)
	}

	// Back to the approved entry, then revoked.
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	await(t, sub, "p connected again", statusIs("p", "connected"))
	st, err = w.Approve(t.Context(), "p", false, "")
	if err != nil || st.State != mcp.StateAwaitingApproval {
		t.Errorf("revoking: %+v, %v", st, err)
	}
	await(t, sub, "p awaiting approval after revoking", statusIs("p", "awaitingApproval"))

	if _, err := w.Approve(t.Context(), "nope", true, "0"); !errors.Is(err, mcp.ErrNoServer) {
		t.Errorf("approving an unknown server: %v", err)
	}
}

// An entry the repository changes after its status was shown is not
// approved by the hash shown, even before the watcher reported the change:
// Approve reads the file again, refuses, and writes nothing.
func TestApproveRefusesChangedEntry(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	w := e.open(t)
	settle(t, w)
	sts := w.Statuses()
	if len(sts) != 1 || sts[0].Approval == nil {
		t.Fatalf("statuses: %+v", sts)
	}
	shown := sts[0].Approval.EntryHash
	before, err := os.ReadFile(e.cfgPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}

	swapped := server(t, "p")
	swapped["inheritEnv"] = true
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{swapped}, nil))
	st, err := w.Approve(t.Context(), "p", true, shown)
	if !errors.Is(err, ErrEntryChanged) {
		t.Fatalf("approving a swapped entry by the hash shown: %+v, %v", st, err)
	}
	if st.State != mcp.StateAwaitingApproval || st.Approval == nil || !st.Approval.InheritEnv || st.Approval.EntryHash == shown {
		t.Errorf("the status with the refusal is not the swapped entry's: %+v", st)
	}
	after, err := os.ReadFile(e.cfgPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the refused approval changed the config file:\n%s", after)
	}
	if _, err := w.Approve(t.Context(), "p", false, shown); !errors.Is(err, ErrEntryChanged) {
		t.Errorf("revoking by the old hash: %v", err)
	}
}

// A workspace whose project is the user's home: the project's
// .freecode/settings.json is the user's settings.json, read once, as the
// user's. Its rules are not counted twice, nor held to the project's trust;
// servers in it do not run a second time as a project's awaiting approval.
func TestProjectAtHome(t *testing.T) {
	e := newEnv(t)
	home := e.root
	e.cfgPath = filepath.Join(home, ".freecode", "config.json")
	e.dir = filepath.Dir(e.cfgPath)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	shared := mcpSection([]map[string]any{server(t, "p")}, nil)
	shared["permissions"] = map[string]any{"allow": []string{"mcp__srv__write"}, "deny": []string{"mcp__srv__crash"}}
	writeJSON(t, e.userRules(), shared)
	if e.userRules() != e.projectFile() {
		t.Fatalf("the test's home is not the project: %s, %s", e.userRules(), e.projectFile())
	}
	w := e.open(t)
	settle(t, w)

	if got := names(w.Statuses()); !cmp.Equal(got, []string{"srv"}) {
		t.Errorf("servers: %v, want the config's srv only", got)
	}
	var rules []string
	for _, r := range w.Rules() {
		rules = append(rules, fmt.Sprintf("%s %s %s", r.Source, r.Effect, r.Pattern))
	}
	if diff := cmp.Diff([]string{"user deny mcp__srv__crash", "user allow mcp__srv__write"}, rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if p := w.Project(); p.Root != home || p.SettingsPaths.User != e.userRules() || p.SettingsPaths.Project != "" || p.SettingsPaths.Local != e.localRules() {
		t.Errorf("project: %+v", p)
	}
	if probs := w.Problems(); len(probs) != 0 {
		t.Errorf("problems: %+v", probs)
	}
	// The user's allow rule holds in an untrusted project: it is the user's.
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.IsError {
		t.Errorf("a call the user's rule allows: %+v", r)
	}
}

// The project's allow rules apply only once it is trusted; trust is held in
// the user's config and reported.
func TestTrust(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // trusting records the rules accepted there
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	writeRaw(t, e.projectFile(), `{"permissions": {"allow": ["mcp__srv__write"]}}`)
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)

	wantWarning := []ProblemsEvent{{Path: e.projectFile(), Problems: []Problem{{
		Message: "ignored allow rule \"mcp__srv__write\": project not trusted; run `freecode trust`",
		Line:    1, Column: 28, Severity: SeverityWarning,
	}}, Summary: "the project's settings have 1 warning"}}
	if diff := cmp.Diff(wantWarning, w.Problems()); diff != "" {
		t.Errorf("problems of an untrusted project (-want +got):\n%s", diff)
	}
	if p := w.Project(); p.Trusted || p.Root != e.root || p.SettingsPaths.Local != e.localRules() || p.SettingsPaths.User != e.userRules() {
		t.Errorf("Project() = %+v", p)
	}
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.Decision != orchestrator.DecisionDenied {
		t.Errorf("write in an untrusted project, nobody to ask: %+v", r)
	}

	if err := w.SetTrusted(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	if !w.Project().Trusted {
		t.Error("Project().Trusted after SetTrusted(true) = false")
	}
	await(t, sub, "project trusted", func(ev *ProjectEvent) bool { return ev.Project.Trusted })
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.IsError || r.Decision != orchestrator.DecisionAllowed {
		t.Errorf("write in a trusted project with an allow rule: %+v", r)
	}
	if got := w.Problems(); len(got) != 0 {
		t.Errorf("problems of a trusted project: %+v", got)
	}
	if !slices.ContainsFunc(w.Rules(), func(r permissions.Rule) bool {
		return r.Pattern == "mcp__srv__write" && r.Effect == permissions.Allow && r.Source == permissions.SourceProject
	}) {
		t.Errorf("rules in a trusted project: %+v", w.Rules())
	}
	cfg, err := config.Load(e.cfgPath)
	if err != nil || !cfg.IsTrusted(e.root) {
		t.Errorf("trust is not in the config file: %v, %v", cfg, err)
	}

	if err := w.SetTrusted(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	await(t, sub, "project untrusted", func(ev *ProjectEvent) bool { return !ev.Project.Trusted })
	if r := call(t, w, "mcp__srv__write", `{}`, nil); r.Decision != orchestrator.DecisionDenied {
		t.Errorf("write after trust was revoked: %+v", r)
	}
}

// A config file that breaks reports where, keeps the servers running, and
// reports the fix with an empty list.
func TestBrokenConfig(t *testing.T) {
	e := newEnv(t)
	good := mcpSection([]map[string]any{server(t, "srv")}, nil)
	writeJSON(t, e.cfgPath, good)
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	settle(t, w)
	isConfig := func(ev *ProblemsEvent) bool { return ev.Path == e.cfgPath }

	writeRaw(t, e.cfgPath, "{\"mcp\": {\"servers\": [\n  }")
	pe := await(t, sub, "config problems", isConfig)
	if len(pe.Problems) != 1 || pe.Problems[0].Line != 2 || pe.Problems[0].Column != 3 {
		t.Errorf("problems of a config that does not parse: %+v, want one at 2:3", pe.Problems)
	}
	if sts := w.Statuses(); len(sts) != 1 || sts[0].State != mcp.StateConnected {
		t.Errorf("statuses with the config broken: %+v", sts)
	}
	if r := call(t, w, "mcp__srv__echo", `{"text":"still"}`, nil); r.IsError {
		t.Errorf("call with the config broken: %+v", r)
	}

	if want := "the config has 1 problem; showing the last good one"; pe.Summary != want {
		t.Errorf("summary = %q, want %q", pe.Summary, want)
	}

	// Valid JSON that breaks a rule: the problem names the key, at the
	// line and column of its value; a key FreeCode does not know is a
	// warning beside it, at its name.
	writeRaw(t, e.cfgPath, "{\"mcp\": {\"servers\": [\n  {\"name\": \"a__b\", \"command\": \"x\",\n   \"disabled\": true}]}}")
	pe = await(t, sub, "config validation problems", isConfig)
	want := []Problem{
		{Message: `name "a__b" must not contain "__": it separates server and tool in tool ids (mcp__<server>__<tool>)`, Line: 2, Column: 12, Key: "mcp.servers[0].name", Severity: SeverityError},
		{Message: `server "a__b": unknown key "disabled" is ignored: FreeCode's is "enabled": false`, Line: 3, Column: 4, Key: "mcp.servers[0].disabled", Severity: SeverityWarning},
	}
	if diff := cmp.Diff(want, pe.Problems); diff != "" {
		t.Errorf("problems of an invalid config (-want +got):\n%s", diff)
	}
	if want := "the config has 2 problems; showing the last good one"; pe.Summary != want || pe.Err == nil {
		t.Errorf("summary = %q (err %v), want %q", pe.Summary, pe.Err, want)
	}
	if sts := w.Statuses(); len(sts) != 1 || sts[0].Name != "srv" || sts[0].State != mcp.StateConnected {
		t.Errorf("statuses with the config invalid: %+v", sts)
	}
	if got := w.Problems(); len(got) != 1 || got[0].Path != e.cfgPath {
		t.Errorf("Problems() = %+v", got)
	}

	writeJSON(t, e.cfgPath, good)
	pe = await(t, sub, "config fixed", isConfig)
	if len(pe.Problems) != 0 || pe.Err != nil {
		t.Errorf("problems after the fix: %+v", pe.Problems)
	}
	if got := w.Problems(); len(got) != 0 {
		t.Errorf("Problems() after the fix = %+v", got)
	}
	if sts := w.Statuses(); len(sts) != 1 || sts[0].State != mcp.StateConnected || sts[0].PID == 0 {
		t.Errorf("statuses after the fix: %+v", sts)
	}
}

// A server that crashes and comes back with the same tools changes no
// hash: no tools-changed event, so providers' prompt caches stay warm.
func TestReconnectSameTools(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{unpinned(server(t, "srv"))}, nil))
	w := e.open(t)
	settle(t, w)
	before, _, err := w.Definitions(t.Context(), defscache.FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	sub := w.Subscribe(nil)
	defer sub.Close()

	if r := call(t, w, "mcp__srv__crash", `{}`, allowOnce); !r.IsError {
		t.Fatalf("crash: %+v", r)
	}
	await(t, sub, "srv reconnecting", statusIs("srv", "reconnecting"))
	await(t, sub, "srv connected again", statusIs("srv", "connected"))
	after, _, err := w.Definitions(t.Context(), defscache.FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash != before.Hash {
		t.Errorf("hash after a reconnect with the same tools: %s, was %s", after.Hash, before.Hash)
	}

	// A real change next: the first tools-changed event must be that one,
	// none from the reconnect before it.
	if r := call(t, w, "mcp__srv__addtool", `{"name":"fresh"}`, allowOnce); r.IsError {
		t.Fatalf("addtool: %+v", r)
	}
	ev := await[*ToolsChangedEvent](t, sub, "tools changed", nil)
	if ev.Server != "srv" || ev.Reason != "listChanged" || ev.Hashes[defscache.FormatOpenAI] == before.Hash {
		t.Errorf("first tools-changed event after the reconnect: %+v", ev)
	}
}

// Close stops every server and reaps its process; the subscriptions end.
func TestClose(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	settle(t, w)
	pid := w.Statuses()[0].PID
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	proctest.WantGone(t, pid, "after Close")
	for range sub.Events() { // ends: Close closed it
	}
	if _, open := <-w.Subscribe(nil).Events(); open {
		t.Error("a subscription after Close is open")
	}
	sub.Close()
	w.Close()
}

// Want limits what runs; a file that does not exist is no problem.
func TestWant(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), server(t, "b")}, nil))
	w := e.openWith(t, &Options{Want: func(s string) bool { return s == "b" }})
	settle(t, w)
	if got := names(w.Statuses()); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("statuses with Want b: %v", got)
	}
	if _, err := w.StartServer(t.Context(), "a"); !errors.Is(err, mcp.ErrNoServer) {
		t.Errorf("StartServer of a server not wanted: %v", err)
	}
	if got := w.Problems(); len(got) != 0 {
		t.Errorf("problems without rule files: %+v", got)
	}
	if _, err := os.Stat(e.userRules()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the workspace made %s: %v", e.userRules(), err)
	}
}

// clock is a built-in for TestBuiltins.
type clock struct{ orchestrator.NoServer }

func (clock) CallTool(context.Context, orchestrator.Call) (orchestrator.Outcome, error) {
	return orchestrator.Outcome{Result: &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "noon"}}}}, nil
}

// Built-ins come first, in the tools and in the definitions, and run
// through the same gate as MCP tools.
func TestBuiltins(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "srv")}, nil))
	writeRaw(t, e.userRules(), `{"permissions": {"allow": ["clock"]}}`)
	w := e.openWith(t, &Options{Builtins: []*orchestrator.Tool{{ID: "clock", Description: "Tell the time", Runner: clock{}}}})
	settle(t, w)
	tools := w.Tools("")
	if len(tools) != 5 || tools[0].ID != "clock" || tools[1].ID != "mcp__srv__addtool" {
		t.Errorf("tools: %+v", tools)
	}
	entry, problems, err := w.Definitions(t.Context(), defscache.FormatAnthropic)
	if err != nil || len(problems) != 0 || !strings.HasPrefix(string(entry.Bytes), `[{"name":"clock",`) {
		t.Errorf("definitions: %s, %v, %v", entry.Bytes, problems, err)
	}
	if r := call(t, w, "clock", `{}`, nil); r.IsError || r.Text() != "noon" || r.Decision != orchestrator.DecisionAllowed {
		t.Errorf("clock: %+v", r)
	}
}
