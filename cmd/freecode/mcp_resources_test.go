package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// everythingConfig adds server-everything (stdio) to a new config file and
// returns the --config and --project arguments.
func everythingConfig(t *testing.T) []string {
	t.Helper()
	script := filepath.Join(npmDir(t), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "everything", "local", "--timeout", "30s", "--", "node", script, "stdio")
	return []string{"--config", path}
}

// `freecode mcp resources|prompts` on server-everything: listed, read and
// got, with what the server wrote escaped.
func TestInteropResourcesAndPrompts(t *testing.T) {
	cfg := everythingConfig(t)
	project := []string{"--project", t.TempDir()}
	out := mustRun(t, append(append(cfg, "mcp", "resources", "everything"), project...)...)
	if !strings.Contains(out, "demo://resource/static/document/architecture.md") || !strings.Contains(out, "text/markdown") {
		t.Errorf("resources:\n%s", out)
	}
	out = mustRun(t, append(append(cfg, "mcp", "resources", "everything", "--read", "demo://resource/static/document/startup.md"), project...)...)
	if !strings.Contains(out, "# Everything Server - Startup Process") {
		t.Errorf("read:\n%s", out)
	}
	out = mustRun(t, append(append(cfg, "mcp", "prompts", "everything"), project...)...)
	if !strings.Contains(out, "args-prompt") || !strings.Contains(out, "city*, state") {
		t.Errorf("prompts:\n%s", out)
	}
	out = mustRun(t, append(append(cfg, "mcp", "prompts", "everything", "--get", "args-prompt", "--args", `{"city":"Paris"}`), project...)...)
	if strings.TrimSpace(out) != "user: What's weather in Paris?" {
		t.Errorf("prompt:\n%s", out)
	}
	if _, errOut, code := run(t, append(append(cfg, "mcp", "resources", "nope"), project...)...); code == 0 || !strings.Contains(errOut, `no enabled server named "nope"`) {
		t.Errorf("unknown server: exit %d\n%s", code, errOut)
	}
}

// On a terminal, `freecode tools call` asks the server's elicitation field
// by field: Enter takes a default, the answer is sent on "y". Without a
// terminal the elicitation is declined. Sampling is refused with a message
// that says why.
func TestInteropToolsCallElicitation(t *testing.T) {
	cfg := everythingConfig(t)
	call := func(terminal bool, stdin, tool, args string) (string, string) {
		t.Helper()
		old := isTerminal
		isTerminal = func(io.Reader) bool { return terminal }
		defer func() { isTerminal = old }()
		cmd := newRootCmd()
		var o, e strings.Builder
		cmd.SetOut(&o)
		cmd.SetErr(&e)
		cmd.SetIn(strings.NewReader(stdin))
		cmd.SetArgs(append(cfg, "tools", "--project", t.TempDir(), "call", "mcp__everything__"+tool, "--args", args, "--yes"))
		_ = cmd.Execute()
		return o.String(), e.String()
	}
	// name, then Enter for every other field of the form (14 in all), then y.
	answers := "Ada Lovelace\n" + strings.Repeat("\n", 13) + "y\n"
	out, errOut := call(true, answers, "trigger-elicitation-request", `{}`)
	if !strings.Contains(out, "Name: Ada Lovelace") || !strings.Contains(out, "Favorite Integer: 42") {
		t.Errorf("answered on the terminal:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if !strings.Contains(errOut, `Server "everything" asks: Please provide inputs`) || !strings.Contains(errOut, "[42]") {
		t.Errorf("the form as shown:\n%s", errOut)
	}
	// Ctrl-D cancels.
	if out, _ := call(true, "", "trigger-elicitation-request", `{}`); !strings.Contains(out, "cancel") {
		t.Errorf("cancelled on the terminal:\n%s", out)
	}
}

// Without a terminal nobody can be asked: the elicitation tool is not even
// offered (the capability is not declared), and a server's sampling would
// be refused.
func TestInteropToolsCallNoTerminal(t *testing.T) {
	cfg := everythingConfig(t)
	out, errOut, code := run(t, append(cfg, "tools", "--project", t.TempDir(), "call", "mcp__everything__trigger-elicitation-request", "--yes")...)
	if code == 0 || !strings.Contains(out+errOut, "trigger-elicitation-request") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
