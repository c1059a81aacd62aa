package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp/sandbox"
)

// The tests here play a hostile server from inside its sandbox: the test
// binary, run as a real subprocess MCP server with its attack tool
// (mcptest.AddAttackTool), tries one way out per call, and the test then
// looks on the host for what got through. The server runs as the test's
// user; bubblewrap drops every capability in the sandbox, so a test run
// by root checks what an ordinary user's server could do (a file's owner
// reads it either way; nothing else is granted by uid 0 without
// capabilities).

// hostile starts the attack server sandboxed as srv says (name, type,
// command and timeout filled in), for a user whose $HOME is home, and
// returns the Conn and a function that tries one attack and returns the
// answer's text.
func hostile(t *testing.T, home string, srv config.Server) (*Conn, func(op, path, data string) string) {
	t.Helper()
	needBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv.Name, srv.Type, srv.Enabled, srv.Timeout = "hostile", config.TypeLocal, true, time.Minute
	srv.Command = []string{exe, "attack"}
	if srv.Env == nil {
		srv.Env = map[string]string{}
	}
	srv.Env[testServerEnv] = "1"
	if srv.Sandbox == nil {
		srv.Sandbox = &config.Sandbox{Network: config.NetworkNone}
	}
	// FreeCode's own environment: the user's $HOME is a home to guard.
	t.Setenv("HOME", home)
	c := NewConn(srv, &ConnOptions{NoRetry: true})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, func(op, path, data string) string {
		t.Helper()
		res, err := c.CallTool(t.Context(), "attack", map[string]any{"op": op, "path": path, "data": data}, nil)
		if err != nil {
			t.Fatalf("attack %s %s: %v", op, path, err)
		}
		return res.Content[0].(*mcpsdk.TextContent).Text
	}
}

// hostDir is a new directory the sandbox shows as the host has it: not
// under /tmp, which is the sandbox's own (a secret there would be hidden
// whatever the policy said, and the test would prove nothing).
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "freecode-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeFiles writes each file of files (path: content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// An entry's own HOME and npm_config_cache move neither what the sandbox
// hides nor what it lets the server write: the home is the user's, from
// the user database and FreeCode's own environment. Before, an entry
// with "HOME": "/nonexistent" read ~/.ssh and ~/.aws, and one with
// "npm_config_cache": "/" wrote ~/.bashrc.
func TestEntryEnvCannotMoveTheSandbox(t *testing.T) {
	home, project := hostDir(t), t.TempDir()
	writeFiles(t, home, map[string]string{
		".ssh/id_rsa": "SECRET-KEY", ".aws/credentials": "SECRET-AWS",
		".freecode/config.json": `{"provider": {"apiKey": "SECRET-PROVIDER"}}`, ".bashrc": "original\n",
		"notes.txt": "readable",
	})
	c, attack := hostile(t, home, config.Server{Cwd: project, Env: map[string]string{"HOME": "/nonexistent", "npm_config_cache": "/"}})
	if got := attack("read", filepath.Join(home, "notes.txt"), ""); got != "ok: readable" {
		t.Fatalf("read ~/notes.txt: %s (the home must be there to be hidden in)", got)
	}
	for _, f := range []string{".ssh/id_rsa", ".aws/credentials", ".freecode/config.json"} {
		if got := attack("read", filepath.Join(home, f), ""); strings.Contains(got, "SECRET") {
			t.Errorf("read ~/%s: %s", f, got)
		}
	}
	attack("write", filepath.Join(home, ".bashrc"), "echo owned\n")
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "original\n" {
		t.Errorf("~/.bashrc is now %q", b)
	}
	// The status says what the sandbox is, from the policy it runs.
	want, err := sandbox.PolicyOf(c.Config(), sandbox.HostOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	st := c.Status()
	if st.Sandbox != want.Describe() {
		t.Errorf("status's sandbox:\n%s\nwant\n%s", st.Sandbox, want.Describe())
	}
	for _, s := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".npm") + " (npm's cache)"} {
		if !strings.Contains(st.Sandbox, s) {
			t.Errorf("status's sandbox names no %s: %s", s, st.Sandbox)
		}
	}
	if strings.Contains(st.Sandbox, "writes /,") || strings.Contains(st.Sandbox, "/nonexistent") {
		t.Errorf("status's sandbox follows the entry's env: %s", st.Sandbox)
	}
}

// What runs later, outside any sandbox, is never writable from inside,
// though its directory is: git's hooks and config, the editors' and
// FreeCode's settings, npm's, and (in a home directory) shell start-up
// files; those that do not exist cannot be created, and the placeholders
// that keep them from it are gone once the server stops. The hook a
// server tried to plant does not run at the user's next git commit.
func TestProtectedPathsStayUnwritten(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home, project := t.TempDir(), t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", project, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFiles(t, project, map[string]string{"package.json": "{}\n", ".vscode/settings.json": "{}\n"})
	writeFiles(t, home, map[string]string{".bashrc": "original\n", "notes/todo.txt": "x"})
	marker := filepath.Join(home, "hook-ran")
	hook := "#!/bin/sh\ntouch " + marker + "\n"
	c, attack := hostile(t, home, config.Server{Cwd: project, Sandbox: &config.Sandbox{
		Network: config.NetworkNone, AllowWrite: []string{home},
	}})
	// Without a refusal somewhere the test proves nothing: the directory
	// itself is writable.
	if got := attack("write", filepath.Join(project, "src", "ok.txt"), "fine"); got != "ok" {
		t.Fatalf("write in the project: %s", got)
	}
	for _, p := range []struct{ op, path, data string }{
		{"exec", ".git/hooks/pre-commit", hook},
		{"write", ".git/config", "[core]\n\thooksPath = /tmp\n"},
		{"write", ".vscode/tasks.json", `{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}`},
		{"write", ".vscode/settings.json", `{"evil": true}`},
		{"write", ".freecode/settings.local.json", `{"permissions":{"allow":["mcp__*"]}}`},
		{"write", ".mcp.json", `{"mcpServers":{}}`},
		{"write", ".npmrc", "script-shell=/tmp/evil\n"},
		{"write", ".idea/workspace.xml", "<x/>"},
	} {
		if got := attack(p.op, filepath.Join(project, p.path), p.data); got == "ok" {
			t.Errorf("%s %s: it was written", p.op, p.path)
		}
	}
	// A writable home is sealed: what is in it is writable, nothing new
	// at its top.
	if got := attack("write", filepath.Join(home, "notes", "todo.txt"), "y"); got != "ok" {
		t.Errorf("write ~/notes/todo.txt: %s", got)
	}
	for _, f := range []string{".bashrc", ".profile", ".bash_profile", ".gitconfig", "new-file"} {
		if got := attack("write", filepath.Join(home, f), "echo owned\n"); got == "ok" {
			t.Errorf("write ~/%s: it was written", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(project, ".vscode", "settings.json")); string(b) != "{}\n" {
		t.Errorf(".vscode/settings.json is now %q", b)
	}
	// The user's next commit, outside any sandbox.
	git("commit", "-q", "--allow-empty", "-m", "after the server")
	if _, err := os.Stat(marker); err == nil {
		t.Error("the planted pre-commit hook ran at git commit")
	}
	// Stopped, the server leaves no placeholder behind.
	c.Close()
	for _, p := range []string{".freecode", ".mcp.json", ".npmrc", ".idea", filepath.Join(home, ".profile"), filepath.Join(home, ".gitconfig")} {
		if !filepath.IsAbs(p) {
			p = filepath.Join(project, p)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is left on the host", p)
		}
	}
}

// Credential files beyond the keys' directories are hidden too, and
// ~/.npmrc is read without its tokens (npm keeps its registry settings).
func TestCredentialFilesHidden(t *testing.T) {
	home, project := hostDir(t), t.TempDir()
	writeFiles(t, home, map[string]string{
		"notes.txt":                 "readable",
		".npmrc":                    "registry=https://npm.example.com/\n//npm.example.com/:_authToken=SECRET-NPM\n_auth=SECRET-AUTH\n",
		".git-credentials":          "https://u:SECRET-GIT@example.com\n",
		".bash_history":             "export TOKEN=SECRET-HISTORY\n",
		".pypirc":                   "[pypi]\npassword = SECRET-PYPI\n",
		".cargo/credentials.toml":   "[registry]\ntoken = \"SECRET-CARGO\"\n",
		".vault-token":              "SECRET-VAULT",
		".config/git/credentials":   "https://u:SECRET-GIT2@example.com\n",
		".m2/settings.xml":          "<password>SECRET-MAVEN</password>",
		".gradle/gradle.properties": "token=SECRET-GRADLE\n",
	})
	_, attack := hostile(t, home, config.Server{Cwd: project})
	if got := attack("read", filepath.Join(home, "notes.txt"), ""); got != "ok: readable" {
		t.Fatalf("read ~/notes.txt: %s (the home must be there to be hidden in)", got)
	}
	for _, f := range []string{".git-credentials", ".bash_history", ".pypirc", ".cargo/credentials.toml", ".vault-token", ".config/git/credentials", ".m2/settings.xml", ".gradle/gradle.properties"} {
		if got := attack("read", filepath.Join(home, f), ""); strings.Contains(got, "SECRET") {
			t.Errorf("read ~/%s: %s", f, got)
		}
	}
	got := attack("read", filepath.Join(home, ".npmrc"), "")
	if strings.Contains(got, "SECRET") || !strings.Contains(got, "registry=https://npm.example.com/") {
		t.Errorf("read ~/.npmrc: %q, want its registry and no token", got)
	}
}

// A config file outside ~/.freecode (--config, $FREECODE_CONFIG), the
// rules, sign-ins and serve.json beside it are hidden as ~/.freecode is.
func TestConfigElsewhereHidden(t *testing.T) {
	home, project, repo := t.TempDir(), t.TempDir(), hostDir(t)
	cfg := filepath.Join(repo, "freecode.json")
	writeFiles(t, repo, map[string]string{
		"README":        "readable",
		"freecode.json": `{"provider": {"apiKey": "SECRET-PROVIDER"}}`, "auth/tokens.json": "SECRET-TOKEN",
		"serve.json": `{"token": "SECRET-SERVE"}`,
	})
	sandbox.GuardConfig(cfg)
	_, attack := hostile(t, home, config.Server{Cwd: project})
	if got := attack("read", filepath.Join(repo, "README"), ""); got != "ok: readable" {
		t.Fatalf("read the repository's README: %s", got)
	}
	for _, f := range []string{cfg, filepath.Join(repo, "auth", "tokens.json"), filepath.Join(repo, "serve.json")} {
		if got := attack("read", f, ""); strings.Contains(got, "SECRET") {
			t.Errorf("read %s: %s", f, got)
		}
	}
}

// A server whose own files live under /tmp starts sandboxed: its program
// and its package (a script's directory up to its package.json, the
// node_modules it imports from) are bound in read-only, though the
// sandbox's /tmp is its own. Before, node said "Cannot find module".
func TestServerUnderTmpStarts(t *testing.T) {
	needBwrap(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	pkg, err := os.MkdirTemp("/tmp", "freecode-pkg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(pkg) })
	writeFiles(t, pkg, map[string]string{
		"package.json":                `{"name": "tmp-server", "version": "1.0.0"}`,
		"node_modules/greet/index.js": `module.exports = (n) => "hello " + n;`,
		"dist/index.js":               nodeServer,
	})
	c := NewConn(config.Server{
		Name: "tmp", Type: config.TypeLocal, Enabled: true, Timeout: time.Minute, Cwd: t.TempDir(),
		Command: []string{node, filepath.Join(pkg, "dist", "index.js")},
		Sandbox: &config.Sandbox{Network: config.NetworkNone},
	}, &ConnOptions{NoRetry: true})
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("start: %v\n%s", err, strings.Join(c.Status().StderrTail, "\n"))
	}
	res, err := c.CallTool(t.Context(), "greet", map[string]any{}, nil)
	if err != nil || res.Content[0].(*mcpsdk.TextContent).Text != "hello sandbox" {
		t.Fatalf("greet: %v %v", res, err)
	}
	if st := c.Status(); !strings.Contains(st.Sandbox, "also reads "+pkg) {
		t.Errorf("status's sandbox does not say it reads %s: %s", pkg, st.Sandbox)
	}
}

// A server that exits on a file the sandbox's own /tmp hides is told so,
// with the line that lets it read the file, and that line works.
func TestHiddenTmpFileNamesTheLine(t *testing.T) {
	needBwrap(t)
	data, err := os.MkdirTemp("/tmp", "freecode-data-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	input := filepath.Join(data, "input.json")
	writeFiles(t, data, map[string]string{"input.json": "{}"})
	start := func(b *config.Sandbox) *Conn {
		c := NewConn(config.Server{
			Name: "reads", Type: config.TypeLocal, Enabled: true, Timeout: time.Minute, Cwd: t.TempDir(),
			Command: []string{"sh", "-c", "cat " + input + " >&2 || exit 3; exit 4"}, Sandbox: b,
		}, &ConnOptions{NoRetry: true})
		t.Cleanup(func() { c.Close() })
		if err := c.Start(t.Context()); err == nil {
			t.Fatal("a server that exits started")
		}
		return c
	}
	st := start(&config.Sandbox{Network: config.NetworkNone}).Status()
	want := `to allow it, set in the server's entry: "sandbox":{"filesystem":{"allowRead":["` + data + `"]}}`
	if !strings.Contains(st.LastError, want) || !strings.Contains(st.LastError, "not in its sandbox") {
		t.Errorf("the status's error does not name the line %s: %s", want, st.LastError)
	}
	// With the line, the file is read (the server exits 4, not 3).
	st = start(&config.Sandbox{Network: config.NetworkNone, AllowRead: []string{data}}).Status()
	if !st.HasExitCode || st.ExitCode != 4 {
		t.Errorf("with allowRead: exit %d (%v): %s", st.ExitCode, st.HasExitCode, st.LastError)
	}
}

// nodeServer is a stdio MCP server in plain node, with one tool whose
// answer comes from a module of its own node_modules.
const nodeServer = `
const greet = require("greet");
const rl = require("readline").createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "tmp", version: "1.0.0" } } });
  } else if (m.method === "tools/list") {
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "greet", inputSchema: { type: "object" } }] } });
  } else if (m.method === "tools/call") {
    send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: greet("sandbox") }] } });
  } else {
    send({ jsonrpc: "2.0", id: m.id, result: {} });
  }
});
`
