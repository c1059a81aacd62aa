package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/orchestrator"
)

// toolsConfig writes a config with the demo server and returns the
// arguments every `tools` command of the test starts with.
func toolsConfig(t *testing.T) (args []string, dir string) {
	t.Helper()
	dir = t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "demo", "local", "--", demoServer)
	return []string{"--config", path, "tools", "--project", t.TempDir()}, dir
}

func TestToolsList(t *testing.T) {
	args, _ := toolsConfig(t)
	out := mustRun(t, append(args, "list")...)
	for _, re := range []string{
		`(?m)^mcp__demo__delete_file\s+D\s+Delete a file`,
		`(?m)^mcp__demo__read_file\s+R\s+Read a file`,
		`(?m)^mcp__demo__build\s+-\s+Run a simulated build`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("list output does not match %s:\n%s", re, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 7 {
		t.Errorf("list printed %d lines, want 7:\n%s", n, out)
	}

	out = mustRun(t, append(args, "list", "--server", "demo", "--json")...)
	var infos []struct {
		ID       string `json:"id"`
		Server   string `json:"server"`
		ReadOnly bool   `json:"readOnly"`
	}
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != 7 {
		t.Fatalf("list --json: %v, %d tools\n%s", err, len(infos), out)
	}
	if infos[0].Server != "demo" || !strings.HasPrefix(infos[0].ID, "mcp__demo__") {
		t.Errorf("first info = %+v", infos[0])
	}
}

func TestToolsListFailingServer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "bad", "local", "--", filepath.Join(dir, "no-such-binary"))
	out, errOut, code := run(t, "--config", path, "tools", "--project", dir, "list", "--server", "bad")
	if code != 1 || out != "" || !strings.Contains(errOut, `✗ Server "bad" failed`) {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestToolsDefs(t *testing.T) {
	args, _ := toolsConfig(t)
	hashRe := regexp.MustCompile(`openai: 7 tools, hash ([0-9a-f]{64})`)
	var hashes []string
	for range 2 {
		out, errOut, code := run(t, append(args, "defs", "--format", "openai")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var defs []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string         `json:"name"`
				Parameters map[string]any `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal([]byte(out), &defs); err != nil || len(defs) != 7 {
			t.Fatalf("defs: %v, %d tools\n%s", err, len(defs), out)
		}
		if defs[0].Type != "function" || defs[0].Function.Name != "mcp__demo__build" {
			t.Errorf("first def = %+v", defs[0])
		}
		m := hashRe.FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("no hash on stderr: %s", errOut)
		}
		hashes = append(hashes, m[1])
	}
	if hashes[0] != hashes[1] {
		t.Errorf("hash differs between runs: %v", hashes)
	}
	if _, errOut, code := run(t, append(args, "defs", "--format", "gemini")...); code != 1 || !strings.Contains(errOut, "anthropic or openai") {
		t.Errorf("bad format: exit %d, %s", code, errOut)
	}
}

func TestToolsCall(t *testing.T) {
	args, dir := toolsConfig(t)
	call := func(extra ...string) (string, string, int) {
		return run(t, append(append(args, "call"), extra...)...)
	}

	out, errOut, code := call("mcp__demo__read_file", "--args", `{"path":"go.mod"}`)
	if code != 0 || out != "module example.com/greeter\n\ngo 1.22\n\n" {
		t.Errorf("read_file: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}

	out, _, code = call("mcp__demo__read_file", "--args", `{"path":1}`)
	if code != 1 || !strings.Contains(out, "invalid arguments for mcp__demo__read_file") || !strings.Contains(out, "/path") {
		t.Errorf("invalid args: exit %d\n%s", code, out)
	}

	// No terminal, no --yes: ask is a denial naming the rule to add.
	out, _, code = call("mcp__demo__delete_file", "--args", `{"path":"README.md"}`)
	settings := filepath.Join(dir, "settings.json")
	if want := `add "mcp__demo__delete_file" to permissions.allow in ` + settings; code != 1 || !strings.Contains(out, want) {
		t.Errorf("delete_file without a terminal: exit %d\n%s\nwant it to contain %q", code, out, want)
	}

	out, _, code = call("mcp__demo__delete_file", "--args", `{"path":"README.md"}`, "--yes", "--json")
	var res struct {
		IsError  bool   `json:"isError"`
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.IsError || res.Decision != "asked" {
		t.Errorf("delete_file --yes: exit %d, %+v (%v)\n%s", code, res, err, out)
	}

	out, _, code = call("mcp__demo__nope")
	if code != 1 || !strings.Contains(out, `no such tool: "mcp__demo__nope"`) {
		t.Errorf("unknown tool: exit %d\n%s", code, out)
	}
}

func TestToolsCallRules(t *testing.T) {
	args, dir := toolsConfig(t)
	settings := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"permissions": {"deny": ["mcp__demo__read_*"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, append(args, "call", "mcp__demo__read_file", "--args", `{"path":"go.mod"}`, "--yes")...)
	if want := `denied by rule "mcp__demo__read_*" in ` + settings; code != 1 || !strings.Contains(out, want) {
		t.Errorf("denied call: exit %d\n%s\nwant it to contain %q", code, out, want)
	}
}

// TestToolsCallPrompt answers the terminal prompt with "always": the rule
// lands in the user's settings and the next call runs without a terminal.
func TestToolsCallPrompt(t *testing.T) {
	old := isTerminal
	isTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { isTerminal = old })

	args, dir := toolsConfig(t)
	cmd := newRootCmd()
	var o, e strings.Builder
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetIn(strings.NewReader("always\n"))
	cmd.SetArgs(append(args, "call", "mcp__demo__delete_file", "--args", `{"path":"README.md"}`))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("call: %v\n%s\n%s", err, o.String(), e.String())
	}
	if !strings.Contains(e.String(), "mcp__demo__delete_file (destructive) wants to run") || !strings.Contains(e.String(), "Allow? [y/N/a") || !strings.Contains(e.String(), "no rule; tool is not read-only") {
		t.Errorf("prompt:\n%s", e.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Permissions struct{ Allow []string } `json:"permissions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if diff := cmp.Diff([]string{"mcp__demo__delete_file"}, s.Permissions.Allow); diff != "" {
		t.Errorf("allow rules (-want +got):\n%s", diff)
	}

	isTerminal = old
	out, _, code := run(t, append(args, "call", "mcp__demo__delete_file", "--args", `{"path":"main.go"}`, "--json")...)
	if code != 0 || !strings.Contains(out, `"decision": "allowed"`) {
		t.Errorf("second call: exit %d\n%s", code, out)
	}
}

// TestToolsCallProgressAndTimeout: progress notifications are relayed to
// stderr; a call that outlives the server's toolTimeout with no progress
// ends as "timed out".
func TestToolsCallProgressAndTimeout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []any{
		map[string]any{"name": "demo", "type": "local", "command": []string{demoServer}},
		map[string]any{"name": "short", "type": "local", "command": []string{demoServer}, "toolTimeout": 300},
	}}})
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", path, "tools", "--project", dir, "call"}

	out, errOut, code := run(t, append(args, "mcp__demo__build", "--args", `{"steps":3,"seconds":0.3}`, "--yes")...)
	if code != 0 || strings.Count(errOut, "progress: ") != 4 || !strings.Contains(errOut, "progress: 3/3 step 3/3") {
		t.Errorf("build: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// One step of 30 s: the first progress would come at the end.
	out, errOut, code = run(t, append(args, "mcp__short__build", "--args", `{"steps":1,"seconds":30}`, "--yes")...)
	if code != 1 || !strings.Contains(out, "mcp__short__build timed out after 300 ms") {
		t.Errorf("short build: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

func TestServerOf(t *testing.T) {
	tests := []struct {
		id   string
		want map[string]bool
	}{
		{"mcp__demo__read_file", map[string]bool{"demo": true, "demo2": false, "dem": false}},
		{"mcp__my-srv__x__y", map[string]bool{"my-srv": true, "my": false}},
		// The provider alias of an id over 64 characters names its server.
		{toolid.Alias("mcp__averyveryverylongservername__" + strings.Repeat("t", 60)), map[string]bool{"averyveryverylongservername": true, "averyvery": false}},
		{toolid.Alias("mcp__" + strings.Repeat("s", 48) + "__tool_" + strings.Repeat("x", 20)), map[string]bool{strings.Repeat("s", 48): true, strings.Repeat("s", 47): false}},
		{"read", map[string]bool{"demo": false}},
		// tool_search searches the tools of every server.
		{orchestrator.ToolSearchName, map[string]bool{"demo": true, "other": true}},
	}
	for _, tc := range tests {
		f := serverOf(tc.id)
		got := map[string]bool{}
		for s := range tc.want {
			got[s] = f(s)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("serverOf(%q) (-want +got):\n%s", tc.id, diff)
		}
	}
}

// TestPromptApprover: the terminal prompt offers "always for this project"
// only in a trusted project, where a local allow rule applies; elsewhere
// "l" allows nothing and says why.
func TestPromptApprover(t *testing.T) {
	tests := []struct {
		trusted   bool
		input     string
		want      orchestrator.Answer
		offered   bool   // the prompt offers [l]ocal
		wantExtra string // more output that must appear
	}{
		{true, "l\n", orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeLocal}, true, ""},
		{true, "always\n", orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeUser}, true, ""},
		{false, "l\n", orchestrator.Answer{Decision: orchestrator.Deny}, false, "needs a trusted project"},
		{false, "local\n", orchestrator.Answer{Decision: orchestrator.Deny}, false, "needs a trusted project"},
		{false, "a\n", orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeUser}, false, "not trusted; run `freecode trust`"},
		{false, "y", orchestrator.Answer{Decision: orchestrator.AllowOnce}, false, ""},
		{false, "", orchestrator.Answer{Decision: orchestrator.Deny}, false, ""},
	}
	for _, tc := range tests {
		var out strings.Builder
		p := &promptApprover{in: bufio.NewReader(strings.NewReader(tc.input)), out: &out}
		got, err := p.Approve(t.Context(), orchestrator.Request{Tool: "mcp__demo__delete_file", Arguments: json.RawMessage(`{}`), Reason: "no rule; tool is not read-only", ProjectTrusted: tc.trusted})
		if err != nil {
			t.Fatalf("trusted=%v %q: %v", tc.trusted, tc.input, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("trusted=%v %q: answer (-want +got):\n%s", tc.trusted, tc.input, diff)
		}
		if offered := strings.Contains(out.String(), "\n  l  always allow it in this project"); offered != tc.offered {
			t.Errorf("trusted=%v: prompt offers l = %v, want %v:\n%s", tc.trusted, offered, tc.offered, out.String())
		}
		if !strings.Contains(out.String(), tc.wantExtra) {
			t.Errorf("trusted=%v %q: output does not say %q:\n%s", tc.trusted, tc.input, tc.wantExtra, out.String())
		}
	}
}

// TestToolsCallArgsFromFileAndStdin: arguments larger than the system lets
// one command-line argument be reach the server from a file (--args @file)
// and from standard input (--args -), through the real binary.
func TestToolsCallArgsFromFileAndStdin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	cfg, _ := json.Marshal(map[string]any{"mcp": map[string]any{
		"servers":        []any{map[string]any{"name": "demo", "type": "local", "command": []string{demoServer}}},
		"maxResultChars": 4 << 20,
	}})
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	message := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	args, _ := json.Marshal(map[string]string{"message": message})
	argsFile := filepath.Join(dir, "args.json")
	if err := os.WriteFile(argsFile, args, 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--config", path, "tools", "--project", dir, "call", "mcp__demo__echo", "--args"}

	if runtime.GOOS == "linux" {
		// What the file and stdin forms are for: as one argument, the
		// arguments do not even reach the program.
		err := exec.Command(freecodeBin, append(base, string(args))...).Run()
		if !errors.Is(err, syscall.E2BIG) {
			t.Fatalf("the arguments on the command line: %v, want E2BIG (else this test proves nothing)", err)
		}
	}
	for _, tc := range []struct {
		name  string
		flag  string
		stdin io.Reader
	}{
		{"file", "@" + argsFile, nil},
		{"stdin", "-", bytes.NewReader(args)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(freecodeBin, append(base, tc.flag)...)
			cmd.Stdin = tc.stdin
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr.String())
			}
			if got := stdout.String(); got != message+"\n" {
				t.Errorf("echoed %d bytes, want the %d sent", len(got), len(message)+1)
			}
		})
	}
}

func TestToolsCallArgsErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"message": `), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		flag  string
		stdin string
		want  string
	}{
		{`{"a":`, "", `--args is not valid JSON: {"a":`},
		{"@" + bad, "", "--args from " + bad + " is not valid JSON"},
		{"@" + filepath.Join(dir, "missing.json"), "", "no such file or directory"},
		{"-", "not json", "--args from standard input is not valid JSON"},
	}
	for _, tc := range tests {
		cmd := newRootCmd()
		var o, e bytes.Buffer
		cmd.SetOut(&o)
		cmd.SetErr(&e)
		cmd.SetIn(strings.NewReader(tc.stdin))
		cmd.SetArgs([]string{"--config", filepath.Join(dir, "config.json"), "tools", "--project", dir, "call", "x", "--args", tc.flag})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--args %q: %v, want an error saying %q", tc.flag, err, tc.want)
		}
	}
}

// A file that does not load fails the commands that need it, with its line
// and column: the CLI has no last good state to go on with. The rule files
// matter only to call.
func TestToolsBrokenFiles(t *testing.T) {
	tests := []struct {
		name    string
		file    string // relative to the config's directory
		listErr string // "" when list still works
		callErr string
	}{
		{"config", "config.json", "config.json:1:9: ", "config.json:1:9: "},
		{"user rules", "settings.json", "", "settings.json:1:9: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, dir := toolsConfig(t)
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(`{"mcp": `), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				cmd  []string
				want string
			}{
				{[]string{"list"}, tc.listErr},
				{[]string{"call", "mcp__demo__echo", "--args", `{"message":"hi"}`}, tc.callErr},
			} {
				_, errOut, code := run(t, append(args, c.cmd...)...)
				if c.want == "" {
					if code != 0 {
						t.Errorf("%s: exit %d: %s", c.cmd[0], code, errOut)
					}
				} else if code != 1 || !strings.Contains(errOut, c.want) {
					t.Errorf("%s: exit %d, stderr %q; want it to contain %q", c.cmd[0], code, errOut, c.want)
				}
			}
		})
	}
}

// A project's settings are the repository's: a bad server entry in them
// leaves the project's servers out, with a warning, and the user's own
// servers work. Only a settings file whose rules do not load stops a call,
// since a deny rule in it would not apply.
func TestToolsBrokenProjectSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		callErr  string // "" when call still works
	}{
		{"bad server name", `{"mcp": {"servers": [{"name": "bad name!", "command": ["/bin/true"]}]}}`, ""},
		{"syntax", `{"mcp": `, "settings.json:1:9: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := toolsConfig(t)
			proj := args[len(args)-1]
			if err := os.MkdirAll(filepath.Join(proj, ".freecode"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(proj, ".freecode", "settings.json"), []byte(tc.settings), 0o600); err != nil {
				t.Fatal(err)
			}
			warning := "warning: the project's servers are left out until " + filepath.Join(proj, ".freecode", "settings.json") + " is fixed"

			out, errOut, code := run(t, append(args, "list")...)
			if code != 0 || !strings.Contains(out, "mcp__demo__echo") || !strings.Contains(errOut, warning) {
				t.Errorf("list: exit %d\nstdout: %s\nstderr: %s\nwant the demo's tools and %q", code, out, errOut, warning)
			}
			out, errOut, code = run(t, append(args, "call", "mcp__demo__echo", "--args", `{"message":"hi there"}`)...)
			switch {
			case tc.callErr == "" && (code != 0 || !strings.Contains(out, "hi there") || !strings.Contains(errOut, warning)):
				t.Errorf("call: exit %d\nstdout: %s\nstderr: %s\nwant the echo and %q", code, out, errOut, warning)
			case tc.callErr != "" && (code != 1 || !strings.Contains(errOut, tc.callErr) || !strings.Contains(errOut, "no call runs")):
				t.Errorf("call: exit %d, stderr %q; want it to contain %q and say no call runs", code, errOut, tc.callErr)
			}
		})
	}
}

// TestToolsCallRetriesReadOnlyAfterCrash: the server crashes in the middle
// of the first call of each tool. A read-only call is retried once after
// the reconnect and succeeds, as in the sidecar; a destructive one is not
// retried, and says it may have run.
func TestToolsCallRetriesReadOnlyAfterCrash(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	path := filepath.Join(dir, "config.json")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "--config", path, "mcp", "add", "crashy", "local", "--env", mcptest.CrashServerEnv+"="+calls, "--", exe)
	args := []string{"--config", path, "tools", "--project", t.TempDir(), "call"}

	out, errOut, code := run(t, append(args, "mcp__crashy__crash_lookup")...)
	if code != 0 || out != "crash_lookup call 2\n" {
		t.Errorf("read-only call whose server crashed: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}
	if n := mcptest.CrashCalls(calls, "crash_lookup"); n != 2 {
		t.Errorf("the server saw %d calls of crash_lookup, want 2 (the crash, the retry)", n)
	}

	out, errOut, code = run(t, append(args, "mcp__crashy__crash_remove", "--yes")...)
	if code != 1 || !strings.Contains(out, "outcome unknown, not retried") || !strings.Contains(out, "may or may not have run") {
		t.Errorf("destructive call whose server crashed: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}
	if n := mcptest.CrashCalls(calls, "crash_remove"); n != 1 {
		t.Errorf("the server saw %d calls of crash_remove, want 1: a destructive call is never retried", n)
	}
}
