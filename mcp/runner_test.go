package mcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// brokenCache makes the npx install directory of pkg in a fresh npm cache
// look half written (a node_modules), and returns the cache and directory.
func brokenCache(t *testing.T, name string) (cache, dir string) {
	t.Helper()
	cache = t.TempDir()
	dir = filepath.Join(cache, "_npx", name)
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", "@example", "server"), 0o700); err != nil {
		t.Fatal(err)
	}
	return cache, dir
}

func starts(t *testing.T, file string) int {
	t.Helper()
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// TestRunnerBrokenNPXCacheRepaired: a server run by npx that exits on
// ERR_MODULE_NOT_FOUND from its half-written install directory has the
// directory removed and is started once more, and the user is told.
func TestRunnerBrokenNPXCacheRepaired(t *testing.T) {
	hash, _ := npxHash([]string{"@example/server"}, "")
	cache, dir := brokenCache(t, hash)
	count := filepath.Join(t.TempDir(), "starts")
	srv := runnerSrv(t, "npxbroken="+dir, "starts="+count)
	srv.Env["npm_config_cache"] = cache
	var notices []string
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true,
		OnNotice: func(msg string) { notices = append(notices, msg) }})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("Start on a half-written npx cache: %v", err)
	}
	if n := starts(t, count); n != 2 {
		t.Errorf("the server started %d times, want 2: the broken one, then after the repair", n)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the half-written install directory is still there (%v)", err)
	}
	if left, _ := os.ReadDir(filepath.Join(cache, "_npx")); len(left) != 0 {
		t.Errorf("left in the npx cache: %v", left)
	}
	said := strings.Join(notices, "\n")
	for _, want := range []string{dir, "half written", "Cannot find package 'zod'", "installs the package again"} {
		if !strings.Contains(said, want) {
			t.Errorf("notices %q do not say %q", notices, want)
		}
	}
}

// TestRunnerBrokenNPXCacheNotOurs: an install directory node names that is
// not named for this server's package is left alone; the error says to
// delete it.
func TestRunnerBrokenNPXCacheNotOurs(t *testing.T) {
	cache, dir := brokenCache(t, "0123456789abcdef")
	count := filepath.Join(t.TempDir(), "starts")
	srv := runnerSrv(t, "npxbroken="+dir, "starts="+count)
	srv.Env["npm_config_cache"] = cache
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true})
	err := c.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "delete "+dir+" and start the server again") {
		t.Fatalf("Start = %v, want it to say which directory to delete", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a directory not named for this server's package was touched: %v", err)
	}
	if n := starts(t, count); n != 1 {
		t.Errorf("the server started %d times, want 1", n)
	}
}

// TestRunnerBrokenNPXCacheStillBroken: a package that fails the same way
// after a fresh install is started twice, not more, and the error says the
// package itself may be broken.
func TestRunnerBrokenNPXCacheStillBroken(t *testing.T) {
	hash, _ := npxHash([]string{"@example/server"}, "")
	cache, dir := brokenCache(t, hash)
	count := filepath.Join(t.TempDir(), "starts")
	srv := runnerSrv(t, "npxbroken="+dir, "alwaysbroken", "starts="+count)
	srv.Env["npm_config_cache"] = cache
	c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: testEnviron, NoRetry: true})
	err := c.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "the package itself may be broken") {
		t.Fatalf("Start = %v, want it to say the package may be broken", err)
	}
	if n := starts(t, count); n != 2 {
		t.Errorf("the server started %d times, want 2", n)
	}
}

// TestInteropNPX runs a real npx on an empty npm cache, offline, with a
// package packed from testdata/npx-probe (an MCP server without
// dependencies): the first start installs it where FreeCode computes npx
// installs it. Then a file of the installed package is deleted, as an npx
// killed mid-install leaves it, and the next start repairs the cache.
func TestInteropNPX(t *testing.T) {
	npx, err := exec.LookPath("npx")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npx is not on PATH")
		}
		t.Skip("npx is not on PATH")
	}
	home, cache, work := t.TempDir(), t.TempDir(), t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	src, err := filepath.Abs("testdata/npx-probe")
	if err != nil {
		t.Fatal(err)
	}
	pack := exec.Command("npm", "pack", "--offline", "--pack-destination", work, src)
	pack.Env = append(env, "npm_config_cache="+cache, "npm_config_update_notifier=false")
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tgz := filepath.Join(work, "freecode-npx-probe-1.0.0.tgz")
	srv := config.Server{
		Name: "probe", Type: config.TypeLocal, Enabled: true, Scope: "user",
		Command: []string{npx, "-y", "--offline", "--package=" + tgz, "freecode-npx-probe"},
		Env:     map[string]string{"npm_config_cache": cache, "npm_config_update_notifier": "false"},
		Timeout: hangGuard,
	}
	environ := func() []string { return env }
	start := func() (*Conn, []string) {
		var notices []string
		c := newTestConnOpts(t, srv, nil, &ConnOptions{Environ: environ, NoRetry: true,
			OnNotice: func(msg string) { notices = append(notices, msg) }})
		if err := c.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v\nstderr: %q", err, c.Status().StderrTail)
		}
		if got := c.Status().ToolCount; got != 1 {
			t.Errorf("tools = %d, want 1", got)
		}
		c.Close()
		return c, notices
	}
	start()
	hash, ok := npxHash([]string{tgz}, "")
	installed := filepath.Join(cache, "_npx", hash, "node_modules", "freecode-npx-probe")
	if _, err := os.Stat(filepath.Join(installed, "lib.mjs")); !ok || err != nil {
		entries, _ := os.ReadDir(filepath.Join(cache, "_npx"))
		t.Fatalf("npx did not install where FreeCode computes it does (%s): %v; _npx holds %v", installed, err, entries)
	}

	if err := os.Remove(filepath.Join(installed, "lib.mjs")); err != nil {
		t.Fatal(err)
	}
	_, notices := start()
	if said := strings.Join(notices, "\n"); !strings.Contains(said, "was half written") || !strings.Contains(said, filepath.Join(cache, "_npx", hash)) {
		t.Errorf("notices %q do not tell of the repair", notices)
	}
	if _, err := os.Stat(filepath.Join(installed, "lib.mjs")); err != nil {
		t.Errorf("npx did not install the package again: %v", err)
	}
}
