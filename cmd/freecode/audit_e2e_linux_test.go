package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
)

// The audit trail end to end (issue 32): the built binaries as a user runs
// them, `freecode tools call`, freecode-serve driven by the repository's
// frontend client and `freecode mcp serve --stdio` driven by the go-sdk's
// client, all against one config, each call one line of the trail beside
// it; `freecode audit verify` on copies of a trail that were tampered
// with; and the trail a sidecar killed with SIGKILL leaves. Linux only for
// the helpers of managed_ns_linux_test.go it shares (freecode-serve's
// build, stdioPipes, withoutVars).

// auditEnv is a test's config directory (config.json, the user's rule
// file settings.json, and the trail in audit/), HOME and project.
type auditEnv struct {
	dir, cfg, rules, home, project string
}

// The rules of every auditEnv: create_issue allowed, build asked about.
// The other tools of the demo server go by the defaults: the read-only
// ones allowed, the rest asked about.
const (
	auditAllowed = "mcp__demo__create_issue"
	auditAsked   = "mcp__demo__build"
)

// newAuditEnv writes a config of two demo servers, demo and other, and the
// user's rules.
func newAuditEnv(t *testing.T) *auditEnv {
	t.Helper()
	dir := t.TempDir()
	e := &auditEnv{
		dir: dir, cfg: filepath.Join(dir, "config.json"), rules: filepath.Join(dir, "settings.json"),
		home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project"),
	}
	for _, d := range []string{e.home, e.project} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeJSONFile(t, e.cfg, map[string]any{"mcp": map[string]any{"servers": []any{
		map[string]any{"name": "demo", "command": []string{demoServer}},
		map[string]any{"name": "other", "command": []string{demoServer}},
	}}})
	writeJSONFile(t, e.rules, map[string]any{"permissions": map[string]any{
		"allow": []string{auditAllowed}, "ask": []string{auditAsked},
	}})
	return e
}

// trail is the directory of the trail, as config.AuditDir puts it.
func (e *auditEnv) trail() string { return filepath.Join(e.dir, config.AuditDirName) }

// command is a built binary run in the project, with HOME the test's and
// no FREECODE_CONFIG of the caller's.
func (e *auditEnv) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = e.project
	cmd.Env = append(withoutVars(os.Environ(), "HOME", "FREECODE_CONFIG"), "HOME="+e.home)
	return cmd
}

// cliAt runs the freecode binary with --config cfg, standard input not a
// terminal, and returns what it printed and its exit status.
func (e *auditEnv) cliAt(t *testing.T, cfg string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	cmd := e.command(ctx, freecodeBin, append([]string{"--config", cfg}, args...)...)
	var o, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ctx.Err() == nil:
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("freecode %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, o.String(), errb.String())
	}
	return o.String(), errb.String(), code
}

func (e *auditEnv) cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return e.cliAt(t, e.cfg, args...)
}

// call runs `freecode tools call` of tool with args against cfg.
func (e *auditEnv) call(t *testing.T, cfg, tool, args string) (stdout, stderr string, code int) {
	t.Helper()
	return e.cliAt(t, cfg, "tools", "--project", e.project, "call", tool, "--args", args)
}

// entries returns the lines `freecode audit --json` prints for the trail
// of cfg, with extra flags.
func (e *auditEnv) entries(t *testing.T, cfg string, extra ...string) []audit.Entry {
	t.Helper()
	out, errOut, code := e.cliAt(t, cfg, append([]string{"audit", "--json"}, extra...)...)
	if code != 0 {
		t.Fatalf("freecode audit --json %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(extra, " "), code, out, errOut)
	}
	var es []audit.Entry
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		var en audit.Entry
		if err := json.Unmarshal([]byte(line), &en); err != nil {
			t.Fatalf("freecode audit --json printed a line that is not an entry: %v\n%s", err, line)
		}
		en.Raw = []byte(line)
		es = append(es, en)
	}
	return es
}

// callLine is what a test expects of a call's line, without what differs
// from run to run (time, hashes, duration).
type callLine struct {
	Frontend, Tool, Server, Decision, Rule, RuleFile, Answer, Outcome string
}

// callsOf returns the call lines of es.
func callsOf(es []audit.Entry) []audit.Entry {
	var calls []audit.Entry
	for _, en := range es {
		if en.Kind == audit.KindCall {
			calls = append(calls, en)
		}
	}
	return calls
}

func callLines(es []audit.Entry) []callLine {
	var ls []callLine
	for _, en := range callsOf(es) {
		ls = append(ls, callLine{en.Frontend, en.Tool, en.Server, en.Decision, en.Rule, en.RuleFile, en.Answer, en.Outcome})
	}
	return ls
}

// verify runs `freecode audit verify` for the trail of cfg.
func (e *auditEnv) verify(t *testing.T, cfg string) (stdout, stderr string, code int) {
	t.Helper()
	return e.cliAt(t, cfg, "audit", "verify")
}

// auditSidecar is freecode-serve over stdio, as an editor runs it, driven
// by the repository's frontend client (nsSidecar's, which keeps the
// notifications), answering each permission request with what answer says
// of its call.
type auditSidecar struct {
	*nsSidecar
	cmd *exec.Cmd
}

// startSidecar runs freecode-serve for e, initialized as the client
// "audit-test", and waits for both servers to be connected. The test's
// end kills it if it still runs.
func (e *auditEnv) startSidecar(t *testing.T, answer func(callID string) protocol.PermissionDecision) *auditSidecar {
	t.Helper()
	sc := &auditSidecar{nsSidecar: &nsSidecar{t: t, exited: make(chan struct{}), changed: make(chan struct{})}}
	sc.cmd = e.command(context.Background(), freecodeServe(t), "--config", e.cfg, "--project", e.project, "--log-level", "debug", "--log-format", "text")
	sc.cmd.Stderr = &sc.stderr
	stdin, err := sc.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sc.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc.cmd.Wait()
		close(sc.exited)
	}()
	sc.Client = frontend.New(stdioPipes{stdout, stdin}, &frontend.Options{
		ClientName: "audit-test", Folders: []string{e.project}, ConfigPath: e.cfg,
		OnNotification: sc.note,
		OnPermission: func(_ context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
			return &protocol.PermissionResponse{Decision: answer(req.CallID)}, nil
		},
	})
	t.Cleanup(func() {
		sc.Close()
		select {
		case <-sc.exited:
		default:
			sc.cmd.Process.Kill()
			<-sc.exited
		}
		if t.Failed() {
			t.Logf("freecode-serve's log:\n%s", sc.stderr.String())
		}
	})
	if _, err := sc.Initialize(t.Context()); err != nil {
		t.Fatalf("initialize: %v\n%s", err, sc.stderr.String())
	}
	// A batch sent before a server listed its tools would find none.
	sc.awaitStatus(0, "demo", protocol.StateConnected)
	sc.awaitStatus(0, "other", protocol.StateConnected)
	return sc
}

// stop shuts the sidecar down as an editor does, and waits for it to exit.
func (sc *auditSidecar) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := sc.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	} else if err := sc.Exit(ctx); err != nil {
		t.Errorf("exit: %v", err)
	}
	sc.Close()
	select {
	case <-sc.exited:
	case <-ctx.Done():
		t.Fatalf("freecode-serve did not exit within %v of exit", hangGuard)
	}
	if code := sc.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("freecode-serve exited with status %d after shutdown and exit", code)
	}
}

// execute runs a batch, failing the test if the sidecar does not answer.
func (sc *auditSidecar) execute(t *testing.T, calls ...protocol.ToolCall) []protocol.ToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	rs, err := sc.Execute(ctx, calls...)
	if err != nil || len(rs) != len(calls) {
		t.Fatalf("freecode/tools/execute: %v, %d results of %d calls\n%s", err, len(rs), len(calls), sc.stderr.String())
	}
	return rs
}

// gateway connects the go-sdk's client, named name, to `freecode mcp serve
// --stdio` for e, at the protocol version given ("" the SDK's latest); it
// answers every permission form with "allow once".
func (e *auditEnv) gateway(t *testing.T, name, version string) (*mcpsdk.ClientSession, *exec.Cmd, *notifyBuffer) {
	t.Helper()
	cmd := e.command(context.Background(), freecodeBin, "--config", e.cfg, "mcp", "serve", "--stdio", "--project", e.project)
	stderr := new(notifyBuffer)
	cmd.Stderr = stderr
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: name, Version: "0"}, &mcpsdk.ClientOptions{
		ElicitationHandler: func(context.Context, *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
			return &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allowOnce"}}, nil
		},
	})
	cs, err := client.Connect(t.Context(), &mcpsdk.CommandTransport{Command: cmd}, &mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to freecode mcp serve: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd, stderr
}

// Every call of the CLI, the sidecar and the gateway against one config is
// one line of the trail beside it, in the order made, saying who asked
// (cli, <clientInfo.name>#<n>, gateway:<client>), the server's identity and
// the definition's hash, the rule or the answer that decided, the
// arguments' hash and not their values, and the outcome; `audit verify`
// verifies them all, and `audit --server` and `--since` filter them.
func TestAuditEveryFrontend(t *testing.T) {
	e := newAuditEnv(t)
	// An argument's value, which the trail keeps only the hash of.
	const secret = "s3cret-issue-title"
	issueArgs := `{"title":"` + secret + `"}`
	const buildArgs = `{"steps":1,"seconds":0}`
	args := map[string][]string{} // each call's arguments, by frontend, in order

	// The CLI: a call a rule allows, and one an ask rule would ask about,
	// denied since there is no terminal to ask on.
	if out, errOut, code := e.call(t, e.cfg, auditAllowed, issueArgs); code != 0 {
		t.Fatalf("tools call %s: exit %d\nstdout:\n%s\nstderr:\n%s", auditAllowed, code, out, errOut)
	}
	if out, errOut, code := e.call(t, e.cfg, auditAsked, buildArgs); code != 1 || !strings.Contains(out, "there is no one to ask") {
		t.Fatalf("tools call %s without a terminal: exit %d, want 1 and a denial\nstdout:\n%s\nstderr:\n%s", auditAsked, code, out, errOut)
	}
	args["cli"] = []string{issueArgs, buildArgs}

	// The sidecar: one batch of a call a rule allows, one asked and
	// allowed once, one asked and denied, an unknown tool and a read-only
	// tool no rule names.
	sc := e.startSidecar(t, func(callID string) protocol.PermissionDecision {
		if callID == "s2" {
			return protocol.AllowOnce
		}
		return protocol.Deny
	})
	batch := []protocol.ToolCall{
		{CallID: "s1", Tool: auditAllowed, Arguments: json.RawMessage(issueArgs)},
		{CallID: "s2", Tool: auditAsked, Arguments: json.RawMessage(buildArgs)},
		{CallID: "s3", Tool: auditAsked, Arguments: json.RawMessage(`{"steps":2,"seconds":0}`)},
		{CallID: "s4", Tool: "mcp__demo__no_such_tool", Arguments: json.RawMessage(`{"x":1}`)},
		{CallID: "s5", Tool: "mcp__demo__read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
	}
	rs := sc.execute(t, batch...)
	var decisions []protocol.Decision
	for _, r := range rs {
		decisions = append(decisions, r.Decision)
	}
	if diff := cmp.Diff([]protocol.Decision{protocol.DecisionAllowed, protocol.DecisionAsked, protocol.DecisionDenied, protocol.DecisionInvalid, protocol.DecisionAllowed}, decisions); diff != "" {
		t.Errorf("the sidecar's decisions (-want +got):\n%s", diff)
	}
	for _, c := range batch {
		args["audit-test#1"] = append(args["audit-test#1"], string(c.Arguments))
	}
	sc.stop(t)

	// The gateway: a client of 2025-11-25, asked by an elicitation while
	// the call runs, and one of the SDK's latest revision, asked by an
	// input_required result and calling again with the answer.
	for _, gw := range []struct{ name, version string }{{"audit-gw-old", "2025-11-25"}, {"audit-gw", ""}} {
		cs, cmd, stderr := e.gateway(t, gw.name, gw.version)
		for _, c := range []struct{ tool, args string }{{auditAsked, buildArgs}, {"mcp__other__echo", `{"message":"hi"}`}} {
			res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
			if err != nil || res.IsError {
				t.Fatalf("%s: calling %s through the gateway: %v, %+v\n%s", gw.name, c.tool, err, res, stderr.String())
			}
			args["gateway:"+gw.name] = append(args["gateway:"+gw.name], c.args)
		}
		// Closing the session closes the gateway's stdin: it exits, and
		// writes what its trail holds.
		if err := cs.Close(); err != nil {
			t.Errorf("%s: closing the gateway: %v\n%s", gw.name, err, stderr.String())
		}
		if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
			t.Errorf("%s: the gateway has not exited once its session closed", gw.name)
		}
	}

	es := e.entries(t, e.cfg)
	calls := callsOf(es)
	const sidecar = "audit-test#1"
	allowed := callLine{Tool: auditAllowed, Server: "demo", Decision: audit.DecisionAllowed, Rule: auditAllowed, RuleFile: e.rules, Outcome: audit.OutcomeOK}
	askedOnce := callLine{Tool: auditAsked, Server: "demo", Decision: audit.DecisionAsked, Rule: auditAsked, RuleFile: e.rules, Answer: audit.AnswerAllowOnce, Outcome: audit.OutcomeOK}
	echo := callLine{Tool: "mcp__other__echo", Server: "other", Decision: audit.DecisionAllowed, Outcome: audit.OutcomeOK}
	with := func(l callLine, frontend string) callLine { l.Frontend = frontend; return l }
	want := []callLine{
		with(allowed, "cli"),
		{Frontend: "cli", Tool: auditAsked, Server: "demo", Decision: audit.DecisionDenied, Rule: auditAsked, RuleFile: e.rules, Outcome: audit.OutcomeDenied},
		with(allowed, sidecar),
		with(askedOnce, sidecar),
		{Frontend: sidecar, Tool: auditAsked, Server: "demo", Decision: audit.DecisionDenied, Rule: auditAsked, RuleFile: e.rules, Answer: audit.AnswerDeny, Outcome: audit.OutcomeDenied},
		{Frontend: sidecar, Tool: "mcp__demo__no_such_tool", Decision: "invalid", Outcome: audit.OutcomeError},
		{Frontend: sidecar, Tool: "mcp__demo__read_file", Server: "demo", Decision: audit.DecisionAllowed, Outcome: audit.OutcomeOK},
		with(askedOnce, "gateway:audit-gw-old"),
		with(echo, "gateway:audit-gw-old"),
		with(askedOnce, "gateway:audit-gw"),
		with(echo, "gateway:audit-gw"),
	}
	if diff := cmp.Diff(want, callLines(es)); diff != "" {
		t.Errorf("the trail's calls (-want +got):\n%s", diff)
	}
	for _, en := range es {
		if en.Kind != audit.KindCall {
			t.Logf("a line of another kind: %s", en.Raw)
		}
	}

	// The server's identity is its entry's approval hash; a tool's
	// definition hash is the same whoever called it; the arguments are
	// there by their hash only.
	cfg := load(t, e.cfg)
	identity := map[string]string{}
	for _, s := range cfg.MCP.Servers {
		identity[s.Name] = config.EntryHash(s)
	}
	defHash := map[string]string{}
	for i, en := range calls {
		if i >= len(want) || want[i] != callLines([]audit.Entry{en})[0] {
			break // reported above
		}
		if en.Server != "" {
			if en.ServerIdentity == "" || en.ServerIdentity != identity[en.Server] {
				t.Errorf("line %d (%s by %s): serverIdentity %q, want %q, the entry's approval hash", i, en.Tool, en.Frontend, en.ServerIdentity, identity[en.Server])
			}
			switch h, seen := defHash[en.Tool]; {
			case en.DefinitionHash == "":
				t.Errorf("line %d (%s by %s): no definitionHash", i, en.Tool, en.Frontend)
			case seen && h != en.DefinitionHash:
				t.Errorf("line %d (%s by %s): definitionHash %s, another call of the tool had %s", i, en.Tool, en.Frontend, en.DefinitionHash, h)
			default:
				defHash[en.Tool] = en.DefinitionHash
			}
		}
	}
	for frontend, as := range args {
		var got []string
		var wantHashes []string
		for _, en := range calls {
			if en.Frontend == frontend {
				got = append(got, en.ArgsSHA256)
			}
		}
		for _, a := range as {
			wantHashes = append(wantHashes, audit.ArgsHash(json.RawMessage(a)))
		}
		if diff := cmp.Diff(wantHashes, got); diff != "" {
			t.Errorf("argsSha256 of the calls of %s (-want +got):\n%s", frontend, diff)
		}
	}
	for _, en := range es {
		if en.Args != nil || bytes.Contains(en.Raw, []byte(secret)) || bytes.Contains(en.Raw, []byte(`"args"`)) {
			t.Errorf("a line holds the arguments' values: %s", en.Raw)
		}
	}

	out, errOut, code := e.verify(t, e.cfg)
	if wantOut := fmt.Sprintf("verified %d lines in 1 file\n", len(es)); code != 0 || out != wantOut || errOut != "" {
		t.Errorf("audit verify: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0 and %q", code, out, errOut, wantOut)
	}

	// The text form: one line an entry, an answered question as such.
	out, errOut, code = e.cli(t, "audit")
	wantLine := fmt.Sprintf("  call  %s  %s  denied by %s in %s, answered deny  denied  ", sidecar, auditAsked, auditAsked, e.rules)
	if code != 0 || strings.Count(out, "\n") != len(es) || !strings.Contains(out, wantLine) {
		t.Errorf("audit: exit %d, want %d lines, one containing %q\nstdout:\n%s\nstderr:\n%s", code, len(es), wantLine, out, errOut)
	}

	// --server keeps one server's lines; --since 1h keeps all of them, a
	// time to come none.
	for _, server := range []string{"demo", "other"} {
		var wantServer []callLine
		for _, l := range want {
			if l.Server == server {
				wantServer = append(wantServer, l)
			}
		}
		got := e.entries(t, e.cfg, "--server", server)
		if diff := cmp.Diff(wantServer, callLines(got)); diff != "" {
			t.Errorf("audit --server %s (-want +got):\n%s", server, diff)
		}
		for _, en := range got {
			if en.Server != server {
				t.Errorf("audit --server %s printed a line of %q: %s", server, en.Server, en.Raw)
			}
		}
	}
	if got := e.entries(t, e.cfg, "--since", "1h"); len(got) != len(es) {
		t.Errorf("audit --since 1h printed %d lines, want all %d", len(got), len(es))
	}
	if got := e.entries(t, e.cfg, "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); len(got) != 0 {
		t.Errorf("audit --since an hour from now printed %d lines, want none", len(got))
	}
}

// copyTrail copies the trail of e, with the config and rule files, into a
// directory of its own, and returns the copy's config file, whose trail
// `freecode audit` then reads (the trail sits beside the config file).
func (e *auditEnv) copyTrail(t *testing.T, name string) (cfg, trail string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	trail = filepath.Join(dir, config.AuditDirName)
	if err := os.MkdirAll(trail, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{e.cfg, e.rules} {
		copyFile(t, f, filepath.Join(dir, filepath.Base(f)), 0o600)
	}
	des, err := os.ReadDir(e.trail())
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.Type().IsRegular() {
			copyFile(t, filepath.Join(e.trail(), de.Name()), filepath.Join(trail, de.Name()), 0o600)
		}
	}
	return filepath.Join(dir, filepath.Base(e.cfg)), trail
}

// editLines rewrites the trail's current file with edit applied to its
// lines (without their newlines).
func editLines(t *testing.T, trail string, edit func([]string) []string) {
	t.Helper()
	path := filepath.Join(trail, audit.CurrentFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	ls = edit(ls)
	if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// `freecode audit verify` on copies of a trail: a line deleted, edited or
// swapped with the next exits 1 naming the line; a line a crash cut short
// is a warning, and the next call's line chains on the line before it.
func TestAuditVerifyTampered(t *testing.T) {
	e := newAuditEnv(t)
	for _, c := range []struct{ tool, args string }{
		{auditAllowed, `{"title":"t"}`},
		{auditAsked, `{"steps":1,"seconds":0}`}, // denied: no terminal
		{"mcp__demo__read_file", `{"path":"go.mod"}`},
		{"mcp__demo__echo", `{"message":"hi"}`},
	} {
		e.call(t, e.cfg, c.tool, c.args)
	}
	es := e.entries(t, e.cfg)
	if diff := cmp.Diff([]string{"cli"}, distinctFrontends(es)); len(es) != 4 || diff != "" {
		t.Fatalf("the trail of four CLI calls holds %d lines, frontends (-want +got):\n%s", len(es), diff)
	}
	if out, errOut, code := e.verify(t, e.cfg); code != 0 || out != "verified 4 lines in 1 file\n" {
		t.Fatalf("audit verify of the trail as written: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	tests := []struct {
		name string
		edit func([]string) []string
		// want are the problems printed, after the file's path; lines
		// the lines of the chain.
		want  []string
		lines int
	}{
		{"deleted", func(ls []string) []string { return append(ls[:2:2], ls[3:]...) },
			[]string{":3: seq 3 missing before this line: deleted or moved"}, 3},
		{"edited", func(ls []string) []string {
			// The CLI's denial made to read as allowed.
			ls[1] = strings.Replace(ls[1], `"decision":"denied"`, `"decision":"allowed"`, 1)
			return ls
		}, []string{":2: seq 2 does not hash to what the line after it (line 3) records: one of them was changed"}, 4},
		{"swapped", func(ls []string) []string {
			ls[1], ls[2] = ls[2], ls[1]
			return ls
		}, []string{":2: seq 2 missing before this line: deleted or moved", ":3: seq 2 after seq 3: out of order, or a copy"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, trail := e.copyTrail(t, tc.name)
			before, err := os.ReadFile(filepath.Join(trail, audit.CurrentFile))
			if err != nil {
				t.Fatal(err)
			}
			editLines(t, trail, tc.edit)
			if after, _ := os.ReadFile(filepath.Join(trail, audit.CurrentFile)); bytes.Equal(before, after) {
				t.Fatal("the edit changed nothing")
			}
			out, errOut, code := e.verify(t, cfg)
			file := filepath.Join(trail, audit.CurrentFile)
			var wantOut strings.Builder
			for _, p := range tc.want {
				wantOut.WriteString(file + p + "\n")
			}
			fmt.Fprintf(&wantOut, "%d %s in %d lines of 1 file: the audit trail was changed\n", len(tc.want), plural(len(tc.want), "problem", "problems"), tc.lines)
			if code != 1 || out != wantOut.String() || errOut != "" {
				t.Errorf("audit verify: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 and:\n%s", code, out, errOut, wantOut.String())
			}
		})
	}

	t.Run("torn", func(t *testing.T) {
		cfg, trail := e.copyTrail(t, "torn")
		file := filepath.Join(trail, audit.CurrentFile)
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		// Half of a line like the last, without its newline: a write a
		// crash cut short.
		last := es[len(es)-1].Raw
		if _, err := f.Write(last[:len(last)/2]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		wantWarn := fmt.Sprintf("warning: %s:5: a line cut short (a write a crash interrupted, at byte %d): skipped\n", file, fi.Size())
		out, errOut, code := e.verify(t, cfg)
		if code != 0 || out != "verified 4 lines in 1 file\n" || errOut != wantWarn {
			t.Errorf("audit verify of a torn last line: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0, 4 lines verified and the warning %q", code, out, errOut, wantWarn)
		}

		// The next call's line starts on a line of its own, and chains
		// on the last whole line.
		if out, errOut, code := e.call(t, cfg, "mcp__demo__echo", `{"message":"after"}`); code != 0 {
			t.Fatalf("tools call after the torn line: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		out, errOut, code = e.verify(t, cfg)
		if code != 0 || out != "verified 5 lines in 1 file\n" || errOut != wantWarn {
			t.Errorf("audit verify after a call chained on: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0, 5 lines verified and the warning %q", code, out, errOut, wantWarn)
		}
		got := e.entries(t, cfg)
		if n := len(got); n != 5 || got[4].Seq != 5 || got[4].Tool != "mcp__demo__echo" || got[4].Frontend != "cli" {
			t.Errorf("the trail after the torn line: %d lines, the last %s", n, got[n-1].Raw)
		}
	})
}

func distinctFrontends(es []audit.Entry) []string {
	var fs []string
	for _, en := range es {
		if len(fs) == 0 || fs[len(fs)-1] != en.Frontend {
			fs = append(fs, en.Frontend)
		}
	}
	return fs
}

// A sidecar killed with SIGKILL, possibly in the middle of writing its
// trail, leaves one that verifies: every line of a call answered before
// the kill and seen on the disk is there, a line the kill cut short is a
// warning, and the next call's line chains on.
func TestAuditSidecarKilled(t *testing.T) {
	e := newAuditEnv(t)
	// The trail exists, for the test to follow, and the sidecar's lines
	// chain on the CLI's.
	if out, errOut, code := e.call(t, e.cfg, "mcp__demo__echo", `{"message":"before"}`); code != 0 {
		t.Fatalf("tools call: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := []callLine{{"cli", "mcp__demo__echo", "demo", audit.DecisionAllowed, "", "", "", audit.OutcomeOK}}
	sc := e.startSidecar(t, func(string) protocol.PermissionDecision { return protocol.AllowOnce })
	batch := func(n int) []protocol.ToolCall {
		return []protocol.ToolCall{
			{CallID: fmt.Sprintf("%d-issue", n), Tool: auditAllowed, Arguments: json.RawMessage(fmt.Sprintf(`{"title":"issue %d"}`, n))},
			{CallID: fmt.Sprintf("%d-read", n), Tool: "mcp__demo__read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
			{CallID: fmt.Sprintf("%d-echo", n), Tool: "mcp__other__echo", Arguments: json.RawMessage(fmt.Sprintf(`{"message":"%d"}`, n))},
		}
	}
	// The lines of a batch, the same for each.
	batchLines := []callLine{
		{"audit-test#1", auditAllowed, "demo", audit.DecisionAllowed, auditAllowed, e.rules, "", audit.OutcomeOK},
		{"audit-test#1", "mcp__demo__read_file", "demo", audit.DecisionAllowed, "", "", "", audit.OutcomeOK},
		{"audit-test#1", "mcp__other__echo", "other", audit.DecisionAllowed, "", "", "", audit.OutcomeOK},
	}
	const before = 3 // batches answered, and their lines seen, before the kill
	for n := range before {
		for _, r := range sc.execute(t, batch(n)...) {
			if r.IsError {
				t.Fatalf("batch %d: %+v", n, r)
			}
		}
		want = append(want, batchLines...)
	}
	servers, err := sc.Servers(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	// The lines of the answered calls reach the file within the writer's
	// gathering delay: wait for them there, by the trail's own reader.
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	seen := 0
	errEnough := errors.New("enough")
	err = audit.Follow(ctx, e.trail(), audit.Filter{}, func(en audit.Entry) error {
		if en.Kind == audit.KindCall {
			seen++
		}
		if seen == len(want) {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("the trail holds %d of the %d calls answered: %v", seen, len(want), err)
	}

	// More batches, one after the other, and the kill right after the
	// tenth answer: the trail is being written all the while, and the
	// last batches' lines are in the writer's hands, or being written.
	var wg sync.WaitGroup
	answered := make(chan struct{}, 1)
	wg.Go(func() {
		for n := before; ; n++ {
			if _, err := sc.Execute(context.Background(), batch(n)...); err != nil {
				return // the sidecar is gone
			}
			select {
			case answered <- struct{}{}:
			default:
			}
		}
	})
	for range 10 {
		select {
		case <-answered:
		case <-sc.exited:
			t.Fatalf("freecode-serve exited before the kill:\n%s", sc.stderr.String())
		case <-time.After(hangGuard):
			t.Fatal("no batch answered")
		}
	}
	if err := sc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-sc.exited
	sc.Close()
	wg.Wait()
	if ws, ok := sc.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("freecode-serve: %v, want killed by SIGKILL", sc.cmd.ProcessState)
	}
	// The servers, their stdin closed by the kill, go too.
	for _, st := range servers {
		if st.PID != 0 {
			awaitGone(t, st.PID)
		}
	}

	out, errOut, code := e.verify(t, e.cfg)
	var lines int
	if code != 0 || !strings.HasPrefix(out, "verified ") || !strings.HasSuffix(out, " lines in 1 file\n") {
		t.Fatalf("audit verify after the kill: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	fmt.Sscanf(out, "verified %d lines", &lines)
	if errOut != "" {
		t.Logf("audit verify after the kill warns (a line the kill cut short):\n%s", errOut)
	}
	// At least the lines seen before the kill; after them, the lines of
	// the batches that followed, each once, in order, as far as they
	// were written.
	es := e.entries(t, e.cfg)
	got := callLines(es)
	if len(got) < len(want) || len(es) != lines {
		t.Fatalf("after the kill, audit --json printed %d lines (%d calls), verify verified %d; want at least the %d calls seen before", len(es), len(got), lines, len(want))
	}
	for len(want) < len(got) {
		want = append(want, batchLines...)
	}
	if diff := cmp.Diff(want[:len(got)], got); diff != "" {
		t.Errorf("the calls after the kill (-want +got):\n%s", diff)
	}
	t.Logf("%d lines after the kill, %d of them of calls made after the lines were seen", len(es), len(got)-1-3*before)

	// The next call, the CLI's, chains on what the kill left.
	if out, errOut, code := e.call(t, e.cfg, "mcp__demo__echo", `{"message":"after"}`); code != 0 {
		t.Fatalf("tools call after the kill: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut2, code := e.verify(t, e.cfg)
	if wantOut := fmt.Sprintf("verified %d lines in 1 file\n", lines+1); code != 0 || out != wantOut || errOut2 != errOut {
		t.Errorf("audit verify after a call chained on: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 0, %q and the warnings of before:\n%s", code, out, errOut2, wantOut, errOut)
	}
}

// awaitGone waits until no process pid exists but, at most, a zombie that
// has not been reaped yet.
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) || isZombie(pid) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("server process %d outlived its killed sidecar by %v", pid, hangGuard)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := bufio.NewScanner(bytes.NewReader(b[bytes.LastIndexByte(b, ')')+1:]))
	s.Split(bufio.ScanWords)
	return s.Scan() && s.Text() == "Z"
}
