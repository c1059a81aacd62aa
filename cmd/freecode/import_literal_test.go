package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Claude's files hold credentials written out in "env" and "headers".
// Import says so and copies them only when asked to; --move-secrets (or
// "yes" at a terminal) keeps each in the store, the config holding its
// ${secret:NAME}: a header keeps its scheme, and a name another value
// holds is not overwritten.
func TestImportMovesLiteralSecrets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	const (
		ghToken    = "ghp_Literal0123456789abcdef"
		otherToken = "ghp_Another9876543210fedcba"
		braveKey   = "BSA-brave-key-value-7"
		bearer     = "sk-remote-0123456789abcdef"
	)
	src := filepath.Join(t.TempDir(), ".claude.json")
	writeFixture(t, src, `{"mcpServers": {
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "`+ghToken+`", "LOG_LEVEL": "debug", "AUTH_ENABLED": "true"}},
  "brave": {"command": "npx", "args": ["-y", "@brave/brave-search-mcp-server"], "env": {"BRAVE_API_KEY": "`+braveKey+`"}},
  "octo": {"command": "octo-mcp", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "`+otherToken+`", "HOME_DIR": "/home/me/projects/a1b2c3d4e5f6g7h8"}},
  "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer `+bearer+`", "X-Team": "platform"}}
}}`)
	store := filepath.Join(home, ".freecode", "auth", "tokens.json")
	values := []string{ghToken, otherToken, braveKey, bearer}

	// Not a terminal, no flag: copied as written, and said how to move them.
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	out, errOut, code := runInput(t, "", false, "--config", cfgPath, "mcp", "import", "claude-code", src)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "4 values look like credentials written out in the file: GITHUB_PERSONAL_ACCESS_TOKEN of github, BRAVE_API_KEY of brave, GITHUB_PERSONAL_ACCESS_TOKEN of octo, header Authorization of remote.\n") ||
		!strings.Contains(out, "Without --move-secrets they are copied as written; with it they go to the OS keychain") {
		t.Errorf("import from a pipe:\n%s", out)
	}
	if g, _ := load(t, cfgPath).Server("github"); g.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != ghToken {
		t.Errorf("copied env: %v", g.Env)
	}

	// A dry run with the flag says what would move, and stores nothing.
	cfgPath = filepath.Join(t.TempDir(), "config.json")
	out, errOut, code = runInput(t, "", false, "--config", cfgPath, "mcp", "import", "claude-code", src, "--dry-run", "--move-secrets")
	if code != 0 || !strings.Contains(out, "  Would move GITHUB_PERSONAL_ACCESS_TOKEN of github into the secret GITHUB_PERSONAL_ACCESS_TOKEN\n") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if got := holders(t, ghToken, home); len(got) != 0 {
		t.Errorf("a dry run stored the value in %v", got)
	}

	// --move-secrets: each kept in the store, referenced from the config.
	out, errOut, code = runInput(t, "", false, "--config", cfgPath, "mcp", "import", "claude-code", src, "--move-secrets")
	if code != 0 {
		t.Fatalf("import --move-secrets: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"  Moved GITHUB_PERSONAL_ACCESS_TOKEN of github into the secret GITHUB_PERSONAL_ACCESS_TOKEN\n",
		"  Moved BRAVE_API_KEY of brave into the secret BRAVE_API_KEY\n",
		"  Moved GITHUB_PERSONAL_ACCESS_TOKEN of octo into the secret OCTO_GITHUB_PERSONAL_ACCESS_TOKEN\n",
		"  Moved header Authorization of remote into the secret REMOTE_AUTHORIZATION\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import --move-secrets: no %q in\n%s", want, out)
		}
	}
	cfg := load(t, cfgPath)
	g, _ := cfg.Server("github")
	o, _ := cfg.Server("octo")
	r, _ := cfg.Server("remote")
	if g.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${secret:GITHUB_PERSONAL_ACCESS_TOKEN}" || g.Env["LOG_LEVEL"] != "debug" || g.Env["AUTH_ENABLED"] != "true" ||
		o.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${secret:OCTO_GITHUB_PERSONAL_ACCESS_TOKEN}" || o.Env["HOME_DIR"] != "/home/me/projects/a1b2c3d4e5f6g7h8" ||
		r.Headers["Authorization"] != "Bearer ${secret:REMOTE_AUTHORIZATION}" || r.Headers["X-Team"] != "platform" {
		t.Errorf("entries: github %v, octo %v, remote %v", g.Env, o.Env, r.Headers)
	}
	for _, v := range values {
		if strings.Contains(out+errOut, v) {
			t.Errorf("the import printed a value:\n%s%s", out, errOut)
		}
		if diff := cmp.Diff([]string{store}, holders(t, v, home, filepath.Dir(cfgPath))); diff != "" {
			t.Errorf("files holding a moved value (-want +got):\n%s", diff)
		}
	}
	// The secret of octo is the one moved for it, not github's.
	out, _, _ = runInput(t, "", false, "secret", "ls")
	if !strings.Contains(out, "OCTO_GITHUB_PERSONAL_ACCESS_TOKEN") {
		t.Errorf("secret ls:\n%s", out)
	}

	// A terminal: asked; "n" copies them as written.
	cfgPath = filepath.Join(t.TempDir(), "config.json")
	out, errOut, _ = runInput(t, "n\n", true, "--config", cfgPath, "mcp", "import", "claude-code", src)
	if !strings.Contains(errOut, "Keep them in the OS keychain (else ~/.freecode/auth) and ${secret:NAME} in the config? [Y/n] ") || !strings.Contains(out, "  copied as they are\n") {
		t.Errorf("terminal, no:\n%s%s", out, errOut)
	}
	if b, _ := load(t, cfgPath).Server("brave"); b.Env["BRAVE_API_KEY"] != braveKey {
		t.Errorf("after no: %v", b.Env)
	}
}

// A server imported from VS Code whose key was a password ${input:…}
// starts after the one prompt the import shows: the value typed there is
// what the server finds in its environment (it refuses to start
// otherwise), with nothing more to set.
func TestImportedInputServerStartsAfterOnePrompt(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	const value = "typed-once-9f2c-4e1a"
	sum := sha256.Sum256([]byte(value))
	gate := `[ "$(printf %s "$DEMO_API_KEY" | sha256sum | cut -c1-64)" = "` + hex.EncodeToString(sum[:]) + `" ] || { echo "wrong DEMO_API_KEY" >&2; exit 3; }; exec "$0"`
	file, err := json.Marshal(map[string]any{
		"inputs": []any{map[string]any{"type": "promptString", "id": "demo-key", "description": "Demo API key", "password": true}},
		"servers": map[string]any{"gated": map[string]any{
			"command": "sh", "args": []string{"-c", gate, demoServer}, "env": map[string]string{"DEMO_API_KEY": "${input:demo-key}"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "mcp.json")
	writeFixture(t, src, string(file))
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	out, errOut, code := runInput(t, value+"\n", true, "--config", cfgPath, "mcp", "import", "vscode", src)
	if code != 0 || !strings.Contains(out, "✓ Saved secret demo-key in ") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "--config", cfgPath, "tools", "--project", t.TempDir(), "call", "mcp__gated__echo", "--args", `{"message":"after one prompt"}`)
	if code != 0 || !strings.Contains(out, "after one prompt") {
		t.Errorf("a call of the imported server: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
