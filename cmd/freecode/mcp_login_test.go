package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/mcp"
)

func TestMCPAddOAuthFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	out := mustRun(t, "--config", path, "mcp", "add", "gh", "remote", "https://mcp.example.com/mcp",
		"--client-id", "Iv1.abc", "--client-secret", "s3cr3t-literal", "--scope", "repo", "--scope", "read:org", "--callback-port", "33418")
	if strings.Contains(out, "s3cr3t-literal") || !strings.Contains(out, "oauth:     client id Iv1.abc, client secret ***, scopes repo read:org, callback port 33418") {
		t.Errorf("add printed:\n%s", out)
	}
	srv, _ := load(t, path).Server("gh")
	want := &config.OAuth{ClientID: "Iv1.abc", ClientSecret: "s3cr3t-literal", Scopes: []string{"repo", "read:org"}, CallbackPort: 33418}
	if !srv.OAuth.Equal(want) {
		t.Errorf("the file's oauth: %+v, want %+v", srv.OAuth, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"l", "local", "node x.js", "--client-id", "a"}, "are for remote servers"},
		{[]string{"r", "remote", "https://h/mcp", "--client-secret", "x"}, "a client secret needs the clientId it belongs to"},
		{[]string{"r", "remote", "https://h/mcp", "--client-metadata-url", "http://h/c.json"}, "want an https URL with a path"},
	} {
		_, errOut, code := run(t, append([]string{"--config", path, "mcp", "add"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("mcp add %s: exit %d, %q; want an error saying %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
}

// urlWatcher is a command's stderr that hands over the first sign-in URL
// printed on it.
type urlWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	url  chan string
	sent bool
}

var printedURL = regexp.MustCompile(`(?m)^  (http://\S+)$`)

func (w *urlWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := printedURL.FindStringSubmatch(w.buf.String()); m != nil && !w.sent {
		w.sent = true
		w.url <- m[1]
	}
	return len(p), nil
}

func (w *urlWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestMCPLoginLogout(t *testing.T) {
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
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	mustRun(t, "--config", path, "mcp", "add", "gh", "remote", as.MCPURL, "--transport", "http")

	_, errOut, code := run(t, "--config", path, "mcp", "start", "gh")
	if code != 1 || !strings.Contains(errOut, "sign-in required") || !strings.Contains(errOut, "sign in with: freecode mcp login gh") {
		t.Errorf("mcp start before signing in: exit %d\n%s\nwant a failure that says how to sign in", code, errOut)
	}

	// `mcp login --no-browser` prints the URL; the user opens it.
	stdout, stderr := loginNoBrowser(t, path, "gh")
	// The user's, whatever --config names: never beside the config.
	tokens := filepath.Join(home, ".freecode", "auth", "tokens.json")
	if want := fmt.Sprintf("✓ Signed in to \"gh\"; connected with 1 tool\n  tokens kept in %s (readable by you only)\n", tokens); stdout != want {
		t.Errorf("mcp login printed:\n%s\nwant:\n%s", stdout, want)
	}
	if fi, err := os.Stat(tokens); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the token file: %v, %v; want mode 0600", fi, err)
	}
	for _, s := range as.Secrets() {
		noSecretUnder(t, s, dir)
	}
	printed := stdout + stderr

	out := mustRun(t, "--config", path, "mcp", "start", "gh")
	if !strings.HasPrefix(out, "✓ Server \"gh\" started with 1 tool") {
		t.Errorf("mcp start with the stored sign-in:\n%s", out)
	}
	printed += out
	if got := mustRun(t, "--config", path, "mcp", "logout", "gh"); got != "✓ Signed out of \"gh\": its tokens were revoked by the authorization server and deleted\n" {
		t.Errorf("mcp logout printed %q", got)
	}
	if got := mustRun(t, "--config", path, "mcp", "logout", "gh"); got != "\"gh\" had no stored sign-in\n" {
		t.Errorf("mcp logout again printed %q", got)
	}
	if _, errOut, code := run(t, "--config", path, "mcp", "start", "gh"); code != 1 || !strings.Contains(errOut, "sign-in required") {
		t.Errorf("mcp start after logout: exit %d\n%s", code, errOut)
	}
	for _, s := range as.Secrets() {
		if strings.Contains(printed, s) {
			t.Errorf("the CLI printed the secret %s…", s[:min(len(s), 12)])
		}
	}
	if _, errOut, code := run(t, "--config", path, "mcp", "login", "nope"); code == 0 || !strings.Contains(errOut, `no server named "nope"`) {
		t.Errorf("mcp login of an unknown server: exit %d, %q", code, errOut)
	}
}

// TestMCPLogoutNotRevoked: `mcp logout` deletes the tokens whatever the
// authorization server does, and says when they stay valid there.
func TestMCPLogoutNotRevoked(t *testing.T) {
	tests := []struct {
		name       string
		setup      oauthtest.Setup
		down       bool
		wantStderr string
	}{
		{
			"no revocation endpoint", oauthtest.Setup{PRM: "header", ASMeta: "oauth", NoRevocation: true}, false,
			"note: the authorization server offers no token revocation, so they stay valid there until they expire\n",
		},
		{
			"the revocation endpoint down", oauthtest.Setup{PRM: "header", ASMeta: "oauth"}, true,
			"warning: the authorization server did not revoke them, so they stay valid there until they expire: " +
				"the authorization server refused to revoke the refresh token (503); " +
				"the authorization server refused to revoke the access token (503)\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FREECODE_TOKEN_STORE", "file")
			home := t.TempDir()
			t.Setenv("HOME", home)
			server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "protected", Version: "1"}, nil)
			as := oauthtest.New(t, tc.setup, mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil))
			t.Cleanup(func() {
				for ss := range server.Sessions() {
					ss.Close()
				}
			})
			path := filepath.Join(t.TempDir(), "config.json")
			mustRun(t, "--config", path, "mcp", "add", "gh", "remote", as.MCPURL, "--transport", "http")
			srv, _ := load(t, path).Server("gh")
			conn := mcp.NewConn(srv, &mcp.ConnOptions{NoRetry: true, Auth: authOptions()})
			ctx, cancel := context.WithTimeout(context.Background(), remoteHangGuardCLI)
			defer cancel()
			err := conn.Login(ctx, oauthtest.NewBrowser(t).Open)
			conn.Close()
			if err != nil {
				t.Fatal(err)
			}
			as.SetRevocationDown(tc.down)
			out, errOut, code := run(t, "--config", path, "mcp", "logout", "gh")
			if out != "✓ Signed out of \"gh\": its tokens were deleted\n" || errOut != tc.wantStderr || code != 0 {
				t.Errorf("mcp logout: exit %d\nstdout: %q\nstderr: %q\nwant stderr %q", code, out, errOut, tc.wantStderr)
			}
			data, err := os.ReadFile(filepath.Join(home, ".freecode", "auth", "tokens.json"))
			if err != nil {
				t.Fatal(err)
			}
			// Without a token issued the loop below would check nothing.
			if len(as.Tokens()) == 0 {
				t.Fatal("the authorization server issued no token to look for")
			}
			for _, s := range as.Tokens() {
				if strings.Contains(string(data), s) {
					t.Errorf("a token is still stored after mcp logout: %s…", s[:min(len(s), 12)])
				}
				if strings.Contains(out+errOut, s) {
					t.Errorf("mcp logout printed the token %s…", s[:min(len(s), 12)])
				}
			}
		})
	}
}

// remoteHangGuardCLI bounds a wait that would otherwise hang on a bug; it
// is never what a test asserts.
const remoteHangGuardCLI = time.Minute

// loginNoBrowser runs `freecode mcp login name --no-browser` with the
// config at path, opens the URL it prints as the user would, and returns
// what it printed on stdout and stderr once it is done.
func loginNoBrowser(t *testing.T, path, name string) (stdout, stderr string) {
	t.Helper()
	browser := oauthtest.NewBrowser(t)
	errOut := &urlWatcher{url: make(chan string, 1)}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetOut(&out)
		cmd.SetErr(errOut)
		cmd.SetArgs([]string{"--config", path, "mcp", "login", name, "--no-browser"})
		done <- cmd.Execute()
	}()
	select {
	case u := <-errOut.url:
		if err := browser.Open(context.Background(), u); err != nil {
			t.Fatal(err)
		}
	case err := <-done:
		t.Fatalf("mcp login ended before printing a URL: %v\n%s", err, errOut)
	case <-time.After(remoteHangGuardCLI):
		t.Fatalf("no URL printed:\n%s", errOut)
	}
	if err := <-done; err != nil {
		t.Fatalf("mcp login: %v\n%s", err, errOut)
	}
	return out.String(), errOut.String()
}
