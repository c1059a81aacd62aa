package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/proctest"
	"github.com/freecode/freecode/internal/protocol"
)

// The organization's managed settings, end to end: a real managed file at
// /etc/freecode/managed-settings.json (managed_ns_linux_test.go), read by
// the built binaries. Every server the policy blocks is the demo server
// behind a marker (markedServer), so "never started" is checked on the
// disk, and every test has a server the policy lets run, whose marker
// must be there.

// blockedBy is the refusal of a server that the deny-list entry i of the
// managed file matches, with the organization's message if any.
func blockedBy(i int, message string) string {
	s := fmt.Sprintf("blocked by your organization's policy: deniedMcpServers[%d] in %s", i, managedFile)
	if message != "" {
		s += " — " + message
	}
	return s
}

// The CLI's one-shot commands: a denied server does not start by `mcp
// start` nor by `tools call`; `mcp add` and `mcp import` refuse it before
// writing; `mcp list` and `policy` show it blocked, with why.
func TestManagedDenyCLI(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("denied", ns.marker("denied")), markedServer("allowed", ns.marker("allowed")))
	sneaky := markedArgv(ns.marker("sneaky"))
	policy, _ := json.Marshal(map[string]any{
		"deniedMcpServers": []any{
			map[string]string{"serverName": "denied"},
			map[string]any{"serverCommand": sneaky},
			map[string]string{"serverName": "imported"},
		},
		"message": "ask #it-help",
	})
	ns.writePolicy(t, "// the organization's policy\n"+string(policy))
	const msg = "ask #it-help"

	if out := ns.mustCLI(t, "mcp", "start", "allowed"); !strings.Contains(out, `✓ Server "allowed" started`) {
		t.Errorf("mcp start allowed:\n%s", out)
	}
	out, errOut, code := ns.cli(t, "mcp", "start", "denied")
	if want := `✗ Server "denied" failed: ` + blockedBy(0, msg) + "\n"; code != 1 || errOut != want {
		t.Errorf("mcp start denied: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errOut, want)
	}

	// A call of another server's tool is not told of the blocked one.
	out, errOut, code = ns.cli(t, "tools", "--project", ns.project, "call", "mcp__allowed__echo", "--args", `{"message":"ran"}`)
	if code != 0 || !strings.Contains(out, "ran") || errOut != "" {
		t.Errorf("tools call mcp__allowed__echo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = ns.cli(t, "tools", "--project", ns.project, "call", "mcp__denied__echo", "--args", `{"message":"ran"}`)
	if code != 1 || strings.Contains(out, "ran") || !strings.Contains(errOut, `✗ Server "denied" failed: `+blockedBy(0, msg)+"\n") {
		t.Errorf("tools call mcp__denied__echo: exit %d, want 1 and the reason %q\nstdout:\n%s\nstderr:\n%s", code, blockedBy(0, msg), out, errOut)
	}

	before, err := os.ReadFile(ns.cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code = ns.cli(t, append([]string{"mcp", "add", "sneaky", "local", "--"}, sneaky...)...)
	if want := `freecode: server "sneaky" is ` + blockedBy(1, msg) + "\n(the config file was not changed)\n"; code != 1 || errOut != want {
		t.Errorf("mcp add of a denied command: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errOut, want)
	}
	claude := filepath.Join(t.TempDir(), "claude.json")
	writeJSONFile(t, claude, map[string]any{"mcpServers": map[string]any{
		"imported": map[string]any{"command": demoServer},
		"renamed":  map[string]any{"command": sneaky[0], "args": sneaky[1:]},
	}})
	out, errOut, code = ns.cli(t, "mcp", "import", "claude-code", claude)
	for _, want := range []string{"  ! imported: skipped: " + blockedBy(2, msg) + "\n", "  ! renamed: skipped: " + blockedBy(1, msg) + "\n", "✓ Added 0 servers.\n"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("mcp import of denied servers: exit %d, want 1 and a line %q\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
		}
	}
	if after, _ := os.ReadFile(ns.cfg); !bytes.Equal(before, after) {
		t.Errorf("the config file changed:\n%s\nwas:\n%s", after, before)
	}

	out = ns.mustCLI(t, "mcp", "list")
	for _, want := range []string{`(?m)^denied +local +blocked `, `(?m)^allowed +local +yes `, "(?m)^✗ denied: " + regexp.QuoteMeta(blockedBy(0, msg)) + "$"} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("mcp list does not match %q:\n%s", want, out)
		}
	}
	out = ns.mustCLI(t, "policy")
	for _, want := range []string{
		// Not "\n" after the file: run by a user who owns the test's
		// directory, the line says the policy is theirs to change.
		"Managed settings, in the order they apply:\n  " + managedFile,
		`serverName "denied"`, "deniedMcpServers[0] at " + managedFile + ":",
		"Your servers it blocks:\n  ✗ denied (user): " + blockedBy(0, msg) + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("policy lacks %q:\n%s", want, out)
		}
	}
	var pj policyJSON
	if err := json.Unmarshal([]byte(ns.mustCLI(t, "policy", "--json")), &pj); err != nil {
		t.Fatalf("policy --json: %v", err)
	}
	var entries []string
	for _, m := range pj.Denied {
		entries = append(entries, m.Entry+" "+m.Match)
	}
	wantEntries := []string{`deniedMcpServers[0] serverName "denied"`, "deniedMcpServers[1] serverCommand " + quoteArgv(sneaky), `deniedMcpServers[2] serverName "imported"`}
	if diff := cmp.Diff(wantEntries, entries); diff != "" {
		t.Errorf("policy --json's deniedMcpServers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]blockedJSON{{Server: "denied", Scope: "user", Reason: blockedBy(0, msg)}}, pj.Blocked); diff != "" {
		t.Errorf("policy --json's blocked (-want +got):\n%s", diff)
	}
	if pj.Dir != "/etc/freecode" || len(pj.Files) != 1 || pj.Files[0].Path != managedFile || pj.Allowed != nil {
		t.Errorf("policy --json: dir %q, files %+v, allowed %v", pj.Dir, pj.Files, pj.Allowed)
	}

	ns.wantStarted(t, []string{"allowed"}, []string{"denied", "sneaky"})
}

// The sidecar: a denied server is listed blocked with why, and neither a
// start, a call of a server started on demand (registered from the list
// it had before the policy came) nor an approval of a project server
// starts it.
func TestManagedDenySidecar(t *testing.T) {
	ns := newManagedNS(t)
	lazy := markedServer("lazy", ns.marker("lazy"))
	lazy["start"] = "onDemand"
	// Before the policy, lazy ran once: its manifest holds its tools, from
	// which a server on demand is registered without being started.
	ns.writeServers(t, lazy)
	if out := ns.mustCLI(t, "tools", "--project", ns.project, "list"); !strings.Contains(out, "mcp__lazy__echo") {
		t.Fatalf("tools list before the policy:\n%s", out)
	}
	if err := os.Remove(ns.marker("lazy")); err != nil {
		t.Fatalf("lazy did not start before the policy: %v", err)
	}

	ns.writeServers(t, markedServer("denied", ns.marker("denied")), lazy, markedServer("allowed", ns.marker("allowed")))
	// Unsandboxed, or its marker would be written in the sandbox's own
	// /tmp, where the test would not see it.
	proj := markedServer("proj", ns.marker("proj"))
	proj["sandbox"] = false
	writeJSONFile(t, filepath.Join(ns.project, ".freecode", "settings.json"),
		map[string]any{"mcp": map[string]any{"servers": []any{proj}}})
	ns.writePolicy(t, `{"deniedMcpServers": [{"serverName": "denied"}, {"serverName": "lazy"}, {"serverName": "proj"}]}`)
	// Once the sidecar has exited: whatever it started in its life.
	t.Cleanup(func() { ns.wantStarted(t, []string{"allowed"}, []string{"denied", "lazy", "proj"}) })
	sc := ns.startSidecar(t)
	sc.awaitStatus(0, "allowed", protocol.StateConnected)

	// First a call, which would start lazy on demand.
	for i, name := range []string{"denied", "lazy"} {
		res := sc.call("mcp__"+name+"__echo", `{"message":"ran"}`)
		// The result says why the tool is missing.
		want := fmt.Sprintf(`no such tool: "mcp__%s__echo": server %q is %s`, name, name, blockedBy(i, ""))
		if !res.IsError || res.Text() != want {
			t.Errorf("calling mcp__%s__echo: %q, want %q", name, res.Text(), want)
		}
	}
	for i, name := range []string{"denied", "lazy", "proj"} {
		st := sc.statusOf(name)
		if st.State != protocol.StateBlocked || st.Blocked != blockedBy(i, "") {
			t.Errorf("freecode/servers has %s %s, blocked %q; want blocked, %q", name, st.State, st.Blocked, blockedBy(i, ""))
		}
		// A start that cannot start answers the server's status, which
		// says why.
		if st, err := sc.StartServer(t.Context(), name); err != nil || st.State != protocol.StateBlocked || st.Blocked != blockedBy(i, "") {
			t.Errorf("freecode/servers/start %s: %+v, %v; want blocked, %q", name, st, err, blockedBy(i, ""))
		}
	}
	// The entry's own hash: an approval that would hold, but for the
	// policy.
	projServers, err := config.LoadProject(ns.project)
	if err != nil || len(projServers) != 1 {
		t.Fatalf("the project's servers: %v, %v", projServers, err)
	}
	_, err = sc.ApproveServer(t.Context(), "proj", true, config.EntryHash(projServers[0]))
	if want := `server "proj" is ` + blockedBy(2, ""); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("freecode/servers/approve proj: %v; want %q", err, want)
	}
	if res := sc.call("mcp__allowed__echo", `{"message":"ran"}`); res.IsError || !strings.Contains(res.Text(), "ran") {
		t.Errorf("calling mcp__allowed__echo: %+v", res)
	}
}

// The gateway (FreeCode as an MCP server) offers no tool of a denied
// server, and runs none.
func TestManagedDenyGateway(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("denied", ns.marker("denied")), markedServer("allowed", ns.marker("allowed")))
	ns.writePolicy(t, `{"deniedMcpServers": [{"serverName": "denied"}]}`)

	cmd := ns.command(t.Context(), freecodeBin, "--config", ns.cfg, "mcp", "serve", "--stdio", "--project", ns.project)
	var stderr notifyBuffer
	cmd.Stderr = &stderr
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "managed-test", Version: "0"}, nil).Connect(t.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to freecode mcp serve: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "mcp__allowed__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__denied__") }) {
		t.Errorf("the gateway's tools: %v; want allowed's and none of denied's", names)
	}
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "mcp__denied__echo", Arguments: map[string]any{"message": "ran"}})
	if err == nil && !res.IsError {
		t.Errorf("the gateway ran mcp__denied__echo: %+v", res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("closing the gateway: %v", err)
	}
	ns.wantStarted(t, []string{"allowed"}, []string{"denied"})
}

// An allow-list blocks every server it does not match.
func TestManagedAllowList(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("allowed", ns.marker("allowed")), markedServer("other", ns.marker("other")))
	ns.writePolicy(t, `{"allowedMcpServers": [{"serverName": "allowed"}]}`)
	want := "blocked by your organization's policy: not in allowedMcpServers (" + managedFile + ")"

	ns.mustCLI(t, "mcp", "start", "allowed")
	_, errOut, code := ns.cli(t, "mcp", "start", "other")
	if code != 1 || errOut != `✗ Server "other" failed: `+want+"\n" {
		t.Errorf("mcp start other: exit %d, stderr:\n%s\nwant the reason %q", code, errOut, want)
	}
	out := ns.mustCLI(t, "tools", "--project", ns.project, "list")
	if !strings.Contains(out, "mcp__allowed__echo") || strings.Contains(out, "mcp__other__") {
		t.Errorf("tools list:\n%s", out)
	}
	if out := ns.mustCLI(t, "policy"); !strings.Contains(out, "✗ other (user): "+want+"\n") || strings.Contains(out, "✗ allowed") {
		t.Errorf("policy:\n%s", out)
	}
	ns.wantStarted(t, []string{"allowed"}, []string{"other"})
}

// A managed deny rule holds against the user's allow rule and a trusted
// project's, and a managed ask rule against an "always allow" answer: the
// next call is asked again.
func TestManagedPermissionRules(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("demo", ns.marker("demo"), "--root", ns.project))
	ns.writePolicy(t, `{"permissions": {"deny": ["mcp__demo__delete_file"], "ask": ["mcp__demo__echo"]}}`)
	userRules := filepath.Join(ns.home, ".freecode", "settings.json")
	writeJSONFile(t, userRules, map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__demo__delete_file", "mcp__demo__echo", "mcp__demo__build"}}})
	writeJSONFile(t, filepath.Join(ns.project, ".freecode", "settings.json"), map[string]any{"permissions": map[string]any{
		"allow": []string{"mcp__demo__delete_file", "mcp__demo__echo", "mcp__demo__create_issue"}}})
	keep := filepath.Join(ns.project, "keep.txt")
	if err := os.WriteFile(keep, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	ns.mustCLI(t, "trust", ns.project)
	userBefore, err := os.ReadFile(userRules)
	if err != nil {
		t.Fatal(err)
	}

	sc := ns.startSidecar(t)
	sc.awaitStatus(0, "demo", protocol.StateConnected)
	sc.setAnswer(protocol.AllowAlways)
	// The controls: the user's and the project's allow rules are in force.
	if res := sc.call("mcp__demo__build", `{"steps": 1, "seconds": 0}`); res.IsError || res.Decision != protocol.DecisionAllowed {
		t.Errorf("build, which the user's rule allows: %+v", res)
	}
	if res := sc.call("mcp__demo__create_issue", `{"title": "t"}`); res.IsError || res.Decision != protocol.DecisionAllowed {
		t.Errorf("create_issue, which the trusted project's rule allows: %+v", res)
	}
	if p := sc.promptsSoFar(); len(p) != 0 {
		t.Errorf("calls that allow rules allow were asked about: %+v", p)
	}

	res := sc.call("mcp__demo__delete_file", `{"path": "keep.txt"}`)
	want := `denied by your organization's rule "mcp__demo__delete_file" in ` + managedFile
	if !res.IsError || res.Decision != protocol.DecisionDenied || !strings.Contains(res.Text(), want) {
		t.Errorf("delete_file: %+v\nwant denied: %q", res, want)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the denied delete_file ran: %v", err)
	}
	if p := sc.promptsSoFar(); len(p) != 0 {
		t.Errorf("a call a managed rule denies was asked about: %+v", p)
	}

	for i := 1; i <= 2; i++ {
		msg := fmt.Sprintf(`{"message": "call %d"}`, i)
		if res := sc.call("mcp__demo__echo", msg); res.IsError || !strings.Contains(res.Text(), fmt.Sprintf("call %d", i)) {
			t.Errorf("echo #%d, answered allowAlways: %+v", i, res)
		}
		p := sc.promptsSoFar()
		if len(p) != i {
			t.Fatalf("after echo #%d, %d permission requests; want %d (a managed ask rule asks at every call)", i, len(p), i)
		}
		wantReason := `your organization's ask rule "mcp__demo__echo" in ` + managedFile
		if last := p[i-1]; last.Tool != "mcp__demo__echo" || last.Reason != wantReason || last.NoAlwaysAllow == "" {
			t.Errorf("echo #%d's permission request: tool %s, reason %q, noAlwaysAllow %q; want reason %q and why always allow has no effect",
				i, last.Tool, last.Reason, last.NoAlwaysAllow, wantReason)
		}
	}
	if after, _ := os.ReadFile(userRules); !bytes.Equal(userBefore, after) {
		t.Errorf("an always allow that cannot take effect was written to %s:\n%s", userRules, after)
	}
	ns.wantStarted(t, []string{"demo"}, nil)
}

// A live edit of the managed file that denies a running server stops it:
// its status becomes blocked, with why, and its process is gone.
func TestManagedLiveEdit(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("demo", ns.marker("demo")))
	ns.writePolicy(t, `{"deniedMcpServers": [{"serverName": "other"}]}`)
	sc := ns.startSidecar(t)
	st := sc.awaitStatus(0, "demo", protocol.StateConnected)
	if st.PID == 0 {
		t.Fatalf("demo's status has no pid: %+v", st)
	}
	if res := sc.call("mcp__demo__echo", `{"message":"ran"}`); res.IsError {
		t.Fatalf("echo before the edit: %+v", res)
	}
	// The definitions are rebuilt on a goroutine of their own: the news of
	// demo's tools can come after its status and its first call. Had it, it
	// would pass below for the removal's.
	toolsOf := func(n frontend.Notification, reason string) bool {
		var tc protocol.ToolsChanged
		return n.Method == protocol.NotifyToolsChanged && n.Decode(&tc) == nil && tc.Server == "demo" && tc.Reason == reason
	}
	sc.awaitFrom(0, "demo's tools added", func(n frontend.Notification) bool { return toolsOf(n, "connected") })

	from := sc.mark()
	ns.writePolicy(t, `{"deniedMcpServers": [{"serverName": "other"}, {"serverName": "demo"}]}`)
	blocked := sc.awaitStatus(from, "demo", protocol.StateBlocked)
	if blocked.Blocked != blockedBy(1, "") {
		t.Errorf("demo's blocked status says %q; want %q", blocked.Blocked, blockedBy(1, ""))
	}
	// Its tools go once its process is stopped and reaped.
	sc.awaitFrom(from, "demo's tools removed", func(n frontend.Notification) bool { return toolsOf(n, "removed") })
	proctest.WantGone(t, st.PID, "after the policy denied it")
	if got := sc.statusOf("demo"); got.State != protocol.StateBlocked || got.Blocked != blockedBy(1, "") {
		t.Errorf("freecode/servers has demo %s, blocked %q", got.State, got.Blocked)
	}
	if res := sc.call("mcp__demo__echo", `{"message":"ran"}`); !res.IsError || strings.Contains(res.Text(), "ran") {
		t.Errorf("echo after the edit: %+v", res)
	}
}

// The managed file's problems reach the frontends as any config file's
// do, at their line; one that stops parsing keeps its last good policy in
// force and says so; fixed, its problems go.
func TestManagedProblems(t *testing.T) {
	ns := newManagedNS(t)
	ns.writeServers(t, markedServer("demo", ns.marker("demo")))
	ns.writePolicy(t, "{\n  \"deniedMcpServers\": [{\"serverName\": \"demo\"}],\n  \"colour\": \"blue\"\n}")
	sc := ns.startSidecar(t)
	path := "/etc/freecode/managed-settings.json"
	problems := func(from int, what string, ok func(protocol.ConfigProblems) bool) protocol.ConfigProblems {
		t.Helper()
		n := sc.awaitFrom(from, what, func(n frontend.Notification) bool {
			var cp protocol.ConfigProblems
			return n.Method == protocol.NotifyConfigProblems && n.Decode(&cp) == nil && cp.Path == path && ok(cp)
		})
		var cp protocol.ConfigProblems
		if err := n.Decode(&cp); err != nil {
			t.Fatal(err)
		}
		return cp
	}
	cp := problems(0, "the unknown key's warning", func(cp protocol.ConfigProblems) bool { return len(cp.Problems) > 0 })
	if p := cp.Problems[0]; p.Line != 3 || p.Severity != protocol.SeverityWarning || !strings.Contains(p.Message, "colour") {
		t.Errorf("the managed file's problem: %+v", cp)
	}
	if st := sc.statusOf("demo"); st.State != protocol.StateBlocked {
		t.Fatalf("demo is %s, want blocked", st.State)
	}

	from := sc.mark()
	ns.writePolicy(t, "{\n  \"deniedMcpServers\": [\n")
	cp = problems(from, "the parse error", func(cp protocol.ConfigProblems) bool {
		return len(cp.Problems) > 0 && cp.Problems[0].Severity == protocol.SeverityError
	})
	if !strings.Contains(cp.Summary, "last good policy stays in force") {
		t.Errorf("the broken file's summary: %q", cp.Summary)
	}
	if st := sc.statusOf("demo"); st.State != protocol.StateBlocked || st.Blocked != blockedBy(0, "") {
		t.Errorf("with the file broken, demo is %s (%q): the last good policy must hold", st.State, st.Blocked)
	}

	from = sc.mark()
	ns.writePolicy(t, `{}`)
	problems(from, "the problems gone", func(cp protocol.ConfigProblems) bool { return len(cp.Problems) == 0 })
	sc.awaitStatus(from, "demo", protocol.StateConnected)
}
