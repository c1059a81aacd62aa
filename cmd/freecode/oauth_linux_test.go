//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/browserfile"
	"github.com/freecode/freecode/internal/oauthtest"
)

// otherGetEnv makes the test binary the other local user's HTTP client
// (runOtherGet) instead of the tests.
const otherGetEnv = "FREECODE_TEST_OTHER_GET"

func init() {
	if os.Getenv(otherGetEnv) == "1" {
		os.Exit(runOtherGet(os.Args[len(os.Args)-1]))
	}
}

// runOtherGet GETs u and prints the status code.
func runOtherGet(u string) int {
	resp, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	return 0
}

// otherUserGet GETs u as otherUID, from a copy of the test binary that
// user can run, and returns the status code.
func otherUserGet(t *testing.T, u string) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "freecode-other")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "get")
	if err := os.Link(exe, bin); err != nil {
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{dir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^$", u)
	cmd.Dir = "/"
	cmd.Env = []string{otherGetEnv + "=1", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GET as uid %d: %v\n%s", otherUID, err, stderr.String())
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("GET as uid %d printed %q", otherUID, out)
	}
	return code
}

// Issue 30: the OAuth sign-in puts nothing on a command line that another
// local user can use. A watcher running as another uid polls every
// process's argv and environment while `freecode mcp login` has a
// $BROWSER open, as a browser stays, and reads every file named there: it
// never sees the authorization request's state (with which it could answer
// the loopback callback first, with an error or with a code of its own
// account's), and it saw the page the browser was given and could not
// read it. The page (0600, in a 0700 directory) sends the browser on to
// the authorization server, and is gone once the sign-in is done. Given
// the state all the same, that user's answer to the callback is refused
// (its socket is another user's) and the user's own sign-in goes on.
func TestOAuthSignInUnreadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("the watcher runs as another local user (uid %d), which only root can start; run as root (CI does)", otherUID)
	}
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	home := t.TempDir()
	t.Setenv("HOME", home)
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "protected", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "you"}}}, nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	as := oauthtest.New(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"},
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil))
	cfg := filepath.Join(t.TempDir(), "config.json")
	mustRun(t, "--config", cfg, "mcp", "add", "gh", "remote", as.MCPURL, "--transport", "http")

	w := startWatcher(t)
	rec := t.TempDir()
	browser := filepath.Join(rec, "browser")
	script := `#!/bin/sh
printf '%s\n' "$@" >"$0.argv"
env >"$0.env"
echo $$ >"$0.pid.tmp" && mv "$0.pid.tmp" "$0.pid"
i=0
while [ ! -e "$0.stop" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
`
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", browser)
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs([]string{"--config", cfg, "mcp", "login", "gh"})
		done <- cmd.Execute()
	}()
	var browserPID int
	for deadline := time.Now().Add(remoteHangGuardCLI); ; time.Sleep(20 * time.Millisecond) { // a hang guard only
		if b, err := os.ReadFile(browser + ".pid"); err == nil {
			browserPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		select {
		case err := <-done:
			t.Fatalf("mcp login ended before $BROWSER ran: %v\n%s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("$BROWSER did not run")
		}
	}
	stopBrowserAtCleanup(t, browser, browserPID)
	// The browser is open; the watcher looks twice more, then reports.
	rep := w.report(t, 2)
	t.Logf("the watcher found %d URLs and %d words, read %v, was denied %d files", len(rep.URLs), len(rep.Codes), rep.Read, len(rep.Denied))

	// What the browser was given: the page's file: URL, and nothing else.
	argv, err := os.ReadFile(browser + ".argv")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(string(argv))
	if len(args) != 1 {
		t.Fatalf("$BROWSER was given %q, want one file: URL", args)
	}
	authURL, err := browserfile.Follow(args[0])
	if err != nil {
		t.Fatalf("the page the browser was given: %v", err)
	}
	au, err := url.Parse(authURL)
	if err != nil || !strings.HasPrefix(authURL, as.Issuer) {
		t.Fatalf("the browser is sent to %q, want the authorization server's page", authURL)
	}
	state, callback := au.Query().Get("state"), au.Query().Get("redirect_uri")
	if state == "" || callback == "" {
		t.Fatalf("the authorization URL %s has no state or redirect_uri", authURL)
	}
	for _, found := range append(rep.URLs, rep.Codes...) {
		if strings.Contains(found, state) {
			t.Errorf("the other user read the sign-in's state in %q", found)
		}
	}
	if env, _ := os.ReadFile(browser + ".env"); strings.Contains(string(env), state) {
		t.Errorf("the browser's environment holds the state:\n%s", env)
	}
	var page string
	if fu, err := url.Parse(args[0]); err != nil || fu.Scheme != "file" {
		t.Errorf("$BROWSER was given %q, want the file: URL of a page", args[0])
	} else {
		page = fu.Path
		if _, ok := rep.Denied[page]; !ok {
			t.Errorf("the watcher did not see %s, or could read it: denied %v, read %v", page, rep.Denied, rep.Read)
		}
		for path, want := range map[string]os.FileMode{page: 0o600, filepath.Dir(page): 0o700 | os.ModeDir} {
			if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
				t.Errorf("%s: %v (%v), want %v", path, fi.Mode(), err, want)
			}
		}
	}

	// The other user, given the state anyway, answers the callback first:
	// refused, and the sign-in waits on.
	if code := otherUserGet(t, callback+"?error=access_denied&state="+url.QueryEscape(state)); code != http.StatusForbidden {
		t.Errorf("the other user's answer to the callback: %d, want 403", code)
	}

	// The user's browser signs in.
	if err := oauthtest.NewBrowser(t).Open(t.Context(), authURL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mcp login: %v\n%s", err, errOut.String())
		}
	case <-time.After(remoteHangGuardCLI):
		t.Fatalf("mcp login did not end:\n%s", errOut.String())
	}
	if !strings.Contains(out.String(), `Signed in to "gh"`) {
		t.Errorf("mcp login printed:\n%s\n%s", out.String(), errOut.String())
	}
	if page != "" {
		if _, err := os.Stat(page); !os.IsNotExist(err) {
			t.Errorf("the page is still there once the sign-in ended: %v", err)
		}
	}
}
