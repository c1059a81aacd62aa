package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/browserfile"
	"github.com/freecode/freecode/internal/oauthtest"
)

// testBrowserEnv makes the test binary a browser (TestMain): it loads the
// URL it is given and follows the redirects, back to the sign-in's
// loopback callback, as a browser does when the user consents at once. As
// $BROWSER it is what the CLI opens a sign-in page with.
const testBrowserEnv = "FREECODE_TEST_BROWSER"

func runTestBrowser(arg string) int {
	// It is given the file: URL of a page that sends it on to the
	// sign-in page (oauth.OpenBrowser).
	u, err := browserfile.Follow(arg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		return 1
	}
	resp, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		return 1
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "test browser: %s: %s\n", resp.Status, body)
		return 1
	}
	return 0
}

// stepUpEnv is a remote server whose tools/call needs the scope "write" on
// top of the "read" its sign-in asks for (a 403 insufficient_scope
// otherwise), signed in to already, and how often its tool ran.
type stepUpEnv struct {
	cfg  string
	as   *oauthtest.Server
	runs atomic.Int32
}

func newStepUpEnv(t *testing.T) *stepUpEnv {
	t.Helper()
	t.Setenv("FREECODE_TOKEN_STORE", "file")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("BROWSER", "")
	e := &stepUpEnv{cfg: filepath.Join(t.TempDir(), "config.json")}
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "protected", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{Name: "write", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			e.runs.Add(1)
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "wrote"}}}, nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	e.as = oauthtest.New(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", ChallengeScopes: []string{"read"}, WriteScope: "write"},
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil))
	mustRun(t, "--config", e.cfg, "mcp", "add", "gh", "remote", e.as.MCPURL, "--transport", "http")

	// Signed in for "read", as `mcp login` does.
	loginNoBrowser(t, e.cfg, "gh")
	return e
}

// scopesAsked returns the scope of each authorization request, sorted.
func (e *stepUpEnv) scopesAsked() []string {
	var out []string
	for _, ev := range e.as.Events("authorize") {
		_, s, _ := strings.Cut(ev, "scope=")
		s, _, _ = strings.Cut(s, " resource=")
		words := strings.Fields(strings.Trim(s, `"`))
		slices.Sort(words)
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// A call the server refuses for want of access, with nobody to sign in
// for it, was not run: the result says so, and what the server asks for,
// and the CLI says how to grant it.
func TestToolsCallStepUpNobodyToAsk(t *testing.T) {
	e := newStepUpEnv(t)
	out, errOut, code := run(t, "--config", e.cfg, "tools", "--project", t.TempDir(), "call", "mcp__gh__write", "--yes")
	if code != 1 || !strings.Contains(out, `mcp__gh__write was not run: server "gh" refused it`) || !strings.Contains(out, `scope "read write"`) ||
		strings.Contains(out, "may or may not have run") {
		t.Errorf("exit %d\nstdout: %s\nwant a result saying the call was not run and what access the server asks for", code, out)
	}
	if !strings.Contains(errOut, "To grant it, run the call again from a terminal or with $BROWSER set") || !strings.Contains(errOut, "freecode mcp login gh") {
		t.Errorf("stderr: %s\nwant how to grant the access", errOut)
	}
	if n := e.runs.Load(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
}

// With $BROWSER, the CLI signs in for the access the server asks for in
// the middle of the call, as `mcp login` signs in, and the call then runs.
func TestToolsCallStepUpWithBrowser(t *testing.T) {
	e := newStepUpEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(testBrowserEnv, "1")
	t.Setenv("BROWSER", exe)
	cmd := newRootCmd()
	var o, stderr bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{"--config", e.cfg, "tools", "--project", t.TempDir(), "call", "mcp__gh__write", "--yes"})
	if err := cmd.Execute(); err != nil || strings.TrimSpace(o.String()) != "wrote" {
		t.Fatalf("tools call: %v\nstdout: %s\nstderr: %s", err, &o, &stderr)
	}
	if !strings.Contains(stderr.String(), `The MCP server "gh" asks for more access for this call`) {
		t.Errorf("stderr: %s\nwant the sign-in shown", &stderr)
	}
	if n := e.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	if got, want := e.scopesAsked(), []string{"read", "read write"}; !slices.Equal(got, want) {
		t.Errorf("scopes asked: %q, want %q", got, want)
	}
	// The sign-in for more access was kept: the next call needs none.
	t.Setenv("BROWSER", "")
	out, errOut, code := run(t, "--config", e.cfg, "tools", "--project", t.TempDir(), "call", "mcp__gh__write", "--yes")
	if code != 0 || strings.TrimSpace(out) != "wrote" || len(e.scopesAsked()) != 2 {
		t.Errorf("the next call: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
