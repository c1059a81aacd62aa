package workspace

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/oauthtest"
)

// TestLoginKeepsTokensInTheUsersDir: a remote server that needs a sign-in
// is needsAuth, not failed; Login signs in through the given opener and
// connects it; the tokens are kept in the user's ~/.freecode/auth, never
// beside the workspace's config file nor under its project, which a
// repository may control; Logout stops it, deletes them and has them
// revoked.
func TestLoginKeepsTokensInTheUsersDir(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file") // no keychain in tests
	home := t.TempDir()
	t.Setenv("HOME", home)
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "1"}, nil)
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

	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{{"name": "gh", "type": "remote", "url": as.MCPURL, "transport": "http"}}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	// The server may be needsAuth before the subscription: look, then
	// wait for it if not.
	if st, _ := w.status("gh"); st.State.String() != "needsAuth" {
		await(t, sub, "gh needing a sign-in", statusIs("gh", "needsAuth"))
	}

	browser := oauthtest.NewBrowser(t)
	st, err := w.Login(t.Context(), "gh", browser.Open)
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if st.State.String() != "connected" || st.ToolCount != 1 || browser.Opens() != 1 {
		t.Errorf("after Login: state %v, %d tools, browser opened %d times; want connected, 1, 1", st.State, st.ToolCount, browser.Opens())
	}
	// Without a token issued the looks for secrets below would check
	// nothing.
	if len(as.Tokens()) == 0 {
		t.Fatal("the authorization server issued no token to look for")
	}
	tokens := filepath.Join(home, ".freecode", "auth", "tokens.json")
	for p, want := range map[string]os.FileMode{tokens: 0o600, filepath.Dir(tokens): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", p, fi, err, want)
		}
	}
	for _, dir := range []string{e.dir, e.root} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			for _, s := range as.Secrets() {
				if strings.Contains(string(data), s) {
					t.Errorf("%s holds a secret of the sign-in", path)
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if r := call(t, w, "mcp__gh__whoami", `{}`, allowOnce); r.IsError || r.Text() != "you" {
		t.Errorf("call after sign-in: %v %q", r.IsError, r.Text())
	}

	st, err = w.Logout(t.Context(), "gh")
	if err != nil || st.State.String() != "stopped" {
		t.Errorf("Logout: %v, state %v; want stopped", err, st.State)
	}
	data, err := os.ReadFile(tokens)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	// The client registration stays for the next sign-in; the user's
	// tokens go.
	for _, s := range as.Tokens() {
		if strings.Contains(string(data), s) {
			t.Errorf("a token is still stored after Logout: %s…", s[:min(len(s), 12)])
		}
	}
	if len(as.Events("revoke refresh")) != 1 {
		t.Errorf("Logout did not revoke the refresh token: %q", as.Events("revoke"))
	}
}
