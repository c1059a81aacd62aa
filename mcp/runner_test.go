package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/config"
)

func TestRunnerOf(t *testing.T) {
	tests := []struct {
		argv []string
		want string // the runner's name, "" for none
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "npx"},
		{[]string{"/usr/local/bin/npx", "pkg"}, "npx"},
		{[]string{`C:\Program Files\nodejs\npx.cmd`, "pkg"}, "npx"},
		{[]string{"cmd", "/c", "npx", "-y", "pkg"}, "npx"},
		{[]string{"npm", "exec", "--", "pkg"}, "npm exec"},
		{[]string{"npm", "x", "pkg"}, "npm x"},
		{[]string{"npm", "run", "serve"}, ""},
		{[]string{"pnpm", "dlx", "pkg"}, "pnpm dlx"},
		{[]string{"pnpm", "install"}, ""},
		{[]string{"pnpx", "pkg"}, "pnpx"},
		{[]string{"bunx", "pkg"}, "bunx"},
		{[]string{"bun", "x", "pkg"}, "bun x"},
		{[]string{"bun", "server.ts"}, ""},
		{[]string{"uvx", "mcp-server-git"}, "uvx"},
		{[]string{"uv", "tool", "run", "mcp-server-git"}, "uv tool run"},
		{[]string{"uv", "run", "server.py"}, ""},
		{[]string{"deno", "run", "-A", "npm:pkg"}, "deno run"},
		{[]string{"yarn", "dlx", "pkg"}, "yarn dlx"},
		{[]string{"node", "server.js"}, ""},
		{[]string{"npx-wrapper"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		got := ""
		if r := runnerOf(tt.argv); r != nil {
			got = r.name
		}
		if got != tt.want {
			t.Errorf("runnerOf(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestParseNPMExec(t *testing.T) {
	tests := []struct {
		args     []string
		packages []string
		cache    string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, []string{"@modelcontextprotocol/server-filesystem"}, ""},
		{[]string{"--yes", "--prefer-offline", "pkg@1.2.3", "--port", "3"}, []string{"pkg@1.2.3"}, ""},
		{[]string{"-p", "a", "--package=b", "cmd", "x"}, []string{"a", "b"}, ""},
		{[]string{"--cache", "/c", "-y", "pkg"}, []string{"pkg"}, "/c"},
		{[]string{"--cache=/c", "--", "pkg", "-y"}, []string{"pkg"}, "/c"},
		{[]string{"-c", "echo hi"}, nil, ""},
		{[]string{"--registry", "https://r.example", "pkg"}, []string{"pkg"}, ""},
		{[]string{"-y"}, nil, ""},
	}
	for _, tt := range tests {
		e := parseNPMExec(tt.args)
		if diff := cmp.Diff(tt.packages, e.packages); diff != "" || e.cache != tt.cache {
			t.Errorf("parseNPMExec(%q): packages (-want +got):\n%s; cache %q, want %q", tt.args, diff, e.cache, tt.cache)
		}
	}
}

// fakeNPX returns a path named npx that runs the test binary: a package
// runner as FreeCode recognises one, whose "install" the test drives.
func fakeNPX(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	npx := filepath.Join(t.TempDir(), "npx")
	if err := os.Symlink(exe, npx); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	return npx
}

// installPipe returns a named pipe for the install=P mode, and a function
// that ends the fake install.
func installPipe(t *testing.T) (string, func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "install")
	if err := mkfifo(path); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := func() {
		// Opening the write end waits for the server to open the read end.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	}
	return path, done
}

// runnerSrv is a server entry run by the fake npx, with a timeout far
// shorter than its install.
func runnerSrv(t *testing.T, args ...string) config.Server {
	return config.Server{
		Name: "fs", Type: config.TypeLocal, Enabled: true, Scope: "user",
		Command: append([]string{fakeNPX(t), "-y", "@example/server"}, args...),
		Env:     map[string]string{testServerEnv: "1"},
		Timeout: 2 * time.Second,
	}
}

// TestRunnerInstallOutlastsTimeout: a server run by npx whose install lasts
// past the server's timeout is not failed at the timeout; the user is told
// it installs, and once the install is done the server connects.
func TestRunnerInstallOutlastsTimeout(t *testing.T) {
	pipe, finish := installPipe(t)
	notices := make(chan string, 8)
	c := newTestConnOpts(t, runnerSrv(t, "install="+pipe), nil, &ConnOptions{Environ: testEnviron, NoRetry: true,
		OnNotice: func(msg string) { notices <- msg }})
	errc := make(chan error, 1)
	go func() { errc <- c.Start(t.Context()) }()
	select {
	case err := <-errc:
		t.Fatalf("Start returned while npx was installing: %v", err)
	case msg := <-notices:
		if !strings.Contains(msg, "npx is still installing") {
			t.Errorf("notice = %q", msg)
		}
	}
	finish()
	if err := <-errc; err != nil {
		t.Fatalf("Start after the install: %v", err)
	}
	if st := c.Status(); st.State != StateConnected || st.ToolCount == 0 {
		t.Errorf("status = %v with %d tools", st.State, st.ToolCount)
	}
}

// TestRunnerStoppedWithSIGTERM: a runner whose connect is given up while it
// installs (here: the command was interrupted) gets SIGTERM, and time to
// undo its install, before anything kills it.
func TestRunnerStoppedWithSIGTERM(t *testing.T) {
	pipe, _ := installPipe(t)
	rolledBack := filepath.Join(t.TempDir(), "rolled-back")
	notices := make(chan string, 8)
	c := newTestConnOpts(t, runnerSrv(t, "install="+pipe, "rollback="+rolledBack), nil, &ConnOptions{Environ: testEnviron, NoRetry: true,
		OnNotice: func(msg string) { notices <- msg }})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- c.Start(ctx) }()
	select {
	case err := <-errc:
		t.Fatalf("Start returned while npx was installing: %v", err)
	case <-notices:
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("Start succeeded, interrupted mid-install")
	}
	if b, err := os.ReadFile(rolledBack); err != nil || string(b) != "rolled back" {
		t.Errorf("the runner was not stopped with SIGTERM mid-install (%q, %v): a SIGKILL leaves npm's cache half written", b, err)
	}
}
