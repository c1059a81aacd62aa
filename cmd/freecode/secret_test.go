package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

// runInput is run with stdin; terminal says whether the CLI takes it for
// a terminal (isTerminal), whose typing is then read from stdin too.
func runInput(t *testing.T, stdin string, terminal bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	old := isTerminal
	isTerminal = func(io.Reader) bool { return terminal }
	defer func() { isTerminal = old }()
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetIn(strings.NewReader(stdin))
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

// secretHome makes a HOME whose secrets stay in its file (no keychain is
// asked), with a config whose servers reference secrets, and a project
// whose server does too. It returns the config's path and the project.
func secretHome(t *testing.T) (cfgPath, project string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	cfgPath = filepath.Join(home, ".freecode", "config.json")
	writeFixture(t, cfgPath, `{"mcp": {"servers": [
  {"name": "github", "type": "remote", "url": "https://api.example.com/mcp",
   "headers": {"Authorization": "Bearer ${secret:GH_TOKEN}"}},
  {"name": "tool", "type": "local", "command": "tool", "env": {"KEY": "${secret:MISSING_ONE}", "ALSO": "${secret:GH_TOKEN}"}}
]}}`)
	project = t.TempDir()
	writeFixture(t, filepath.Join(project, ".freecode", "settings.json"), `{"mcp": {"servers": [
  {"name": "api", "type": "local", "command": "api", "env": {"TOKEN": "${secret:GH_TOKEN}"}}
]}}`)
	return cfgPath, project
}

func writeFixture(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// holders returns the files under the roots that contain value.
func holders(t *testing.T, value string, roots ...string) []string {
	t.Helper()
	var found []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(value)) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// The CLI sets, lists and removes secrets by name; the value it is given
// reaches no output and no file but the store's, which only the user may
// read.
func TestSecretCommands(t *testing.T) {
	cfgPath, project := secretHome(t)
	home := os.Getenv("HOME")
	store := filepath.Join(home, ".freecode", "auth", "tokens.json")
	cli := []string{"--config", cfgPath, "secret"}
	var outputs []string
	do := func(stdin string, terminal bool, args ...string) (string, string, int) {
		t.Helper()
		out, errOut, code := runInput(t, stdin, terminal, append(cli, args...)...)
		outputs = append(outputs, out, errOut)
		return out, errOut, code
	}

	// Nothing set: ls says what the servers miss.
	out, errOut, code := do("", false, "ls", "--project", project)
	if code != 0 {
		t.Fatalf("ls: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"Missing (referenced, not set",
		"GH_TOKEN     used by github, tool, api (project): run `freecode secret set GH_TOKEN`",
		"MISSING_ONE  used by tool: run `freecode secret set MISSING_ONE`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ls before any set: no %q in\n%s", want, out)
		}
	}

	// --stdin: the first line, its line ending dropped.
	const value = "ghp-the-secret-value-42"
	out, errOut, code = do(value+"\r\nsecond line\n", false, "set", "GH_TOKEN", "--stdin", "--project", project)
	if code != 0 {
		t.Fatalf("set --stdin: exit %d\n%s", code, errOut)
	}
	want := "✓ Saved secret GH_TOKEN in " + store + "\n  Used by github, tool, api (project).\n"
	if out != want {
		t.Errorf("set --stdin printed\n%s\nwant\n%s", out, want)
	}

	// Not a terminal: the same without --stdin. A terminal: the prompt,
	// on stderr.
	if out, errOut, code = do("other-value-1\n", false, "set", "UNUSED"); code != 0 || !strings.Contains(out, "No configured server references ${secret:UNUSED} yet.") {
		t.Errorf("set from a pipe: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = do("typed-value-2\n", true, "set", "MISSING_ONE"); code != 0 || errOut != "Value for MISSING_ONE (not shown): \n" || !strings.Contains(out, "Used by tool.") {
		t.Errorf("set on a terminal: exit %d\nstdout:\n%s\nstderr:\n%q", code, out, errOut)
	}

	// Refused: an empty value, no value, a bad name; nothing is saved.
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"\n", []string{"set", "EMPTY", "--stdin"}, "the value is empty: secret EMPTY not set"},
		{"", []string{"set", "NONE"}, "no value on standard input: secret NONE not set"},
		{"v\n", []string{"set", "bad name"}, `secret name "bad name": use only A-Z a-z 0-9 _ . -`},
		{"", []string{"rm", "NEVER_SET"}, "no secret named NEVER_SET is set"},
	} {
		if _, errOut, code := do(tc.stdin, false, tc.args...); code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}

	out, errOut, code = do("", false, "ls", "--project", project)
	if code != 0 {
		t.Fatalf("ls: exit %d\n%s", code, errOut)
	}
	wantLs := fmt.Sprintf(`Secrets (names only: no value is ever shown):
  GH_TOKEN     %[1]s  used by github, tool, api (project)
  MISSING_ONE  %[1]s  used by tool
  UNUSED       %[1]s  used by no server
`, store)
	if diff := cmp.Diff(wantLs, out); diff != "" {
		t.Errorf("ls (-want +got):\n%s", diff)
	}
	out, _, _ = do("", false, "ls", "--json")
	var listed struct {
		Secrets []secretRow `json:"secrets"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	wantRows := []secretRow{
		{Name: "GH_TOKEN", Set: true, Where: store, UsedBy: []secretUser{{"github", config.ScopeUser}, {"tool", config.ScopeUser}}},
		{Name: "MISSING_ONE", Set: true, Where: store, UsedBy: []secretUser{{"tool", config.ScopeUser}}},
		{Name: "UNUSED", Set: true, Where: store, UsedBy: []secretUser{}},
	}
	if diff := cmp.Diff(wantRows, listed.Secrets); diff != "" {
		t.Errorf("ls --json, from a directory that is no project (-want +got):\n%s", diff)
	}

	// The value is in the store's file alone, which only the user reads.
	if diff := cmp.Diff([]string{store}, holders(t, value, home, project)); diff != "" {
		t.Errorf("files holding the value (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the store's file: %v, %v; want mode 0600", fi, err)
	}

	out, errOut, code = do("", false, "rm", "GH_TOKEN", "--project", project)
	if code != 0 || out != "✓ Removed secret GH_TOKEN\n  Still referenced by github, tool, api (project): they will not start until it is set again (`freecode secret set GH_TOKEN`).\n" {
		t.Errorf("rm: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code := do("", false, "rm", "GH_TOKEN"); code != 1 || !strings.Contains(errOut, "no secret named GH_TOKEN is set (`freecode secret ls` lists them)") {
		t.Errorf("rm again: exit %d, stderr %q", code, errOut)
	}
	if found := holders(t, value, home, project); len(found) != 0 {
		t.Errorf("the removed value is still in %s", found)
	}
	for _, o := range outputs {
		for _, v := range []string{value, "other-value-1", "typed-value-2"} {
			if strings.Contains(o, v) {
				t.Errorf("the CLI printed a secret's value:\n%s", o)
			}
		}
	}
}

// The built binary reads the value from a pipe, as a script would give it.
func TestSecretSetFromAPipe(t *testing.T) {
	cfgPath, _ := secretHome(t)
	cmd := exec.Command(freecodeBin, "--config", cfgPath, "secret", "set", "GH_TOKEN")
	cmd.Stdin = strings.NewReader("piped-secret-value\n")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	out := o.String() + e.String()
	if !strings.Contains(out, "✓ Saved secret GH_TOKEN in ") || strings.Contains(out, "piped-secret-value") {
		t.Errorf("output:\n%s", out)
	}
	home := os.Getenv("HOME")
	if diff := cmp.Diff([]string{filepath.Join(home, ".freecode", "auth", "tokens.json")}, holders(t, "piped-secret-value", home)); diff != "" {
		t.Errorf("files holding the value (-want +got):\n%s", diff)
	}
}

// Importing VS Code's mcp.json turns its password inputs into secrets: the
// config references ${secret:NAME}, the import says what to set, and on a
// terminal asks for each there and then, unseen; Enter skips one.
func TestImportSecrets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	src := filepath.Join(t.TempDir(), "mcp.json")
	writeFixture(t, src, `{
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "Perplexity API Key", "password": true},
    {"type": "promptString", "id": "gh token", "description": "GitHub token", "password": true},
    {"type": "promptString", "id": "region", "description": "Region"}
  ],
  "servers": {
    "perplexity": {"command": "npx", "args": ["-y", "server-perplexity-ask"], "env": {"PERPLEXITY_API_KEY": "${input:api-key}", "REGION": "${input:region}"}},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:gh token}"}}
  }
}`)
	store := filepath.Join(home, ".freecode", "auth", "tokens.json")

	cfgPath := filepath.Join(home, ".freecode", "config.json")
	out, errOut, code := runInput(t, "", false, "--config", cfgPath, "mcp", "import", "vscode", src, "--dry-run")
	if code != 0 || !strings.Contains(out, "The servers would read 2 secrets not set yet") || strings.Contains(out, "Enter each now") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errOut)
	}

	// Not a terminal: what to run.
	out, errOut, code = runInput(t, "", false, "--config", cfgPath, "mcp", "import", "vscode", src)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"The servers read 2 secrets not set yet (kept out of the config: in the OS keychain, else ~/.freecode/auth):\n" +
			"  api-key (Perplexity API Key, for perplexity): freecode secret set api-key\n" +
			"  gh_token (GitHub token, for github): freecode secret set gh_token\n" +
			"Until each is set, the servers that read it do not start.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import from a pipe: no\n%s\nin\n%s", want, out)
		}
	}
	if strings.Contains(errOut, "api-key") || !strings.Contains(errOut, "${input:region} is a prompt FreeCode cannot show; replaced by ${env:REGION}") {
		t.Errorf("warnings:\n%s", errOut)
	}
	p, _ := load(t, cfgPath).Server("perplexity")
	g, _ := load(t, cfgPath).Server("github")
	if p.Env["PERPLEXITY_API_KEY"] != "${secret:api-key}" || p.Env["REGION"] != "${env:REGION}" || g.Headers["Authorization"] != "Bearer ${secret:gh_token}" {
		t.Errorf("imported: env %v, headers of github %v", p.Env, g.Headers)
	}

	// A terminal: one typed, one skipped.
	cfgPath = filepath.Join(t.TempDir(), "config.json")
	const value = "pplx-typed-at-the-prompt"
	out, errOut, code = runInput(t, value+"\n\n", true, "--config", cfgPath, "mcp", "import", "vscode", src)
	if code != 0 {
		t.Fatalf("import on a terminal: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"Enter each now (not shown; Enter alone skips it):\n",
		"✓ Saved secret api-key in " + store + "\n",
		"  skipped gh_token: `freecode secret set gh_token` sets it later\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import on a terminal: no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "Value for api-key (Perplexity API Key, for perplexity, not shown): ") {
		t.Errorf("prompts:\n%s", errOut)
	}
	if strings.Contains(out+errOut, value) {
		t.Errorf("the import printed the value:\n%s%s", out, errOut)
	}
	if diff := cmp.Diff([]string{store}, holders(t, value, home, filepath.Dir(cfgPath))); diff != "" {
		t.Errorf("files holding the value (-want +got):\n%s", diff)
	}

	// Set already: nothing to offer.
	cfgPath = filepath.Join(t.TempDir(), "config.json")
	out, _, _ = runInput(t, "", true, "--config", cfgPath, "mcp", "import", "vscode", src)
	if strings.Contains(out, "api-key") || !strings.Contains(out, "  gh_token (GitHub token, for github): freecode secret set gh_token\n") {
		t.Errorf("import with api-key set:\n%s", out)
	}
}
