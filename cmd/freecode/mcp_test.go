package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

// demoServer and freecodeBin are the examples/demo-server and freecode
// binaries, built once by TestMain into one directory (as `make build` does,
// with examples/frontend, which the demo script runs too).
var demoServer, freecodeBin string

func TestMain(m *testing.M) {
	sandbox.RunBridge() // a sandboxed test server's bridge to its proxy
	mcptest.RunRelayIfAsked()
	if os.Getenv(testBrowserEnv) == "1" {
		os.Exit(runTestBrowser(os.Args[len(os.Args)-1]))
	}
	mcptest.RunCrashServerIfAsked()
	mcptest.RunTracedServerIfAsked()
	dir, err := os.MkdirTemp("", "freecode-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	demoServer = filepath.Join(dir, "demo-server")
	freecodeBin = filepath.Join(dir, "freecode")
	if out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../../examples/demo-server", "../../examples/frontend").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building freecode and demo-server: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		// signal.NotifyContext's loop goroutine lives for the process.
		if err := goleak.Find(goleak.IgnoreTopFunction("os/signal.signal_recv"), goleak.IgnoreTopFunction("os/signal.loop")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// run runs the CLI in-process the way main does, and returns what it printed
// and its exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		var ec exitCoder
		if asExitCoder(err, &ec) {
			code = ec.ExitCode()
		} else {
			fmt.Fprintln(&e, "freecode:", err)
			code = 1
		}
	}
	return o.String(), e.String(), code
}

// mustRun runs the CLI and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("freecode %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func load(t *testing.T, path string) *config.Config {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The parts of a shared config file FreeCode does not own: they must come
// out of every edit byte for byte.
const (
	sharedHead = `// FreeCode settings. Provider keys live here too.
{
  "model": "claude-sonnet-4",   // the active model
  "provider": {
    "anthropic": { "apiKey": "sk-ant-KEEP-ME" },
    /* a block comment */ "openai": { "apiKey": "sk-KEEP-ME-TOO" }
  },
  "someFutureKey": [1, 2, {"nested": true}],
  `
	sharedTail = `,
  // trailing settings
  "telemetry": false,
}
`
)

func TestEditsKeepOtherBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	mcpSection := `"mcp": {
    // my servers
    "servers": [
      { "name": "existing", "type": "local", "command": ["true"] }
    ],
    "pollInterval": 5000
  }`
	if err := os.WriteFile(path, []byte(sharedHead+mcpSection+sharedTail), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.HasPrefix(s, sharedHead) || !strings.HasSuffix(s, sharedTail) {
			t.Errorf("after %s, bytes outside mcp changed:\n%s", step, s)
		}
	}

	out := mustRun(t, "--config", path, "mcp", "add", "web", "remote", "https://mcp.example.com/mcp",
		"--header", "Authorization=Bearer s3cret", "--transport", "http", "--timeout", "10s")
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "Authorization: ***") {
		t.Errorf("add printed a header value:\n%s", out)
	}
	check("add remote")
	mustRun(t, "--config", path, "mcp", "add", "tool", "local", `node "/opt/my tools/server.js" --port 0`,
		"--env", "TOKEN=${env:TOKEN}", "--env", "MODE=fast", "--timeout", "2500", "--cwd", "/tmp")
	check("add local")
	mustRun(t, "--config", path, "mcp", "add", "argv", "local", "--disabled", "--", "printf", "%s\n", "a b")
	check("add argv")

	cfg := load(t, path)
	want := []config.Server{
		{Name: "existing", Type: "local", Enabled: true, Command: []string{"true"}},
		{Name: "web", Type: "remote", Enabled: true, URL: "https://mcp.example.com/mcp", Transport: "http",
			Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 10e9},
		{Name: "tool", Type: "local", Enabled: true, Command: []string{"node", "/opt/my tools/server.js", "--port", "0"},
			Env: map[string]string{"TOKEN": "${env:TOKEN}", "MODE": "fast"}, Cwd: "/tmp", Timeout: 2500e6},
		{Name: "argv", Type: "local", Enabled: false, Command: []string{"printf", "%s\n", "a b"}},
	}
	type entry struct {
		Name, Type, URL, Transport, Cwd string
		Enabled                         bool
		Command                         []string
		Env, Headers                    map[string]string
		Timeout                         int64
	}
	simplify := func(ss []config.Server) []entry {
		var out []entry
		for _, s := range ss {
			to := int64(s.Timeout)
			if s.Timeout == config.DefaultTimeout {
				to = 0
			}
			tr := s.Transport
			if s.Type == config.TypeLocal {
				tr = ""
			}
			out = append(out, entry{s.Name, s.Type, s.URL, tr, s.Cwd, s.Enabled, s.Command, s.Env, s.Headers, to})
		}
		return out
	}
	if d := cmp.Diff(simplify(want), simplify(cfg.MCP.Servers)); d != "" {
		t.Errorf("servers after add (-want +got):\n%s", d)
	}

	list := mustRun(t, "--config", path, "mcp", "list")
	for _, s := range []string{"NAME", "existing", "web", "https://mcp.example.com/mcp (http)", `node '/opt/my tools/server.js' --port 0`, "argv"} {
		if !strings.Contains(list, s) {
			t.Errorf("list lacks %q:\n%s", s, list)
		}
	}
	if strings.Contains(list, "s3cret") {
		t.Errorf("list shows a secret:\n%s", list)
	}
	if !regexp.MustCompile(`(?m)^argv\s+local\s+no\s`).MatchString(list) {
		t.Errorf("list does not show argv as disabled:\n%s", list)
	}

	mustRun(t, "--config", path, "mcp", "enable", "argv")
	check("enable")
	mustRun(t, "--config", path, "mcp", "disable", "existing")
	check("disable")
	got := map[string]bool{}
	for _, s := range load(t, path).MCP.Servers {
		got[s.Name] = s.Enabled
	}
	if d := cmp.Diff(map[string]bool{"existing": false, "web": true, "tool": true, "argv": true}, got); d != "" {
		t.Errorf("enabled after enable/disable (-want +got):\n%s", d)
	}

	for _, name := range []string{"web", "tool", "argv"} {
		mustRun(t, "--config", path, "mcp", "remove", name)
		check("remove " + name)
	}
	if n := len(load(t, path).MCP.Servers); n != 1 {
		t.Errorf("%d servers after removing three of four", n)
	}
}

func TestUnknownServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	mustRun(t, "--config", path, "mcp", "add", "alpha", "local", "true")
	mustRun(t, "--config", path, "mcp", "add", "beta", "local", "true")
	before, _ := os.ReadFile(path)
	for _, verb := range []string{"remove", "enable", "disable", "start", "tools"} {
		_, errOut, code := run(t, "--config", path, "mcp", verb, "gamma")
		if code != 1 || !strings.Contains(errOut, `no server named "gamma"`) || !strings.Contains(errOut, "configured: alpha, beta") {
			t.Errorf("mcp %s gamma: exit %d, stderr %q", verb, code, errOut)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("config changed by failed commands")
	}
}

func TestParseErrorTouchesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	broken := "{\n  \"model\": \"x\",\n  \"mcp\": { \"servers\": [ }\n}\n"
	if err := os.WriteFile(path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	lineCol := regexp.MustCompile(regexp.QuoteMeta(path) + `:3:\d+: `)
	for _, args := range [][]string{
		{"mcp", "add", "x", "local", "true"},
		{"mcp", "remove", "x"},
		{"mcp", "enable", "x"},
		{"mcp", "disable", "x"},
		{"mcp", "list"},
		{"mcp", "start", "x"},
		{"mcp", "import", "cursor", "testdata/import/cursor.json"},
	} {
		_, errOut, code := run(t, append([]string{"--config", path}, args...)...)
		if code != 1 || !lineCol.MatchString(errOut) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %s:3:col", strings.Join(args, " "), code, errOut, path)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != broken {
		t.Errorf("broken config was rewritten:\n%s", b)
	}
}

func TestAddRejects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"double underscore", []string{"my__server", "local", "true"}, `"__"`},
		{"bad characters", []string{"my server", "local", "true"}, "A-Z, a-z, 0-9"},
		{"unknown type", []string{"x", "docker", "true"}, "want local or remote"},
		{"too many args", []string{"x", "local", "npx", "pkg"}, "quote the command"},
		{"server flag unquoted", []string{"x", "local", "npx", "-y", "pkg"}, "put it after --"},
		{"empty command", []string{"x", "local", ""}, "needs a command"},
		{"bad quoting", []string{"x", "local", `node "unterminated`}, "unterminated"},
		{"env on remote", []string{"x", "remote", "https://example.com/mcp", "--env", "A=1"}, "for local servers"},
		{"header on local", []string{"x", "local", "true", "--header", "A=1"}, "for remote servers"},
		{"bad transport", []string{"x", "remote", "https://example.com/mcp", "--transport", "ws"}, "want http, sse or auto"},
		{"bad env", []string{"x", "local", "true", "--env", "NOVALUE"}, "want KEY=VALUE"},
		{"bad timeout", []string{"x", "local", "true", "--timeout", "soon"}, "--timeout"},
		{"negative timeout", []string{"x", "local", "true", "--timeout", "-5"}, "must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, append([]string{"--config", path, "mcp", "add"}, tc.args...)...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, errOut, tc.want)
			}
		})
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("rejected adds created the config file: %v", err)
	}

	mustRun(t, "--config", path, "mcp", "add", "dup", "local", "true")
	if _, errOut, code := run(t, "--config", path, "mcp", "add", "dup", "local", "false"); code != 1 || !strings.Contains(errOut, "dup") {
		t.Errorf("duplicate add: exit %d, stderr %q", code, errOut)
	}
}

var startedRe = regexp.MustCompile(`✓ Server "([^"]+)" started with (\d+) tools?\n`)

func TestStartDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	mustRun(t, "--config", path, "mcp", "add", "demo", "local", "--", demoServer)

	out := mustRun(t, "--config", path, "mcp", "start", "demo")
	want := `✓ Server "demo" started with 7 tools
  - build
  - create_issue
  - delete_file [destructive]
  - echo [read-only]
  - list_files [read-only]
  - read_file [read-only]
  - search [read-only]
  freecode-demo 1.0.0, protocol 2026-07-28, over stdio, pid N
`
	out = regexp.MustCompile(`pid \d+`).ReplaceAllString(out, "pid N")
	if d := cmp.Diff(want, sortToolLines(out)); d != "" {
		t.Errorf("start output (-want +got):\n%s", d)
	}

	out = mustRun(t, "--config", path, "mcp", "tools", "demo")
	for _, re := range []string{`(?m)^7 tools of "demo"`, `(?m)^  delete_file\s+D\s+Delete a file`, `(?m)^  search\s+R\s+Search`, `(?m)^  build\s+-\s+Run a simulated build`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("tools output does not match %s:\n%s", re, out)
		}
	}

	out = mustRun(t, "--config", path, "mcp", "tools", "demo", "--json")
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("tools --json is not JSON: %v\n%s", err, out)
	}
	if len(tools) != 7 {
		t.Errorf("tools --json: %d tools, want 7", len(tools))
	}
	for _, tool := range tools {
		var compact bytes.Buffer
		json.Compact(&compact, tool.InputSchema)
		if tool.Name == "create_issue" && !strings.Contains(compact.String(), `"$ref":"#/$defs/user"`) {
			t.Errorf("create_issue schema lost its $ref: %s", tool.InputSchema)
		}
	}
}

// sortToolLines sorts the "  - tool" lines after start's first line, since a
// server may list its tools in any order.
func sortToolLines(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > 1 {
		tail := lines[1:]
		slices.Sort(tail)
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestStartFailing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sh")
	}
	path := filepath.Join(t.TempDir(), "config.json")
	mustRun(t, "--config", path, "mcp", "add", "crashy", "local", "--", "sh", "-c", "echo 'fatal: missing API key' >&2; exit 3")
	mustRun(t, "--config", path, "mcp", "add", "nosuch", "local", "/nonexistent/mcp-server")

	out, errOut, code := run(t, "--config", path, "mcp", "start", "crashy")
	if code != 1 || out != "" {
		t.Errorf("start crashy: exit %d, stdout %q; want 1 and nothing", code, out)
	}
	if !strings.HasPrefix(errOut, `✗ Server "crashy" failed: `) || !strings.Contains(errOut, "\n    fatal: missing API key\n") {
		t.Errorf("start crashy: stderr does not have the ✗ line and the indented stderr tail:\n%s", errOut)
	}

	_, errOut, code = run(t, "--config", path, "mcp", "tools", "nosuch")
	if code != 1 || !strings.HasPrefix(errOut, `✗ Server "nosuch" failed: `) || !strings.Contains(errOut, "/nonexistent/mcp-server") {
		t.Errorf("tools nosuch: exit %d, stderr:\n%s", code, errOut)
	}
}

func TestImport(t *testing.T) {
	tests := []struct {
		kind string
		want []string // names added, in file order
	}{
		{"claude-desktop", []string{"filesystem", "memory"}},
		{"claude-code", []string{"github", "sentry", "notes"}},
		{"vscode", []string{"memory", "githubRemote"}},
		{"cursor", []string{"fetch", "linear"}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			// One name already taken: import skips it rather than clobber.
			mustRun(t, "--config", path, "mcp", "add", tc.want[0], "local", "mine")
			src := filepath.Join("testdata", "import", tc.kind+".json")
			before, _ := os.ReadFile(path)

			out := mustRun(t, "--config", path, "mcp", "import", tc.kind, src, "--dry-run")
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Errorf("--dry-run wrote the config")
			}
			if !strings.Contains(out, tc.want[0]+": already configured, skipped") || !strings.Contains(out, fmt.Sprintf("%d server", len(tc.want)-1)) {
				t.Errorf("dry run output:\n%s", out)
			}
			if strings.Contains(out, "lin_api_secret") || strings.Contains(out, "${GITHUB_TOKEN}") {
				t.Errorf("import printed a secret:\n%s", out)
			}

			mustRun(t, "--config", path, "mcp", "import", tc.kind, src)
			var got []string
			for _, s := range load(t, path).MCP.Servers {
				got = append(got, s.Name)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("servers after import (-want +got):\n%s", d)
			}
			if s, _ := load(t, path).Server(tc.want[0]); len(s.Command) != 1 || s.Command[0] != "mine" {
				t.Errorf("import overwrote the existing %q: %+v", tc.want[0], s)
			}
		})
	}

	t.Run("missing default", func(t *testing.T) {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("XDG_CONFIG_HOME", t.TempDir())
		_, errOut, code := run(t, "--config", filepath.Join(t.TempDir(), "c.json"), "mcp", "import", "cursor")
		if code != 1 || !strings.Contains(errOut, "no Cursor config at "+filepath.Join(os.Getenv("HOME"), ".cursor", "mcp.json")) {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("unknown kind", func(t *testing.T) {
		_, errOut, code := run(t, "--config", filepath.Join(t.TempDir(), "c.json"), "mcp", "import", "emacs", "x.json")
		if code != 1 || !strings.Contains(errOut, "want one of claude-desktop, claude-code, vscode, cursor") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
}

// A tool description's first line, as `mcp tools` shows it, is escaped
// (internal/termtext): a server's text cannot drive the user's terminal.
func TestFirstLineEscapes(t *testing.T) {
	if got, want := firstLine("  \x1b[2Jwipe\nsecond line", 100), `\x1b[2Jwipe`; got != want {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
	if got, want := firstLine("reads \u2067files\u2069 only", 100), `reads \u2067files\u2069 only`; got != want {
		t.Errorf("firstLine = %q, want %q", got, want)
	}
}
